/// The built-in oscillator: sine, square, sawtooth or triangle, mixed into the
/// master bus after the strips (so the master gain and meters include it).
///
/// Changes never click: the frequency glides exponentially towards its target
/// in the log domain (time constant `glideTime`, ramped per sample within the
/// block); the level ramps linearly over each block; switching on or off fades
/// over `fadeTime`; a new waveform fades the old one out and the new one in.
/// Square and sawtooth are band-limited with PolyBLEP; the triangle's
/// harmonics fall as 1/n², so it is left naive.
///
/// Threads: `prepare` before rendering; `render` on the render thread only —
/// plain value state, no allocation, no locks, phase continuous across blocks.
public struct ToneGenerator: Sendable {
    public enum Waveform: Int, Sendable { case sine = 0, square = 1, sawtooth = 2, triangle = 3 }

    /// Time constant of the frequency glide, in seconds.
    public static let glideTime = 0.010
    /// Fade in or out on enable, disable and waveform change, in seconds.
    public static let fadeTime = 0.005

    /// The sample rates `prepare` accepts, in Hz.
    public static let sampleRateRange = 1_000.0...1_000_000.0

    public private(set) var sampleRate = 44_100.0
    /// Phase in cycles, 0 ..< 1.
    private var phase = 0.0
    /// Where the glide stands, in Hz.
    public private(set) var frequency = 440.0
    private var gain: Float = 0
    private var envelope: Float = 0
    public private(set) var waveform = Waveform.sine

    public init() {}

    /// Not on the render thread. Resets the phase and fades (silent until enabled).
    /// A rate outside `sampleRateRange` (or NaN, ±inf) is refused: the
    /// generator keeps its previous rate (44 100 Hz if never prepared), since
    /// the glide and fade arithmetic has no meaning at a zero or infinite rate.
    /// Returns whether the rate was taken.
    @discardableResult
    public mutating func prepare(sampleRate: Double) -> Bool {
        phase = 0; envelope = 0; gain = 0
        guard Self.sampleRateRange.contains(sampleRate) else { return false }
        self.sampleRate = sampleRate
        return true
    }

    /// True when the tone has faded out completely: `render` would add nothing.
    public var isSilent: Bool { envelope == 0 }

    /// Adds `frames` frames of the tone into planar `left` and `right`, moving
    /// towards the targets given (values as in the `ParameterStore`). Render thread.
    /// Any value is safe (see `ToneParameter` for what a bad one does):
    /// `frequency` is clamped to 1 Hz … 0.45 × the rate (-inf → 1 Hz,
    /// +inf → the top; NaN holds the current frequency); `level` to 0 … 1
    /// (NaN → 0); `waveform` is rounded and clamped to 0 … 3 (NaN keeps the
    /// current one); `enabled` NaN is off. `frames` ≤ 0 renders nothing.
    /// With `glides` false (a new note of the reference-pitch tool), a new
    /// frequency fades the tone out and back in at that frequency instead.
    public mutating func render(frames: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
                                frequency targetHz: Float, level: Float, waveform wave: Float, enabled: Float,
                                glides: Bool = true) {
        guard frames > 0 else { return }
        // Clamp in floating point first: Int(_:) of a NaN, infinite or huge Float traps.
        let requested = wave.isNaN ? waveform : Waveform(rawValue: Int(min(max(wave, 0), 3).rounded())) ?? .sine
        let nyquistish = 0.45 * sampleRate
        let target = min(max(targetHz.isNaN ? frequency : Double(targetHz), 1), nyquistish)
        let targetGain = level.isNaN ? 0 : min(max(level, 0), 1)
        let on = enabled >= 0.5

        if envelope == 0 {
            // Silent: jump to the targets, so a fade-in starts where it should.
            waveform = requested
            frequency = target
            gain = targetGain
            guard on else { return }
        }
        // A jump (no glide) waits for the fade-out, then starts over at the target above.
        let jumps = !glides && abs(target / frequency - 1) > 1e-9
        let envelopeTarget: Float = on && requested == waveform && !jumps ? 1 : 0

        // Frequency: per-block exponential approach in log2, linear in log2 per sample.
        var increment = frequency / sampleRate
        var multiplier = 1.0
        var endFrequency = frequency
        if frequency != target && !jumps {
            let from = Self.log2(frequency), to = Self.log2(target)
            let decay = Self.exp2(-Double(frames) / (Self.glideTime * sampleRate) * 1.442_695_040_888_963_4)
            var end = to + (from - to) * decay
            if abs(end - to) < 1e-6 { end = to }
            multiplier = Self.exp2((end - from) / Double(frames))
            endFrequency = end == to ? target : Self.exp2(end)
        }

        let gainStep = (targetGain - gain) / Float(frames)
        let envelopeStep = Float(1 / (Self.fadeTime * sampleRate))
        var p = phase
        var g = gain
        var env = envelope
        for i in 0..<frames {
            let dt = increment
            let sample: Float
            switch waveform {
            case .sine:
                sample = Self.sine(p)
            case .sawtooth:
                sample = Float(2 * p - 1 - Self.polyBLEP(p, dt))
            case .square:
                var q = p + 0.5; if q >= 1 { q -= 1 }
                sample = Float((p < 0.5 ? 1.0 : -1.0) + Self.polyBLEP(p, dt) - Self.polyBLEP(q, dt))
            case .triangle:
                sample = Float(4 * abs(p - 0.5) - 1)
            }
            g += gainStep
            if env < envelopeTarget { env = min(envelopeTarget, env + envelopeStep) }
            else if env > envelopeTarget { env = max(envelopeTarget, env - envelopeStep) }
            let v = sample * g * env
            left[i] += v
            right[i] += v
            p += dt
            if p >= 1 { p -= 1 }
            increment *= multiplier
        }
        phase = p
        gain = targetGain
        envelope = env
        frequency = endFrequency
    }

    // MARK: Kernels (no Foundation in Engine)

    /// sin(2π p) for p in 0 ..< 1: folded to ±π/2, Taylor series to the 11th power (error < 1e-7).
    @inline(__always)
    static func sine(_ p: Double) -> Float {
        var x = p < 0.5 ? p : p - 1          // -0.5 ..< 0.5
        if x > 0.25 { x = 0.5 - x } else if x < -0.25 { x = -0.5 - x }
        let y = Float(x * 6.283_185_307_179_586)
        let y2 = y * y
        // y − y³/3! + y⁵/5! − y⁷/7! + y⁹/9! − y¹¹/11!, Horner form.
        return y * (1 + y2 * (-1.0 / 6 + y2 * (1.0 / 120 + y2 * (-1.0 / 5040 + y2 * (1.0 / 362_880 + y2 * (-1.0 / 39_916_800))))))
    }

    /// The PolyBLEP residual of a unit step at phase 0, for phase `t` and increment `dt`.
    @inline(__always)
    static func polyBLEP(_ t: Double, _ dt: Double) -> Double {
        if t < dt {
            let x = t / dt
            return x + x - x * x - 1
        } else if t > 1 - dt {
            let x = (t - 1) / dt
            return x * x + x + x + 1
        }
        return 0
    }

    /// log₂ x for x > 0 (per block, not per sample).
    static func log2(_ x: Double) -> Double {
        let m = x.significand                 // 1 ..< 2
        let z = (m - 1) / (m + 1), z2 = z * z // |z| ≤ 1/3
        var term = z, sum = 0.0
        for k in stride(from: 1, through: 25, by: 2) { sum += term / Double(k); term *= z2 }
        return Double(x.exponent) + 2 * sum * 1.442_695_040_888_963_4
    }

    /// 2^y (per block, not per sample). Saturates to 0 or +inf far outside
    /// the Double range; NaN gives NaN (never traps on `Int(n)`).
    static func exp2(_ y: Double) -> Double {
        guard !y.isNaN else { return .nan }
        // Beyond ±1100 the result is 0 or +inf anyway (Double's exponents end near ±1075).
        guard y > -1_100 else { return 0 }
        guard y < 1_100 else { return .infinity }
        let n = y.rounded(.down)
        let f = (y - n) * 0.693_147_180_559_945_3   // 0 ..< ln 2
        var term = 1.0, sum = 1.0
        for k in 1...18 { term *= f / Double(k); sum += term }
        return Double(sign: .plus, exponent: Int(n), significand: sum)
    }
}
