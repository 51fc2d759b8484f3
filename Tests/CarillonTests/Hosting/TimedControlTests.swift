import Controls
import Engine
import Hosting
import MIDI
import MappingFiles
import Parameters
import Testing

/// A control moved by a message that plays at a frame (`--timing stamped`,
/// JACK MIDI) changes its parameters there: a store value at the start of that
/// frame's block (where `render --take` applies it), a channel message at the
/// frame, a scene's values too. Untimed (a UI, `--timing asap`): at once.
@Suite struct TimedControlTests {
    static let yaml = """
        controls:
          - { name: Tone, kind: knob, source: { cc: 91 }, soft-takeover: false, targets: [tone.level] }
          - { name: Pan, kind: knob, source: { cc: 10 }, soft-takeover: false, targets: [channel.2.cc.10] }
          - { name: Patch, kind: selector, source: { program-change: true, channel: 16 }, targets: [scene.select] }
        scenes:
          - { name: Dry, set: { synth.reverb.level: 0 } }
          - { name: Wet, set: { synth.reverb.level: 1 }, channels: { 3: { program: 48 } } }
        """

    struct Rig {
        let hub: ControlHub
        let store = ParameterStore()
        let queue = EventQueue()
        let keyboard: KeyboardRouting

        init() throws {
            hub = ControlHub(mapping: try ControlMapping.parse(yaml: TimedControlTests.yaml))
            let producer = EventQueueProducer(queue, clock: OutputClock(sampleRate: 48_000, periodFrames: 256))
            let routing = ParameterRouting(parameters: store, events: producer, transport: nil)
            hub.subscribeTimed { routing.apply($0.change, at: $0.frame) }
            keyboard = KeyboardRouting(hub: hub, events: producer)
            keyboard.start()
        }

        /// The queue's events, taken.
        func drain() -> [TimedMessage] {
            var out: [TimedMessage] = []
            while let e = queue.peek() { out.append(e); queue.pop() }
            return out
        }
    }

    @Test func aControlMovedAtAFrame_changesItsStoreValueAtThatBlocksStart_andItsMessageAtTheFrame() throws {
        let rig = try Rig()
        _ = rig.drain()
        let level = rig.store.value(.strip(.tone, .gain))
        rig.keyboard.route(.cc(91, value: 40, channel: 0), from: 0, at: .frame(1000))
        rig.keyboard.route(.cc(10, value: 20, channel: 0), from: 0, at: .frame(1010))
        #expect(rig.store.value(.strip(.tone, .gain)) == level, "stored before its block")
        rig.store.applyTimed(before: 1000)                  // the block before 1000's
        #expect(rig.store.value(.strip(.tone, .gain)) == level)
        rig.store.applyTimed(before: 1024)                  // 768..<1024 holds frame 1000
        #expect(rig.store.value(.strip(.tone, .gain)) != level)
        #expect(rig.drain() == [TimedMessage(frame: 1010, message: .controlChange(10, value: 20, channel: 1))])
    }

    @Test func aSceneSwitchedAtAFrame_hasItsValuesThere() throws {
        let rig = try Rig()
        _ = rig.drain()
        rig.store.applyTimed(before: .max)
        let before = rig.store.value(.reverb(.level))
        rig.keyboard.route(.programChange(1, channel: 15), from: 0, at: .frame(2000))
        #expect(rig.hub.currentScene == "Wet")
        #expect(rig.store.value(.reverb(.level)) == before)
        rig.store.applyTimed(before: 2048)
        #expect(rig.store.value(.reverb(.level)) != before)
        #expect(rig.drain().contains(TimedMessage(frame: 2000, message: .programChange(48, channel: 2))))
    }

    /// A momentary pressed by a timed message is 1 for the block its press lands
    /// in and falls back at the next block's start, wherever the control loop's
    /// tick falls (here before the press's block is rendered); untimed, at once.
    @Test func aMomentaryPressedAtAFrame_fallsBackABlockOn() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: """
            controls:
              - { name: Kill, kind: momentary, source: { note: 36, channel: 10 }, targets: [strip.1.mute] }
            """))
        let store = ParameterStore()
        let routing = ParameterRouting(parameters: store, events: nil, transport: nil)
        hub.subscribeTimed { routing.apply($0.change, at: $0.frame) }
        let mute = ParameterAddress.strip(.channel(0), .mute)
        #expect(hub.receive(.noteOn(36, velocity: 100, channel: 9), at: 1000))
        #expect(hub.hasFiredMomentary)
        hub.tick(blockFrames: 256)
        #expect(!hub.hasFiredMomentary && store.value(mute) == 0)
        store.applyTimed(before: 1024)                      // the press's block (768..<1024)
        #expect(store.value(mute) == 1)
        store.applyTimed(before: 1280)                      // the next: 1256 falls in it
        #expect(store.value(mute) == 0)
        _ = hub.receive(.noteOn(36, velocity: 100, channel: 9))
        #expect(store.value(mute) == 1)
        hub.tick(blockFrames: 256)
        #expect(store.value(mute) == 0)
    }

    /// A UI's move is stored at once, and a timed move queued before it does not undo it.
    @Test func anUntimedChange_isStoredAtOnce_andWins() throws {
        let rig = try Rig()
        rig.keyboard.route(.cc(91, value: 40, channel: 0), from: 0, at: .frame(5000))
        rig.hub.set(.strip(.tone, .gain), to: -30)
        let ui = rig.store.value(.strip(.tone, .gain))
        #expect(abs(ui - 0.031_623) < 1e-5)
        rig.store.applyTimed(before: .max)
        #expect(rig.store.value(.strip(.tone, .gain)) == ui)
    }
}
