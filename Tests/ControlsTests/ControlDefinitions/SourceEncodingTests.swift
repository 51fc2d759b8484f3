import ControlDefinitions
import Controls
import MIDI
import Testing

/// Control → MIDI for feedback is the inverse of MIDI → control: a value
/// decoded from a source, encoded again and decoded by a fresh surface, is
/// the same value — for every source kind, byte order and curve.
@Suite struct SourceEncodingTests {
    static let sources: [ControlSource] = [
        ControlSource(.cc(7), channel: 2),
        ControlSource(.cc14(msb: 1, order: .msbFirst), channel: 2),
        ControlSource(.cc14(msb: 1, order: .lsbFirst), channel: 2),
        ControlSource(.cc14(msb: 1, order: .auto), channel: 2),
        ControlSource(.nrpn(UInt14(300), bits: 14), channel: 2),
        ControlSource(.nrpn(UInt14(300), bits: 7), channel: 2),
        ControlSource(.rpn(UInt14(2), bits: 14), channel: 2),
        ControlSource(.note(60), channel: 2),
        ControlSource(.programChange, channel: 2),
        ControlSource(.pitchBend, channel: 2),
        ControlSource(.channelPressure, channel: 2),
    ]
    static let shapings: [Shaping] = [
        Shaping(), Shaping(curve: .exponential(shape: 4)), Shaping(curve: .exponential(shape: -3)),
        Shaping(curve: .logarithmic(shape: 9)), Shaping(curve: .sCurve(shape: 2)),
        Shaping(curve: .table([.init(0, 0), .init(0.5, 0.5), .init(0.6, 0.5), .init(1, 1)])),
        Shaping(curve: .exponential(shape: 4), inverted: true), Shaping(steps: 5),
    ]

    /// Raw values to try: every one for 7-bit sources, a spread with both ends for 14-bit.
    static func raws(_ source: ControlSource) -> [Int] {
        source.resolution == 127 ? Array(0...127) : Array(stride(from: 0, through: 16383, by: 97)) + [1, 127, 128, 8192, 16382, 16383]
    }

    func fader(_ source: ControlSource, _ shaping: Shaping) -> ControlDefinition {
        ControlDefinition(name: "F", kind: .fader, source: source, shaping: shaping, range: ValueRange(-60, 6),
                          targets: [TargetBinding(.strip(.channel(0), .gain))], softTakeover: false)
    }

    @Test(arguments: sources) func decodeOfEncode_isTheValue_forEveryCurve(_ source: ControlSource) {
        for shaping in Self.shapings {
            let def = fader(source, shaping)
            let decoder = ControlSurface(controls: [def])
            let encoder = ControlSurface(controls: [def])
            // The controller: it keeps what it was sent last (nothing is sent when nothing changed).
            let controller = ControlSurface(controls: [def])
            for m in encoder.takeFeedback() { controller.receive(m) }
            var failures: [String] = []
            for raw in Self.raws(source) {
                for m in source.messages(raw: raw, channel: 2) { decoder.receive(m) }
                let v = decoder.states[0].value
                // The value set elsewhere (a UI, another control): what goes back to the controller.
                encoder.setValue(v, ofControl: "F")
                let sent = encoder.takeFeedback()
                for m in sent { controller.receive(m) }
                if abs(controller.states[0].value - v) > 1e-9 { failures.append("raw \(raw): \(v) → \(sent) → \(controller.states[0].value)") }
            }
            #expect(failures.isEmpty, "\(source) \(shaping): \(failures.prefix(5))")
        }
    }

    @Test func messages_useEachSourcesOwnEncoding() {
        #expect(ControlSource(.cc14(msb: 1, order: .msbFirst)).messages(raw: 8193, channel: 0)
            == [.cc(1, value: 64, channel: 0), .cc(33, value: 1, channel: 0)])
        #expect(ControlSource(.cc14(msb: 1, order: .lsbFirst)).messages(raw: 8193, channel: 0)
            == [.cc(33, value: 1, channel: 0), .cc(1, value: 64, channel: 0)])
        #expect(ControlSource(.nrpn(UInt14(300), bits: 14)).messages(raw: 8193, channel: 3)
            == [.cc(99, value: 2, channel: 3), .cc(98, value: 44, channel: 3), .cc(6, value: 64, channel: 3), .cc(38, value: 1, channel: 3)])
        #expect(ControlSource(.nrpn(UInt14(300), bits: 7)).messages(raw: 100, channel: 3)
            == [.cc(99, value: 2, channel: 3), .cc(98, value: 44, channel: 3), .cc(6, value: 100, channel: 3)])
        #expect(ControlSource(.rpn(UInt14(0), bits: 14)).messages(raw: 256, channel: 0)
            == [.cc(101, value: 0, channel: 0), .cc(100, value: 0, channel: 0), .cc(6, value: 2, channel: 0), .cc(38, value: 0, channel: 0)])
        #expect(ControlSource(.pitchBend).messages(raw: 16383, channel: 0) == [.pitchBend(UInt14(16383), channel: 0)])
        #expect(ControlSource(.note(36)).messages(raw: 0, channel: 9) == [.noteOn(36, velocity: 0, channel: 9)])
        #expect(ControlSource(.cc(7)).messages(raw: 500, channel: 0) == [.cc(7, value: 127, channel: 0)])   // clamped
    }

    /// A selector's value comes back as a raw value inside its step's band, for every step count.
    @Test func selectorBands_roundTrip() {
        for steps in [2, 3, 5, 7, 16, 100, 127, 128] {
            let def = ControlDefinition(name: "S", kind: .selector, source: ControlSource(.cc(20), channel: 0),
                                        targets: [TargetBinding(.sceneSelect)], selectorValues: (0..<steps).map(Double.init))
            for index in 0..<steps {
                let raw = def.feedbackRaw(position: 0, shaped: 0, on: false, index: index)!
                let surface = ControlSurface(controls: [def])
                for m in def.source!.messages(raw: raw, channel: 0) { surface.receive(m) }
                let got = Int(surface.states[0].value)
                #expect(got == index, "steps \(steps) index \(index) raw \(raw) → \(got)")
            }
        }
    }

    @Test func toggles_lightWithTheSourcesFullValue() {
        let cc = ControlDefinition(name: "T", kind: .toggle, source: ControlSource(.cc(40)), targets: [TargetBinding(.strip(.channel(0), .mute))])
        #expect(cc.feedbackRaw(position: 0, shaped: 0, on: true, index: 0) == 127)
        #expect(cc.feedbackRaw(position: 1, shaped: 1, on: false, index: 0) == 0)
        let momentary = ControlDefinition(name: "M", kind: .momentary, source: ControlSource(.cc(41)), targets: [TargetBinding(.transport(.stop))])
        #expect(momentary.feedbackRaw(position: 1, shaped: 1, on: true, index: 0) == nil)
    }
}
