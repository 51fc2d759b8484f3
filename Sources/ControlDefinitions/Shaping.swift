/// The path from a control's position (0...1, what the hardware says) to a
/// value in a range: inversion, curve, steps, then scaling.
public struct Shaping: Hashable, Sendable {
    public var curve: Curve
    public var inverted: Bool
    /// When set (≥ 2), the shaped position snaps to this many evenly spaced values.
    public var steps: Int?

    public init(curve: Curve = .linear, inverted: Bool = false, steps: Int? = nil) {
        self.curve = curve
        self.inverted = inverted
        self.steps = steps
    }

    public static let linear = Shaping()

    /// Position → shaped position, both 0...1.
    public func apply(_ position: Double) -> Double {
        let p = min(max(position, 0), 1)
        var y = curve.apply(inverted ? 1 - p : p)
        if let steps, steps >= 2 {
            y = (y * Double(steps - 1)).rounded() / Double(steps - 1)
        }
        return y
    }

    /// Shaped position → a position that gives it (for soft takeover and
    /// for following a parameter that moved elsewhere).
    public func inverse(_ shaped: Double) -> Double {
        let p = curve.inverse(min(max(shaped, 0), 1))
        return inverted ? 1 - p : p
    }

    /// Maps a shaped position into a range (lower bound at 0).
    public static func scale(_ shaped: Double, into range: ClosedRange<Double>) -> Double {
        range.lowerBound + shaped * (range.upperBound - range.lowerBound)
    }

    /// Maps a value in a range back to 0...1.
    public static func unscale(_ value: Double, from range: ClosedRange<Double>) -> Double {
        let width = range.upperBound - range.lowerBound
        return width == 0 ? 0 : min(max((value - range.lowerBound) / width, 0), 1)
    }
}
