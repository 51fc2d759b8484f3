import Parameters
import Synchronization

/// Levels for a UI to read from any thread, published by the render thread
/// once per block: the last block's master peak and RMS (linear), each
/// strip's peak and RMS (after its gain, pan and mute: what it adds to the
/// mix), and the count of samples beyond full scale. `strips` says which
/// strip each index is (`names`, `fileStems`: its labels).
///
/// Bad input never traps and never reaches a reader: a level is a magnitude,
/// so a negative one is stored as 0 and +inf as `Float.greatestFiniteMagnitude`;
/// a NaN level is refused (the meter keeps its last value) and so is a strip
/// index outside 0 ..< `stripCount`; both are counted in `refusedUpdates`.
/// Reading a strip outside the range gives 0.
public final class Meters: @unchecked Sendable {
    public let stripCount: Int
    /// Which strip each index is, `stripCount` of them.
    public let strips: [ParameterAddress.StripID]
    /// Each strip's source name (a track's; empty for the others).
    public let sourceNames: [String]
    /// Each strip's meter label (`StripID.label`): `1`…`16`, `osc`, `tone`, `reverb`, `chorus`, a track's name.
    public var names: [String] { zip(strips, sourceNames).map { $0.label(name: $1) } }
    /// Each strip's stem file name (`StripID.fileStem`).
    public var fileStems: [String] { zip(strips, sourceNames).map { $0.fileStem(name: $1) } }
    /// One Float bit pattern per strip: peaks, then RMS levels.
    private let levels: UnsafeMutablePointer<Atomic<UInt32>>
    private let peakBits = Atomic<UInt32>(0)
    private let rmsBits = Atomic<UInt32>(0)
    private let clips = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)

    init(strips: [ParameterAddress.StripID], sourceNames: [String] = []) {
        self.strips = strips
        self.sourceNames = strips.indices.map { $0 < sourceNames.count ? sourceNames[$0] : "" }
        stripCount = strips.count
        levels = .allocate(capacity: 2 * stripCount)
        for i in 0..<(2 * stripCount) { (levels + i).initialize(to: Atomic(0)) }
    }

    /// `stripCount` channel strips; a negative count is taken as 0.
    convenience init(stripCount: Int) {
        self.init(strips: (0..<max(0, stripCount)).map { .channel($0) })
    }

    deinit {
        levels.deinitialize(count: 2 * stripCount); levels.deallocate()
    }

    /// The bit pattern stored for `level`, nil for NaN (see the type's comment).
    @inline(__always) private static func stored(_ level: Float) -> UInt32? {
        guard !level.isNaN else { return nil }
        return min(max(level, 0), .greatestFiniteMagnitude).bitPattern
    }

    @inline(__always) private func refuse() { refused.wrappingAdd(1, ordering: .relaxed) }

    public var peak: Float { Float(bitPattern: peakBits.load(ordering: .relaxed)) }
    public var rms: Float { Float(bitPattern: rmsBits.load(ordering: .relaxed)) }
    /// The strip's last block peak; 0 for a strip outside 0 ..< `stripCount`.
    public func stripPeak(_ strip: Int) -> Float {
        guard strip >= 0, strip < stripCount else { return 0 }
        return Float(bitPattern: levels[strip].load(ordering: .relaxed))
    }
    /// The strip's last block RMS (both sides); 0 for a strip outside 0 ..< `stripCount`.
    public func stripRMS(_ strip: Int) -> Float {
        guard strip >= 0, strip < stripCount else { return 0 }
        return Float(bitPattern: levels[stripCount + strip].load(ordering: .relaxed))
    }
    /// The index of `strip`, nil when the mixer has no such strip.
    public func index(of strip: ParameterAddress.StripID) -> Int? { strips.firstIndex(of: strip) }
    /// Samples beyond ±1 since the renderer was prepared.
    public var clippedSamples: Int { clips.load(ordering: .relaxed) }
    /// Updates refused for a NaN level or a strip outside the range, since creation.
    public var refusedUpdates: Int { refused.load(ordering: .relaxed) }

    /// Render thread. A NaN `peak` or `rms` is refused on its own (the other
    /// is still published) and counted; a negative `count` adds nothing.
    @inline(__always) func publish(peak: Float, rms: Float, clips count: Int) {
        if let bits = Self.stored(peak) { peakBits.store(bits, ordering: .relaxed) } else { refuse() }
        if let bits = Self.stored(rms) { rmsBits.store(bits, ordering: .relaxed) } else { refuse() }
        if count > 0 { clips.wrappingAdd(count, ordering: .relaxed) }
    }

    /// Render thread. Refused and counted for a strip outside the range or a NaN `value`.
    @inline(__always) func setStripPeak(_ strip: Int, _ value: Float) {
        guard strip >= 0, strip < stripCount, let bits = Self.stored(value) else { return refuse() }
        levels[strip].store(bits, ordering: .relaxed)
    }

    /// Render thread. The peak as `setStripPeak`; a NaN `rms` is refused on its own and counted.
    @inline(__always) func setStripLevels(_ strip: Int, peak: Float, rms: Float) {
        setStripPeak(strip, peak)
        guard strip >= 0, strip < stripCount else { return }
        if let bits = Self.stored(rms) { levels[stripCount + strip].store(bits, ordering: .relaxed) } else { refuse() }
    }

    func resetClips() { clips.store(0, ordering: .relaxed) }
}
