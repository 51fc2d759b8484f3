import Synchronization

/// Levels for a UI to read from any thread, published by the render thread
/// once per block: the last block's master peak and RMS (linear), each
/// strip's peak, and the count of samples beyond full scale.
///
/// Bad input never traps and never reaches a reader: a level is a magnitude,
/// so a negative one is stored as 0 and +inf as `Float.greatestFiniteMagnitude`;
/// a NaN level is refused (the meter keeps its last value) and so is a strip
/// index outside 0 ..< `stripCount`; both are counted in `refusedUpdates`.
/// Reading a strip outside the range gives 0.
public final class Meters: @unchecked Sendable {
    public let stripCount: Int
    /// One Float bit pattern per strip.
    private let strips: UnsafeMutablePointer<Atomic<UInt32>>
    private let peakBits = Atomic<UInt32>(0)
    private let rmsBits = Atomic<UInt32>(0)
    private let clips = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)

    /// A negative `stripCount` is taken as 0.
    init(stripCount: Int) {
        self.stripCount = max(0, stripCount)
        strips = .allocate(capacity: self.stripCount)
        for i in 0..<self.stripCount { (strips + i).initialize(to: Atomic(0)) }
    }

    deinit {
        strips.deinitialize(count: stripCount); strips.deallocate()
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
        return Float(bitPattern: strips[strip].load(ordering: .relaxed))
    }
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
        strips[strip].store(bits, ordering: .relaxed)
    }

    func resetClips() { clips.store(0, ordering: .relaxed) }
}
