import MappingFiles
import Sampling
import Hosting
import Controls
import Engine
import Foundation
import Testing

/// A scene switch while a note is held, through the real sampler: the held
/// note sounds on (no cut, no reload), and after the note-offs everything
/// falls silent (nothing sticks).
@Suite struct SceneSwitchRenderTests {
    static let mapping = """
        controls: []
        scenes:
          - name: Organ
            channels: { 1: { bank: 0, program: 19 } }
          - name: Piano
            channels: { 1: { bank: 0, program: 0 } }
            set: { synth.reverb.level: 0.2 }
        """

    @Test func switchWhileHeld_noteSoundsOn_thenEverythingStops() throws {
        let sampler = try Sampler(soundFont: timGM, sampleRate: 48_000, options: SamplerOptions())
        let renderer = Renderer(instrument: sampler.instrument, eventCapacity: 4096)
        renderer.prepare(sampleRate: 48_000, maxFrames: 512)
        let events = EventQueueProducer(renderer.events)
        let routing = ParameterRouting(parameters: renderer.parameters, events: events, transport: renderer.transport)
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.mapping))
        hub.subscribe { routing.apply($0) }

        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1024)
        defer { output.deallocate() }
        /// The peak over `blocks` blocks of 512 frames.
        func peak(_ blocks: Int) -> Float {
            var p: Float = 0
            for _ in 0..<blocks {
                renderer.render(frames: 512, into: output)
                for x in output { p = max(p, abs(x)) }
            }
            return p
        }

        #expect(hub.selectScene(named: "Organ"))
        events.push(.noteOn(60, velocity: 110, channel: 0))
        let held = peak(40)
        #expect(held > 0.01)
        #expect(hub.selectScene(named: "Piano"))
        #expect(hub.currentScene == "Piano")
        // The organ note goes on through the switch: an organ does not decay.
        let through = peak(40)
        #expect(through > held * 0.5, "held \(held), after the switch \(through)")
        events.push(.noteOn(64, velocity: 110, channel: 0))   // on the piano now
        _ = peak(10)
        events.push(.noteOff(60, channel: 0))
        events.push(.noteOff(64, channel: 0))
        _ = peak(400)                                            // ~4 s: release and reverb tails
        #expect(peak(20) < 1e-4, "a note is still sounding")
        #expect(sampler.instrument.refusedCount == 0)
    }
}
