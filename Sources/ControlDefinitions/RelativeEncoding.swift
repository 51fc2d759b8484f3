import MIDI

/// How a relative encoder writes a signed step count into one 7-bit CC value.
public enum RelativeEncoding: String, Hashable, Sendable, CaseIterable {
    /// 1...63 up, 127...64 down (127 = −1). Ableton "Relative (2's Comp.)",
    /// Arturia "Relative #2".
    case twosComplement = "twos-complement"
    /// Bit 6 is the sign: 1...63 up, 65...127 down (65 = −1). Ableton "Relative (Signed Bit)".
    case signMagnitude = "sign-magnitude"
    /// 64 is no change: 65...127 up, 63...0 down (63 = −1). Ableton
    /// "Relative (Binary Offset)", Arturia "Relative #1".
    case offset64 = "offset-64"

    /// The signed step count carried by `value`. For `offset64`, 0 is read as
    /// no change: Arturia encoders send 0 as a "neutral" message between
    /// steps (MiniLab mkII manual, 4.8.4.1), never a jump of −64.
    public func delta(_ value: UInt7) -> Int {
        let v = value.intValue
        switch self {
        case .twosComplement: return v < 64 ? v : v - 128
        case .signMagnitude: return v < 64 ? v : -(v - 64)
        case .offset64: return v == 0 ? 0 : v - 64
        }
    }
}
