import CFFTW
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// FFTW could not make a plan (or its buffers) for a transform size.
public struct SpectrumError: Error, Equatable, Sendable, CustomStringConvertible {
    public var size: Int
    public var description: String { "spectrum: FFTW cannot plan a \(size)-point transform" }
}

/// One band of the spectrum: a third of an octave around `centre` (Hz).
public struct SpectrumBand: Equatable, Sendable {
    public var lower: Double
    public var centre: Double
    public var upper: Double
}

/// The spectrum of a mono signal as levels per third-octave band (dB, a
/// full-scale sine in a band reads 0 dB): a Hann-windowed real FFT of the
/// latest `size` samples (FFTW), the bins' power summed per band, then
/// smoothed: a level rises at once and falls at `fallRate` dB per second.
///
/// Not thread-safe: one thread (the analyser's, never the render thread).
/// FFTW's planner is not re-entrant, so plans are made and destroyed under one process-wide lock.
public final class SpectrumAnalyzer {
    /// Nominal third-octave centres 25 Hz … 20 kHz (ISO 266): 30 bands.
    public static let thirdOctaveCentres: [Double] = (-16...13).map { 1_000 * pow2(Double($0) / 3) }
    /// The level shown for silence.
    public static let floor: Float = -90

    public let size: Int
    public let sampleRate: Double
    public let bands: [SpectrumBand]
    public let fallRate: Float
    /// The smoothed level of each band, dB.
    public private(set) var levels: [Float]

    private let input: UnsafeMutablePointer<Float>
    private let output: UnsafeMutablePointer<fftwf_complex>
    private let plan: fftwf_plan
    private let window: [Float]
    /// The power a full-scale sine gives, summed over its bins: the 0 dB reference.
    private let reference: Double
    /// Bins per band: a half-open range, at least one bin (the nearest, for bands narrower than a bin).
    private let binRanges: [Range<Int>]

    private static let planner = Mutex<Void>(())

    public init(sampleRate: Double, size: Int = 4096, fallRate: Float = 24) throws(SpectrumError) {
        precondition(size >= 64 && sampleRate > 0)
        self.size = size; self.sampleRate = sampleRate; self.fallRate = fallRate
        let made: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<fftwf_complex>, fftwf_plan)? = Self.planner.withLock { _ in
            guard let input = fftwf_alloc_real(size), let output = fftwf_alloc_complex(size / 2 + 1) else { return nil }
            // FFTW_ESTIMATE: no measuring, so the plan (and its result) is the same on every run.
            guard let plan = fftwf_plan_dft_r2c_1d(Int32(size), input, output, UInt32(FFTW_ESTIMATE)) else {
                fftwf_free(input); fftwf_free(output); return nil
            }
            return (input, output, plan)
        }
        guard let made else { throw SpectrumError(size: size) }
        (input, output, plan) = made
        window = (0..<size).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(size))) }
        // A sine of amplitude 1: its one-sided bins hold (N/2)·(1/2)·Σw² of power (Parseval).
        reference = Double(size) / 4 * window.reduce(0) { $0 + Double($1 * $1) }
        let nyquist = sampleRate / 2, binWidth = sampleRate / Double(size)
        let third = pow2(1.0 / 6)
        bands = Self.thirdOctaveCentres.filter { $0 < nyquist }.map {
            SpectrumBand(lower: $0 / third, centre: $0, upper: min($0 * third, nyquist))
        }
        binRanges = bands.map { band in
            let lo = Int((band.lower / binWidth).rounded(.up)), hi = Int((band.upper / binWidth).rounded(.up))
            if hi > lo { return max(1, lo)..<min(size / 2 + 1, hi) }
            let nearest = max(1, Int((band.centre / binWidth).rounded()))
            return nearest..<(nearest + 1)
        }
        levels = [Float](repeating: Self.floor, count: bands.count)
    }

    deinit {
        Self.planner.withLock { _ in
            fftwf_destroy_plan(plan)
            fftwf_free(input)
            fftwf_free(output)
        }
    }

    /// Analyses `samples` (the latest `size` samples, oldest first), `elapsed`
    /// seconds after the last call (for the fall); returns the levels.
    @discardableResult
    public func analyze(_ samples: UnsafeBufferPointer<Float>, elapsed: Double) -> [Float] {
        precondition(samples.count == size)
        for i in 0..<size { input[i] = samples[i] * window[i] }
        fftwf_execute(plan)
        let fall = fallRate * Float(elapsed)
        for (b, range) in binRanges.enumerated() {
            var power = 0.0
            for k in range {
                let re = Double(output[k].0), im = Double(output[k].1)
                power += re * re + im * im
            }
            let db = Float(10 * log10(max(power / reference, 1e-12)))
            let now = max(db, Self.floor)
            levels[b] = max(now, levels[b] - fall)
        }
        return levels
    }
}

private func pow2(_ x: Double) -> Double { exp2(x) }
