/// A time signature in force from `tick` on; a bar starts there.
public struct TimeSignatureChange: Hashable, Sendable {
    public var tick: UInt64
    /// Beats to the bar.
    public var numerator: Int
    /// The beat's note value: 4 a quarter, 8 an eighth.
    public var denominator: Int

    public init(tick: UInt64, numerator: Int, denominator: Int) {
        self.tick = tick; self.numerator = numerator; self.denominator = denominator
    }
}

extension StandardMIDIFile {
    /// The file's time signatures in tick order, 4/4 at tick 0 until the first
    /// (the last at a tick wins; a numerator of 0 or a note value past a 64th is skipped).
    public var timeSignatures: [TimeSignatureChange] {
        var signatures = [TimeSignatureChange(tick: 0, numerator: 4, denominator: 4)]
        forEachTimedEvent { timed in
            guard case .meta(.timeSignature(let ts)) = timed.event, ts.numerator > 0, ts.denominatorPower <= 6 else { return }
            let entry = TimeSignatureChange(tick: timed.tick, numerator: Int(ts.numerator), denominator: 1 << Int(ts.denominatorPower))
            if signatures[signatures.count - 1].tick == timed.tick { signatures[signatures.count - 1] = entry } else { signatures.append(entry) }
        }
        return signatures
    }
}
