import Atomics

/// Levels for a UI to read from any thread, published by the render thread
/// once per block: the last block's master peak and RMS (linear), each
/// strip's peak, and the count of samples beyond full scale.
public final class Meters: @unchecked Sendable {
    public let stripCount: Int
    private let words: UnsafeMutablePointer<UInt32.AtomicRepresentation>
    private let clips: UnsafeAtomic<Int>

    init(stripCount: Int) {
        self.stripCount = stripCount
        words = .allocate(capacity: 2 + stripCount)
        for i in 0..<(2 + stripCount) { (words + i).initialize(to: .init(0)) }
        clips = .create(0)
    }

    deinit {
        words.deinitialize(count: 2 + stripCount); words.deallocate()
        _ = clips.destroy()
    }

    @inline(__always) private func word(_ i: Int) -> UnsafeAtomic<UInt32> { UnsafeAtomic(at: words + i) }

    public var peak: Float { Float(bitPattern: word(0).load(ordering: .relaxed)) }
    public var rms: Float { Float(bitPattern: word(1).load(ordering: .relaxed)) }
    public func stripPeak(_ strip: Int) -> Float { Float(bitPattern: word(2 + strip).load(ordering: .relaxed)) }
    /// Samples beyond ±1 since the renderer was prepared.
    public var clippedSamples: Int { clips.load(ordering: .relaxed) }

    @inline(__always) func publish(peak: Float, rms: Float, clips count: Int) {
        word(0).store(peak.bitPattern, ordering: .relaxed)
        word(1).store(rms.bitPattern, ordering: .relaxed)
        if count > 0 { clips.wrappingIncrement(by: count, ordering: .relaxed) }
    }

    @inline(__always) func setStripPeak(_ strip: Int, _ value: Float) {
        word(2 + strip).store(value.bitPattern, ordering: .relaxed)
    }

    func resetClips() { clips.store(0, ordering: .relaxed) }
}
