import MIDI

/// What a zone does to a note-on's velocity. Every shape becomes a 128-entry table
/// when the zone set is compiled; a note-on's velocity never becomes 0 (that would be a note-off).
public enum VelocityShape: Hashable, Sendable {
    case unchanged
    /// Every note-on at this velocity.
    case fixed(UInt7)
    /// velocity · scale + offset, clamped to 1…127.
    case linear(scale: Double, offset: Double)
    /// A control curve (exponential, s-curve, table …) sampled at each velocity.
    case curve(VelocityCurve)

    /// The velocity table: index = incoming velocity, value = outgoing (1…127 for 1…127).
    public var table: [UInt8] {
        (0..<128).map { v in
            guard v > 0 else { return 0 }
            switch self {
            case .unchanged: return UInt8(v)
            case .fixed(let f): return max(1, f.value)
            case .linear(let scale, let offset): return Self.clamp(Double(v) * scale + offset)
            case .curve(let c): return max(1, c.table[v].value)
            }
        }
    }

    static func clamp(_ x: Double) -> UInt8 {
        guard x.isFinite else { return 1 }
        let r = (x + 0.5).rounded(.down)
        return UInt8(min(127, max(1, r)))
    }
}

/// A velocity curve as a table, made from a control curve's shape (Controls' `Curve.apply`,
/// so the curve math lives in one place): position (v − 1) / 126 → shaped position → 1 + 126 · y.
public struct VelocityCurve: Hashable, Sendable {
    /// How the mapping file named it (`exponential 4`, `table` …), for `mapping check --explain`.
    public var name: String
    /// 128 entries: incoming velocity → outgoing.
    public var table: [UInt7]

    public init(name: String, shape: (Double) -> Double) {
        self.name = name
        self.table = (0..<128).map { v in
            guard v > 0 else { return 0 }
            let y = shape(Double(v - 1) / 126)
            return UInt7(VelocityShape.clamp(1 + 126 * min(max(y, 0), 1)))
        }
    }
}
