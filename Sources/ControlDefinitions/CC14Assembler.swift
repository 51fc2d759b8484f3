import MIDI

/// Pairs 14-bit control changes (MSB on controller n in 0...31, LSB on n + 32)
/// per channel, in either order. State only; one instance per surface.
public struct CC14Assembler: Sendable {
    private struct Pair: Sendable {
        var msb: UInt8 = 0
        var lsb: UInt8 = 0
        var pendingLSB: UInt8?
        var learned: ControlSource.ByteOrder?
    }

    private var pairs = [Pair](repeating: Pair(), count: 16 * 32)

    public init() {}

    /// Feeds one half of a pair. Returns the completed 14-bit value when this
    /// message completes (or, MSB-first, coarsely sets) the value, else nil.
    public mutating func receive(channel: Channel, controller: UInt7, value: UInt7, order: ControlSource.ByteOrder)
        -> UInt14?
    {
        let c = controller.intValue
        guard c < 64 else { return nil }
        let isMSB = c < 32
        let i = channel.intValue * 32 + (c & 31)
        var pair = pairs[i]
        defer { pairs[i] = pair }
        var effective = order
        if order == .auto {
            if pair.learned == nil { pair.learned = isMSB ? .msbFirst : .lsbFirst }
            effective = pair.learned!
        }
        switch (effective, isMSB) {
        case (.lsbFirst, false):
            pair.pendingLSB = value.value
            return nil
        case (.lsbFirst, true):
            pair.msb = value.value
            pair.lsb = pair.pendingLSB ?? 0
            pair.pendingLSB = nil
        case (_, true):
            // MIDI 1.0: a new MSB resets the LSB.
            pair.msb = value.value
            pair.lsb = 0
        case (_, false):
            pair.lsb = value.value
        }
        return UInt14(msb: UInt7(unchecked: pair.msb), lsb: UInt7(unchecked: pair.lsb))
    }

    /// Forgets what was learned and held (a controller was reconnected).
    public mutating func reset() { pairs = [Pair](repeating: Pair(), count: 16 * 32) }
}
