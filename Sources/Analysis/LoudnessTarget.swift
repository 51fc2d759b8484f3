/// Loudness normalisation as one gain per file: reach `integrated` LUFS
/// unless that would push the true peak above `truePeakCeiling` dBTP, in
/// which case the gain stops at the ceiling (the file ends up quieter than
/// the target rather than limited or clipped).
public struct LoudnessTarget: Sendable, Equatable {
    public var integrated: Double
    public var truePeakCeiling: Double

    public init(integrated: Double, truePeakCeiling: Double = -1) {
        self.integrated = integrated
        self.truePeakCeiling = truePeakCeiling
    }

    /// The gain in dB for a file measured at `loudness` LUFS with true peak
    /// `truePeak` (linear). Silence (−∞ LUFS, nothing above the gate) gets 0 dB.
    public func gain(loudness: Double, truePeak: Double) -> Double {
        guard loudness.isFinite else { return 0 }
        let wanted = integrated - loudness
        guard truePeak > 0 else { return wanted }
        return min(wanted, truePeakCeiling - decibels(truePeak))
    }
}
