import Foundation

/// How a control's position (0...1) becomes a shaped position (0...1) before
/// it is scaled into a range. Every curve maps 0 to 0 and 1 to 1 and rises
/// monotonically, so it can be inverted (`inverse`) for soft takeover.
public enum Curve: Hashable, Sendable {
    case linear
    /// (e^(k·x) − 1) / (e^k − 1): slow start, fast end; `k` > 0 (default 4).
    /// A negative `k` bends the other way.
    case exponential(shape: Double)
    /// ln(1 + k·x) / ln(1 + k): fast start, slow end; `k` > 0 (default 9).
    case logarithmic(shape: Double)
    /// x^k / (x^k + (1 − x)^k): slow at both ends; `k` ≥ 1 (default 2).
    case sCurve(shape: Double)
    /// Straight lines through points (x, y), both 0...1, sorted by x; the
    /// first point's y holds below it and the last point's y above it.
    case table([Point])

    public struct Point: Hashable, Sendable {
        public var x: Double
        public var y: Double
        public init(_ x: Double, _ y: Double) { self.x = x; self.y = y }
    }

    public static let defaultExponentialShape = 4.0
    public static let defaultLogarithmicShape = 9.0
    public static let defaultSCurveShape = 2.0

    /// The shaped position for a position `x` (clamped to 0...1).
    public func apply(_ x: Double) -> Double {
        let x = min(max(x, 0), 1)
        switch self {
        case .linear:
            return x
        case .exponential(let k):
            guard abs(k) > 1e-6 else { return x }
            return expm1(k * x) / expm1(k)
        case .logarithmic(let k):
            guard k > 1e-6 else { return x }
            return log1p(k * x) / log1p(k)
        case .sCurve(let k):
            let a = pow(x, k), b = pow(1 - x, k)
            return a + b == 0 ? x : a / (a + b)
        case .table(let points):
            guard let first = points.first, let last = points.last else { return x }
            if x <= first.x { return first.y }
            if x >= last.x { return last.y }
            for i in 1..<points.count where x <= points[i].x {
                let p = points[i - 1], q = points[i]
                return q.x == p.x ? q.y : p.y + (q.y - p.y) * (x - p.x) / (q.x - p.x)
            }
            return last.y
        }
    }

    /// The position whose shaped value is closest to `y`, found by bisection
    /// (curves are monotonic; a table that falls is searched the other way).
    public func inverse(_ y: Double) -> Double {
        if case .linear = self { return min(max(y, 0), 1) }
        let rising = apply(1) >= apply(0)
        var lo = 0.0, hi = 1.0
        for _ in 0..<48 {
            let mid = (lo + hi) / 2
            if (apply(mid) < y) == rising { lo = mid } else { hi = mid }
        }
        return (lo + hi) / 2
    }
}
