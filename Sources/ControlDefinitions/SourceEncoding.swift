import MIDI

// Control → MIDI: the inverse of what `ControlSurface` decodes from a source,
// for feedback to the controller (motorised faders, LED rings, button LEDs).
// A raw value is what the wire carries, 0...resolution: 0…127 for 7-bit
// sources, 0…16383 for 14-bit ones.

extension ControlSource {
    /// The raw value nearest a position along the travel (0...1): what the
    /// decoder divides by `resolution`.
    public func raw(position: Double) -> Int {
        let p = position.isFinite ? min(max(position, 0), 1) : 0
        return Int((p * Double(resolution)).rounded())
    }

    /// The messages a controller sends for `raw` (clamped to 0...resolution),
    /// in the order the decoder reads them: 14-bit CCs as MSB then LSB (LSB
    /// first for `lsb-first`), NRPN/RPN as parameter select (99/98 or 101/100)
    /// then data entry (6, and 38 for 14 bits), a note as a note-on whose
    /// velocity is the value (0 is off), pitch bend as its 14-bit value.
    public func messages(raw: Int, channel: Channel) -> [MIDIMessage] {
        let v = min(max(raw, 0), resolution)
        switch message {
        case .cc(let n):
            return [.cc(n, value: UInt7(v), channel: channel)]
        case .cc14(let msb, let order):
            let value = UInt14(v)
            let high = MIDIMessage.cc(msb, value: value.msb, channel: channel)
            let low = MIDIMessage.cc(UInt7(msb.intValue + 32), value: value.lsb, channel: channel)
            return order == .lsbFirst ? [low, high] : [high, low]
        case .nrpn(let number, let bits), .rpn(let number, let bits):
            let (selectMSB, selectLSB): (UInt7, UInt7) = isNRPN ? (99, 98) : (101, 100)
            var out: [MIDIMessage] = [
                .cc(selectMSB, value: number.msb, channel: channel),
                .cc(selectLSB, value: number.lsb, channel: channel),
            ]
            if bits == 7 {
                out.append(.cc(6, value: UInt7(v), channel: channel))
            } else {
                let value = UInt14(v)
                out.append(.cc(6, value: value.msb, channel: channel))
                out.append(.cc(38, value: value.lsb, channel: channel))
            }
            return out
        case .note(let n):
            return [.noteOn(n, velocity: UInt7(v), channel: channel)]
        case .programChange:
            return [.programChange(UInt7(v), channel: channel)]
        case .pitchBend:
            return [.pitchBend(UInt14(v), channel: channel)]
        case .channelPressure:
            return [.channelPressure(UInt7(v), channel: channel)]
        }
    }

    private var isNRPN: Bool {
        if case .nrpn = message { return true }
        return false
    }
}

extension ControlDefinition {
    /// The raw value that shows a control's state on its controller, nil when
    /// it has none to show (readouts, momentary controls, selectors stepped
    /// by a note). `position` is the travel 0...1 (before shaping), `shaped`
    /// the shaped position it stands for, `on` a toggle's or button's state,
    /// `index` a selector's step.
    ///
    /// Absolute controls and encoders send their position (an encoder's LED
    /// ring takes the absolute value on its CC); toggles, buttons and pads on
    /// a note or CC light with 127 and go dark with 0; a selector sends the
    /// raw value in the middle of its step's band (its program number, on a
    /// program change).
    public func feedbackRaw(position: Double, shaped: Double, on: Bool, index: Int) -> Int? {
        guard let source else { return nil }
        switch kind {
        case .readout, .momentary:
            return nil
        case .toggle, .button:
            return on ? source.resolution : 0
        case .selector:
            if case .programChange = source.message { return min(max(index, 0), 127) }
            if case .note = source.message { return nil }
            return Self.bandRaw(index: index, steps: selectorSteps, resolution: source.resolution)
        case .fader, .knob, .encoder, .pad:
            // The raw value nearest the position, or a neighbour whose decoded
            // value is closer to `shaped` (a curve's flat stretch, a step's edge).
            let r = source.raw(position: position), resolution = Double(source.resolution)
            func miss(_ c: Int) -> Double { abs(shaping.apply(Double(c) / resolution) - shaped) }
            return [r, r - 1, r + 1].filter { (0...source.resolution).contains($0) }.min { miss($0) < miss($1) }
        }
    }

    /// A raw value inside band `index` of `steps` equal bands over 0...resolution,
    /// as the decoder splits them (`Int(raw / resolution · steps)`): its middle.
    static func bandRaw(index: Int, steps: Int, resolution: Int) -> Int {
        let i = min(max(index, 0), steps - 1)
        let r = Double(resolution), n = Double(steps)
        let low = Int((Double(i) * r / n).rounded(.up))
        let high = i == steps - 1 ? resolution : Int((Double(i + 1) * r / n).rounded(.up)) - 1
        return (low + max(low, high)) / 2
    }
}
