import Controls
import Engine
import Hosting
import MIDI
import MappingFiles
import Testing

/// Pedals through the keyboard's whole way (controls, zones, queue), where a
/// scene switch takes the zones away while a pedal is down.
@Suite struct KeyboardRoutingPedalTests {
    static let yaml = """
        zones:
          - { name: Strings, keys: C-1..G9, to: 3 }
        controls:
          - { name: Patch, kind: selector, source: { program-change: true, channel: 16 }, targets: [scene.select] }
        scenes:
          - { name: Layered }
          - { name: Bare, zones: [] }
        """

    /// Sustain went down on channel 3 through a zone; the scene switched to one
    /// without zones; the pedal up still reaches channel 3 (not only the
    /// keyboard's own channel 1), or the strings sustain for ever.
    @Test func pedalUp_reachesWhereItWentDown_afterASceneWithoutZones() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.yaml))
        let queue = EventQueue()
        let keyboard = KeyboardRouting(hub: hub, events: EventQueueProducer(queue, clock: nil))
        keyboard.start()
        defer { keyboard.stop() }
        func drain() -> [ChannelMessage] { OutputClockTests.drain(queue).map(\.message) }
        _ = drain()
        keyboard.route(.cc(64, value: 127, channel: 0), from: 1, at: .afterLast)
        #expect(drain() == [.controlChange(64, value: 127, channel: 2)])
        keyboard.route(.programChange(1, channel: 15), from: 1, at: .afterLast)
        #expect(hub.currentScene == "Bare")
        _ = drain()
        keyboard.route(.cc(64, value: 0, channel: 0), from: 1, at: .afterLast)
        #expect(drain().contains(.controlChange(64, value: 0, channel: 2)))
        // With the pedal up and no zones, the keyboard plays its own channel again.
        keyboard.route(.programChange(1, channel: 15), from: 1, at: .afterLast)
        _ = drain()
        keyboard.route(.noteOn(60, velocity: 100, channel: 0), from: 1, at: .afterLast)
        #expect(drain() == [.noteOn(60, velocity: 100, channel: 0)])
    }
}

/// A control played by a key: the key's note-off reaches it too (a button is
/// 1 while the key is down, a pad its velocity), and still follows its
/// note-on to the zones and the queue.
@Suite struct KeyboardRoutingNoteControlTests {
    @Test func aKeysNoteOff_letsItsButtonAndPadGo() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: """
            controls:
              - { name: Hold, kind: button, source: { note: 36, channel: 10 }, targets: [strip.1.mute] }
              - { name: Hit, kind: pad, source: { note: 38, channel: 10 }, targets: [strip.2.gain] }
            """))
        let queue = EventQueue()
        let keyboard = KeyboardRouting(hub: hub, events: EventQueueProducer(queue, clock: nil))
        keyboard.start()
        defer { keyboard.stop() }
        func state(_ name: String) -> ControlState? { hub.controlStates.first { $0.name == name } }
        keyboard.route(.noteOn(36, velocity: 100, channel: 9), from: 1, at: .afterLast)
        keyboard.route(.noteOn(38, velocity: 127, channel: 9), from: 1, at: .afterLast)
        #expect(state("Hold")?.value == 1 && state("Hit")?.position == 1, "\(hub.controlStates)")
        keyboard.route(.noteOff(36, channel: 9), from: 1, at: .afterLast)
        keyboard.route(.noteOn(38, velocity: 0, channel: 9), from: 1, at: .afterLast)   // a note-off too
        #expect(state("Hold")?.value == 0 && state("Hit")?.position == 0, "\(hub.controlStates)")
    }
}

/// `rig.transpose`: a control (or a scene) moves every note the keyboard plays
/// after it, through its zones or without; a note held while it moves ends on
/// the key it sounded on.
@Suite struct KeyboardRoutingTransposeTests {
    static func rig(zones: String = "") throws -> (KeyboardRouting, () -> [ChannelMessage], ControlHub) {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: """
            controls:
              - { name: Transpose, kind: knob, source: { cc: 20 }, range: [-12, 12], soft-takeover: false, targets: [rig.transpose] }
            scenes:
              - { name: Plain }
              - { name: Low, set: { rig.transpose: -5 } }
            \(zones)
            """))
        let queue = EventQueue()
        let keyboard = KeyboardRouting(hub: hub, events: EventQueueProducer(queue, clock: nil))
        keyboard.start()
        // Notes only.
        return (keyboard, { OutputClockTests.drain(queue).map(\.message).filter { $0.status & 0xE0 == 0x80 } }, hub)
    }

    @Test func withoutZones_aTransposedNoteEndsOnItsKey_afterTheTransposeMoved() throws {
        let (keyboard, notes, _) = try Self.rig()
        defer { keyboard.stop() }
        keyboard.route(.cc(20, value: 74, channel: 0), from: 1, at: .afterLast)     // +2 (1.98, rounded)
        keyboard.route(.noteOn(60, velocity: 100, channel: 0), from: 1, at: .afterLast)
        keyboard.route(.cc(20, value: 64, channel: 0), from: 1, at: .afterLast)     // 0, the key still down
        keyboard.route(.noteOff(60, channel: 0), from: 1, at: .afterLast)
        keyboard.route(.noteOn(60, velocity: 90, channel: 0), from: 1, at: .afterLast)
        keyboard.route(.noteOff(60, channel: 0), from: 1, at: .afterLast)
        #expect(notes() == [.noteOn(62, velocity: 100, channel: 0), .noteOff(62, channel: 0),
                            .noteOn(60, velocity: 90, channel: 0), .noteOff(60, channel: 0)])
    }

    @Test func throughZones_addsToTheirOwn_andAScenesValueMovesIt() throws {
        let (keyboard, notes, hub) = try Self.rig(zones: """
            zones:
              - { name: Bass, keys: C-1..B2, to: 2, transpose: 12 }
              - { name: Piano, keys: C3..G9, to: 1 }
            """)
        defer { keyboard.stop() }
        keyboard.route(.cc(20, value: 74, channel: 0), from: 1, at: .afterLast)     // +2
        keyboard.route(.noteOn(40, velocity: 100, channel: 0), from: 1, at: .afterLast)
        keyboard.route(.noteOn(60, velocity: 100, channel: 0), from: 1, at: .afterLast)
        keyboard.route(.noteOff(40, channel: 0), from: 1, at: .afterLast)
        keyboard.route(.noteOff(60, channel: 0), from: 1, at: .afterLast)
        #expect(notes() == [.noteOn(54, velocity: 100, channel: 1), .noteOn(62, velocity: 100, channel: 0),
                            .noteOff(54, channel: 1), .noteOff(62, channel: 0)])
        #expect(hub.selectScene(named: "Low"))                                     // set: { rig.transpose: -5 }
        keyboard.route(.noteOn(60, velocity: 100, channel: 0), from: 1, at: .afterLast)
        #expect(notes() == [.noteOn(55, velocity: 100, channel: 0)])
    }
}
