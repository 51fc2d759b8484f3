/// When a piece is over: after its last event, rendering goes on until the
/// output has stayed below `silenceThreshold` for `silenceHold` seconds
/// (so releases and reverb ring out), and stops after `maxTail` seconds in
/// any case (a note that never ends).
public struct TailPolicy: Sendable, Equatable {
    /// Peak level, in dBFS, under which a block counts as silent.
    public var silenceThreshold: Double
    /// How long the output must stay silent, in seconds.
    public var silenceHold: Double
    /// The longest tail, in seconds after the piece's end.
    public var maxTail: Double

    public init(silenceThreshold: Double = -80, silenceHold: Double = 0.25, maxTail: Double = 10) {
        self.silenceThreshold = silenceThreshold; self.silenceHold = silenceHold; self.maxTail = maxTail
    }

    public static let `default` = TailPolicy()
}

/// Follows the tail block by block. Render thread safe (no allocation).
public struct TailTracker: Sendable {
    private let threshold: Float
    private let holdFrames: Int
    private let maxFrames: Int
    public private(set) var tailFrames = 0
    private var silentFrames = 0

    public init(policy: TailPolicy, sampleRate: Double) {
        threshold = Float(pow10(policy.silenceThreshold / 20))
        holdFrames = Int((policy.silenceHold * sampleRate).rounded())
        maxFrames = Int((max(0, policy.maxTail) * sampleRate).rounded())
    }

    /// Counts a block rendered after the piece's end; true when the tail is over.
    public mutating func observe(peak: Float, frames: Int) -> Bool {
        tailFrames += frames
        silentFrames = peak < threshold ? silentFrames + frames : 0
        return silentFrames >= holdFrames || tailFrames >= maxFrames
    }

    /// How many more frames the tail may last (to cut the last block at `maxTail`).
    public var remainingFrames: Int { max(0, maxFrames - tailFrames) }
}

/// 10^x without Foundation.
func pow10(_ x: Double) -> Double {
    // exp(x · ln 10) by repeated squaring would be overkill; the standard library has no pow.
    var result = 1.0, base = 10.0, exponent = abs(x)
    var whole = Int(exponent)
    let fraction = exponent - Double(whole)
    while whole > 0 {
        if whole & 1 == 1 { result *= base }
        base *= base; whole >>= 1
    }
    // 10^f for 0 ≤ f < 1 via the series of e^(f ln 10).
    let y = fraction * 2.302585092994046
    var term = 1.0, sum = 1.0
    for n in 1...30 { term *= y / Double(n); sum += term }
    result *= sum
    return x < 0 ? 1 / result : result
}
