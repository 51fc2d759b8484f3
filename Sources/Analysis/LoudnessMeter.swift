import CEBUR128
#if canImport(Glibc)
import Glibc
#endif

/// A failed libebur128 call, named with its return code.
public struct LoudnessError: Error, Equatable, Sendable, CustomStringConvertible {
    public var function: String
    public var code: Int32

    public var description: String {
        let reason = switch code {
        case Int32(EBUR128_ERROR_NOMEM.rawValue): "out of memory"
        case Int32(EBUR128_ERROR_INVALID_MODE.rawValue): "invalid mode"
        case Int32(EBUR128_ERROR_INVALID_CHANNEL_INDEX.rawValue): "invalid channel index"
        default: "error \(code)"
        }
        return "loudness measurement failed: \(function): \(reason)"
    }
}

/// EBU R 128 / ITU-R BS.1770 loudness of interleaved float audio, measured
/// by libebur128: integrated loudness (LUFS), sample peak and, when asked
/// for, true peak (4× oversampled; costs more).
///
/// Not thread-safe: one meter per stream, used from one thread at a time.
public final class LoudnessMeter {
    public let channels: Int
    public let sampleRate: Int
    public let measuresTruePeak: Bool
    private let state: UnsafeMutablePointer<ebur128_state>

    public init(channels: Int, sampleRate: Int, truePeak: Bool = true) throws(LoudnessError) {
        precondition(channels > 0 && sampleRate > 0)
        var mode = Int32(EBUR128_MODE_I.rawValue) | Int32(EBUR128_MODE_SAMPLE_PEAK.rawValue)
        if truePeak { mode |= Int32(EBUR128_MODE_TRUE_PEAK.rawValue) }
        // ebur128_init returns NULL on a bad argument or when out of memory.
        guard let state = ebur128_init(UInt32(channels), UInt(sampleRate), mode) else {
            throw LoudnessError(function: "ebur128_init", code: Int32(EBUR128_ERROR_NOMEM.rawValue))
        }
        self.state = state
        self.channels = channels
        self.sampleRate = sampleRate
        self.measuresTruePeak = truePeak
    }

    deinit {
        var state: UnsafeMutablePointer<ebur128_state>? = self.state
        ebur128_destroy(&state)
    }

    /// Adds `frames` interleaved frames (`channels × frames` samples).
    public func add(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(LoudnessError) {
        precondition(samples.count >= frames * channels)
        guard frames > 0, let base = samples.baseAddress else { return }
        try check("ebur128_add_frames_float", ebur128_add_frames_float(state, base, frames))
    }

    /// Integrated (gated) loudness so far, in LUFS; −∞ for silence.
    public func integratedLoudness() throws(LoudnessError) -> Double {
        var out = 0.0
        try check("ebur128_loudness_global", ebur128_loudness_global(state, &out))
        return out
    }

    /// Highest sample magnitude over every channel (linear; 1 = full scale).
    public func samplePeak() throws(LoudnessError) -> Double {
        try maxOverChannels("ebur128_sample_peak", ebur128_sample_peak)
    }

    /// Highest true-peak magnitude over every channel (linear); needs `truePeak: true`.
    public func truePeak() throws(LoudnessError) -> Double {
        try maxOverChannels("ebur128_true_peak", ebur128_true_peak)
    }

    private func maxOverChannels(
        _ name: String, _ call: (UnsafeMutablePointer<ebur128_state>?, UInt32, UnsafeMutablePointer<Double>?) -> Int32
    ) throws(LoudnessError) -> Double {
        var peak = 0.0
        for c in 0..<channels {
            var value = 0.0
            try check(name, call(state, UInt32(c), &value))
            peak = max(peak, value)
        }
        return peak
    }

    private func check(_ function: String, _ rc: Int32) throws(LoudnessError) {
        guard rc == Int32(EBUR128_SUCCESS.rawValue) else { throw LoudnessError(function: function, code: rc) }
    }
}

/// Decibels of a linear magnitude (−∞ for 0).
public func decibels(_ linear: Double) -> Double {
    linear > 0 ? 20 * log10(linear) : -.infinity
}

/// The linear factor of a gain in decibels.
public func linearGain(decibels db: Double) -> Double {
    pow(10, db / 20)
}
