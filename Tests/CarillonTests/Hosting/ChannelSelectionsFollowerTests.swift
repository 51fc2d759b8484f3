import Controls
import Engine
import Foundation
import Hosting
import MIDI
import MappingFiles
import Parameters
import Sampling
import Synchronization
import Testing

/// A preset the keyboard selects straight (no control takes its program
/// change): the sampler plays it, and the hub's presets — what the page's
/// strips, the terminal view and OSC show — follow what the render thread
/// applied (`Renderer.selections` → `ChannelSelectionsFollower`), with
/// nothing sent back to the engine.
@Suite struct ChannelSelectionsFollowerTests {
    final class Keeping: Instrument, @unchecked Sendable {
        var received: [ChannelMessage] = []   // the render thread's; read when it is not rendering
        let stripCount = 16
        func prepare(sampleRate: Double, maxFrames: Int) {}
        func receive(_ message: ChannelMessage) { received.append(message) }
        func render(frames: Int, dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                    effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {}
        func silence() {}
    }

    /// A mapping (the stage piano by default; nil: none, no zones) wired as a live
    /// host wires it: hub → renderer, keyboard → controls → zones → queue.
    final class Rig: @unchecked Sendable {
        let hub: ControlHub, renderer: Renderer, instrument = Keeping(), keyboard: KeyboardRouting
        let follower: ChannelSelectionsFollower
        let told = Mutex<[ParameterChange]>([])

        init(stagePiano: Bool = true) throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent()
            hub = ControlHub(mapping: stagePiano ? try ControlMapping.load(path: root.appendingPathComponent("mappings/stage-piano.yaml").path) : nil)
            renderer = Renderer(instrument: instrument)
            renderer.prepare(sampleRate: 48_000, maxFrames: 256)
            let events = EventQueueProducer(renderer.events, clock: nil)
            HostAssembly(options: HostOptions()).connect(hub, to: renderer, events: events, transport: nil)
            keyboard = KeyboardRouting(hub: hub, events: events)
            keyboard.start()
            follower = ChannelSelectionsFollower(renderer.selections, hub: hub)
            hub.subscribe { [weak self] change in self?.told.withLock { $0.append(change) } }   // as OSC's feedback subscribes
        }

        /// One block rendered, then the control loop's poll.
        func block() {
            var buffer = [Float](repeating: 0, count: 512)
            buffer.withUnsafeMutableBufferPointer { renderer.render(frames: 256, into: $0) }
            follower.poll()
        }
    }

    static let fluidR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"

    @Test func keyboardsProgramChange_throughTheZones_isShownByName_andFedBack() throws {
        let rig = try Rig()
        rig.block()
        rig.instrument.received.removeAll()
        rig.told.withLock { $0.removeAll() }
        // Channel 1 from the keyboard: the stage piano's zones take it to channels 2, 1 and 3.
        rig.keyboard.route(.cc(0, value: 0, channel: 0), from: 1, at: .afterLast)
        rig.keyboard.route(.programChange(89, channel: 0), from: 1, at: .afterLast)
        #expect(rig.hub.channelPresets[Channel(0)].program == 0)   // not yet played
        rig.block()
        #expect(rig.instrument.received.filter { $0.kind == 0xC0 }.map(\.channel).sorted() == [0, 1, 2])
        for c in 0..<3 { #expect(rig.hub.channelPresets[Channel(UInt8(c))] == ChannelPresets.Entry(bank: 0, program: 89)) }
        // The name a strip shows: FluidR3's preset at 0:89.
        if FileManager.default.fileExists(atPath: Self.fluidR3) {
            let presets = try PresetCatalog.font(nil, sessionFont: Self.fluidR3).get().presets
            let shown = presets.first { $0.bank == 0 && $0.program == rig.hub.channelPresets[Channel(2)].program }?.name
            #expect(shown == "Warm Pad")
        }
        // Feedback (OSC's subscription): each channel's program once.
        let programs = rig.told.withLock { $0 }.filter { if case .channelProgram = $0.address { true } else { false } }
        #expect(programs.map { "\($0.address) \($0.value)" }.sorted() == ["channel.1.program 89.0", "channel.2.program 89.0", "channel.3.program 89.0"])
        #expect(rig.hub.value(of: .channelProgram(Channel(1))) == 89)
        // Nothing sent back to the engine: the next block brings it nothing.
        rig.instrument.received.removeAll()
        rig.block()
        #expect(rig.instrument.received.isEmpty)
    }

    @Test func bankSelect_takesEffectAtTheProgramChange_andChannel10KeepsItsKit() throws {
        let rig = try Rig(stagePiano: false)
        rig.block()
        rig.keyboard.route(.cc(0, value: 8, channel: 4), from: 1, at: .afterLast)   // no zones: straight to channel 5
        rig.block()
        #expect(rig.hub.channelPresets[Channel(4)] == ChannelPresets.Entry(bank: 0, program: 0))   // FluidSynth still plays 0:0
        rig.keyboard.route(.programChange(4, channel: 4), from: 1, at: .afterLast)
        rig.keyboard.route(.cc(0, value: 1, channel: 9), from: 1, at: .afterLast)
        rig.keyboard.route(.programChange(25, channel: 9), from: 1, at: .afterLast)
        rig.block()
        #expect(rig.hub.channelPresets[Channel(4)] == ChannelPresets.Entry(bank: 8, program: 4))
        #expect(rig.hub.channelPresets[Channel(9)] == ChannelPresets.Entry(bank: 128, program: 25))
    }

    /// The page picks a preset while the keyboard's older one is still being
    /// reported: the strip ends on what the sampler ends on, whichever came last.
    @Test func pageAndKeyboard_interleaved_endOnWhatTheSamplerPlays() throws {
        let rig = try Rig(stagePiano: false)
        rig.block()
        rig.keyboard.route(.programChange(5, channel: 4), from: 1, at: .afterLast)
        rig.hub.selectPreset(onChannel: Channel(4), bank: 0, program: 7)
        #expect(rig.hub.channelPresets[Channel(4)].program == 7)   // the hub's own send shows at once
        rig.block()
        #expect(rig.hub.channelPresets[Channel(4)].program == 7)
        rig.hub.selectPreset(onChannel: Channel(4), bank: 0, program: 9)
        rig.keyboard.route(.programChange(11, channel: 4), from: 1, at: .afterLast)
        rig.block()
        #expect(rig.hub.channelPresets[Channel(4)].program == 11)
        #expect(rig.hub.value(of: .channelProgram(Channel(4))) == 11)
    }
}
