import MappingFiles
import Parameters
import Testing
import Foundation
import Hosting
import LiveSession
import Controls
import Engine
import MIDI

/// The host's control side, which runs anywhere (no sound card, no
/// sequencer): transport controls drive the player; the control thread
/// brings momentary controls back.
@Suite struct LiveHostTests {
    static let yaml = """
        name: Transport test
        channel: 1
        controls:
          - name: Play
            kind: momentary
            source: { cc: 20 }
            targets: [transport.play]
          - name: Stop
            kind: momentary
            source: { cc: 21 }
            targets: [transport.stop]
          - name: Tempo
            kind: fader
            source: { cc: 22 }
            soft-takeover: false
            targets: [transport.tempo]
          - name: Loop
            kind: toggle
            source: { cc: 23 }
            targets: [transport.loop]
          - name: Position
            kind: knob
            source: { cc: 24 }
            soft-takeover: false
            targets: [transport.position]
          - name: Volume
            kind: fader
            source: { cc: 7 }
            soft-takeover: false
            targets: [channel.1.cc.7]
        """

    /// Sound-free: the transport is what is under test.
    final class Silent: Instrument {
        let stripCount = 16
        func prepare(sampleRate: Double, maxFrames: Int) {}
        func receive(_ message: ChannelMessage) {}
        func render(frames: Int, dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                    effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {}
        func silence() {}
    }

    func render(_ renderer: Renderer, seconds: Double) {
        var buffer = [Float](repeating: 0, count: 2 * 480)
        for _ in 0..<Int(seconds * 100) { buffer.withUnsafeMutableBufferPointer { renderer.render(frames: 480, into: $0) } }
    }

    func cc(_ n: UInt7, _ v: UInt7) -> MIDIMessage { .cc(n, value: v, channel: 0) }

    @Test func transportControls_driveThePlayer() throws {
        let mapping = try ControlMapping.parse(yaml: Self.yaml)
        let surface = ControlSurface(mapping: mapping)
        let renderer = Renderer(instrument: Silent())
        renderer.prepare(sampleRate: 48_000, maxFrames: 480)
        renderer.schedule(Score(events: [.init(seconds: 0, message: .noteOn(60, velocity: 100, channel: 0))], duration: 4))
        let transport = renderer.transport
        let routing = ParameterRouting(parameters: renderer.parameters, events: nil, transport: transport, pieceTempo: 120)
        _ = surface.subscribe { routing.apply($0) }

        render(renderer, seconds: 0.5)
        // A press and release of Stop between two blocks: still a stop.
        _ = surface.receive(cc(21, 127)); _ = surface.receive(cc(21, 0)); surface.tick()
        render(renderer, seconds: 0.5)
        #expect(!transport.isPlaying)
        #expect(abs(transport.position - 0.5) < 1e-9)
        // Play, pressed and released before the next block.
        _ = surface.receive(cc(20, 127)); _ = surface.receive(cc(20, 0)); surface.tick()
        render(renderer, seconds: 0.5)
        #expect(transport.isPlaying)
        #expect(abs(transport.position - 1.0) < 1e-9)
        // Tempo: the fader's top is 300 bpm, 2.5 × the piece's 120.
        _ = surface.receive(cc(22, 127))
        #expect(abs(transport.tempoScale - 2.5) < 1e-6)
        render(renderer, seconds: 0.2)
        #expect(abs(transport.position - 1.5) < 1e-6)
        // Loop toggles on.
        _ = surface.receive(cc(23, 127)); _ = surface.receive(cc(23, 0))
        #expect(transport.isLooping)
        // Position: the knob at the middle seeks to about half the piece.
        _ = surface.receive(cc(24, 64))
        render(renderer, seconds: 0.01)
        #expect(abs(transport.position - (64.0 / 127 * 4 + 0.01 * 2.5)) < 0.01)
    }

    @Test func noAudio_withoutSoundCard_controlsRespond_andMomentaryFallsBack() throws {
        let mapping = try ControlMapping.parse(yaml: Self.yaml)
        var options = LiveHost.Options()
        options.audio = false
        options.clientName = "carillon-test"
        options.logParameterChanges = true
        let host = try LiveHost(soundFont: nil, mapping: mapping, options: options)
        try host.start()
        defer { host.stop() }
        #expect(host.transport == nil)
        host.receive(cc(7, 100))
        #expect(host.controlStates().first { $0.name == "Volume" }?.value == Double(100))
        host.receive(cc(20, 127))
        // The momentary fired; the control thread's tick brings it back to 0.
        var back = false
        for _ in 0..<100 {
            usleep(5_000)
            if host.controlStates().first(where: { $0.name == "Play" })?.value == 0 { back = true; break }
        }
        #expect(back)
        // It did fire: a press (1) then the fall back (0), both published.
        let plays = host.takeLog().filter { $0.contains("transport.play") }
        #expect(plays.count == 2, "\(plays)")
    }
}
