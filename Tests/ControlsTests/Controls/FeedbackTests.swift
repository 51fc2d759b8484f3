import Controls
import MIDI
import MappingFiles
import Testing

/// Feedback to the controller through the hub: what changed elsewhere goes
/// out at the next tick, once per control; what the controller said itself
/// does not come back.
@Suite struct FeedbackTests {
    static let yaml = """
        name: Feedback
        channel: 1
        controls:
          - name: Fader
            kind: fader
            source: { cc: 7 }
            soft-takeover: false
            targets: [strip.1.gain]
          - name: Knob
            kind: knob
            source: { cc: 8 }
            targets: [strip.1.gain]
          - name: Fine
            kind: fader
            source: { cc14: 1 }
            targets: [strip.1.gain]
          - name: Deep
            kind: fader
            source: { nrpn: 300 }
            targets: [strip.1.gain]
          - name: Mute
            kind: toggle
            source: { note: 40 }
            targets: [strip.2.mute]
          - name: Ring
            kind: encoder
            source: { cc: 16 }
            targets: [strip.2.pan]
          - name: Quiet
            kind: fader
            source: { cc: 9 }
            feedback: false
            targets: [strip.1.gain]
          - name: Scene
            kind: selector
            source: { program-change: true }
            values: [0, 1]
            targets: [scene.select]
        scenes:
          - name: Soft
            controls: { Fader: -20 }
          - name: Loud
            controls: { Fader: 0 }
        """

    final class Sent: @unchecked Sendable {
        var batches: [[MIDIMessage]] = []
        var all: [MIDIMessage] { batches.flatMap { $0 } }
    }

    func hub() throws -> (ControlHub, Sent) {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.yaml))
        let sent = Sent()
        hub.observeFeedback { sent.batches.append($0) }
        hub.tick()   // the first tick: every control's state once
        sent.batches.removeAll()
        return (hub, sent)
    }

    @Test func firstTick_sendsEveryControlsState_butNotTheOnesThatSayNo() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.yaml))
        let sent = Sent()
        hub.observeFeedback { sent.batches.append($0) }
        hub.tick()
        let ccs = Set(sent.all.compactMap { m -> Int? in if case .controlChange(let c) = m { c.controller.intValue } else { nil } })
        #expect(ccs.isSuperset(of: [7, 8, 1, 33, 99, 98, 6, 38, 16]))
        #expect(!ccs.contains(9))   // feedback: false
        #expect(sent.all.contains(.noteOn(40, velocity: 0, channel: 0)))   // the mute LED, off
        hub.tick()
        #expect(sent.batches.count == 1)   // nothing changed since
    }

    @Test func controlMovedByAnother_followsAndTheMoverIsNotEchoed() throws {
        let (hub, sent) = try hub()
        #expect(hub.receive(.cc(7, value: 100, channel: 0)))
        hub.tick()
        let value = hub.value(of: .strip(.channel(0), .gain))
        // The knob (7-bit), the 14-bit fader (MSB, LSB) and the NRPN fader (99/98/6/38) follow; CC 7 itself does not come back.
        #expect(sent.all.contains(.cc(8, value: 100, channel: 0)))
        // 100/127 of 16383 is 12900 = 100·128 + 100.
        #expect(sent.all.contains(.cc(1, value: 100, channel: 0)) && sent.all.contains(.cc(33, value: 100, channel: 0)))
        #expect(sent.all.suffix(4) == [.cc(99, value: 2, channel: 0), .cc(98, value: 44, channel: 0),
                                       .cc(6, value: 100, channel: 0), .cc(38, value: 100, channel: 0)])
        #expect(!sent.all.contains { if case .controlChange(let c) = $0 { c.controller == 7 || c.controller == 9 } else { false } })
        #expect(value == hub.value(of: .strip(.channel(0), .gain)))
    }

    @Test func manyChangesBetweenTicks_sendTheLatestValueOnce() throws {
        let (hub, sent) = try hub()
        for v in stride(from: -40.0, through: -10, by: 1) { hub.set(.strip(.channel(0), .gain), to: v) }
        hub.tick()
        let faderMessages = sent.all.filter { if case .controlChange(let c) = $0 { c.controller == 7 } else { false } }
        #expect(faderMessages.count == 1)
        // The web surface's set: the controller's fader goes there too.
        let surface = ControlSurface(controls: try ControlMapping.parse(yaml: Self.yaml).controls)
        for m in faderMessages { surface.receive(m) }
        #expect(abs(surface.states[0].value - -10) < 0.3)
    }

    @Test func toggleOnANote_lightsItsLEDAfterThePress() throws {
        let (hub, sent) = try hub()
        _ = hub.receive(.noteOn(40, velocity: 100, channel: 0))
        _ = hub.receive(.noteOff(40, channel: 0))
        hub.tick()
        #expect(sent.all == [.noteOn(40, velocity: 127, channel: 0)])   // on: lit, though the key went up
        sent.batches.removeAll()
        _ = hub.receive(.noteOn(40, velocity: 127, channel: 0))
        hub.tick()
        #expect(sent.all == [.noteOn(40, velocity: 0, channel: 0)])     // off again
    }

    @Test func encoder_sendsItsRingsPosition() throws {
        let (hub, sent) = try hub()
        _ = hub.receive(.cc(16, value: 1, channel: 0))   // one step up (two's complement)
        _ = hub.receive(.cc(16, value: 1, channel: 0))
        hub.tick()
        let pan = hub.controlStates.first { $0.name == "Ring" }!
        #expect(sent.all == [.cc(16, value: UInt7(Int((pan.position * 127).rounded())), channel: 0)])
    }

    @Test func sceneSwitch_movesTheFaderAndTheSelector() throws {
        let (hub, sent) = try hub()
        #expect(hub.selectScene(named: "Soft"))
        hub.tick()
        #expect(sent.all.contains(.cc(7, value: 77, channel: 0)))    // -20 dB of -60…+6 dB: 40/66 of 127
        #expect(!sent.all.contains { if case .programChange = $0 { true } else { false } })   // the selector was at 0 already
        #expect(hub.selectScene(named: "Loud"))
        hub.tick()
        #expect(sent.all.contains(.programChange(1, channel: 0)))
        #expect(sent.all.contains(.cc(7, value: 115, channel: 0)))   // 0 dB: 60/66 of 127
        sent.batches.removeAll()
        // The program change that selects a scene on the controller is not sent back to it.
        _ = hub.receive(.programChange(0, channel: 0))
        hub.tick()
        #expect(!sent.all.contains { if case .programChange = $0 { true } else { false } })
    }

    @Test func reload_sendsTheNewMappingsState() throws {
        let (hub, sent) = try hub()
        hub.replace(mapping: try ControlMapping.parse(yaml: """
            name: Other
            controls:
              - name: Pan
                kind: knob
                source: { cc: 10, channel: 3 }
                targets: [strip.2.pan]
            """))
        hub.tick()
        #expect(sent.all == [.cc(10, value: 64, channel: 2)])
    }

    @Test func feedbackKey_isCheckedLikeTheRest() {
        #expect(throws: MappingError.self) {
            try ControlMapping.parse(yaml: """
                controls:
                  - name: F
                    kind: fader
                    source: { cc: 7 }
                    feedback: maybe
                    targets: [strip.1.gain]
                """, file: "f.yaml")
        }
        do {
            _ = try ControlMapping.parse(yaml: """
                controls:
                  - name: F
                    kind: fader
                    source: { cc: 7 }
                    feedback: maybe
                    targets: [strip.1.gain]
                """, file: "f.yaml")
        } catch {
            #expect(error.description == "f.yaml:5:15: error: expected true or false (feedback), found 'maybe'", "\(error)")
        }
    }
}
