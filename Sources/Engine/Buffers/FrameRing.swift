import Synchronization

/// A lock-free single-producer single-consumer ring of interleaved float
/// frames: one thread writes, one other thread reads, neither waits nor
/// allocates. Positions count frames since creation (`writePosition`,
/// `readPosition`); a frame's slot is its position modulo the capacity.
///
/// Used where audio crosses between the render (or output) thread and a
/// non-real-time thread: an audio-file track's decoder feeding the render
/// thread, the output thread feeding the spectrum analyser.
public final class FrameRing: @unchecked Sendable {
    public let channels: Int
    /// Frames the ring holds (a power of two).
    public let capacity: Int
    private let storage: UnsafeMutablePointer<Float>
    private let mask: Int
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)

    /// `capacity` frames, rounded up to a power of two. Not on the render thread.
    public init(capacity: Int, channels: Int = 2) {
        precondition(capacity > 0 && channels > 0)
        var size = 1
        while size < capacity { size <<= 1 }
        self.capacity = size
        self.channels = channels
        mask = size - 1
        storage = .allocate(capacity: size * channels)
        storage.initialize(repeating: 0, count: size * channels)
    }

    deinit { storage.deallocate() }

    // MARK: Producer

    /// Frames written since creation. Producer (exact) or any thread (a recent value).
    public var writePosition: Int { head.load(ordering: .acquiring) }

    /// Frames the producer may write now.
    public var writableFrames: Int { capacity - (head.load(ordering: .relaxed) - tail.load(ordering: .acquiring)) }

    /// Appends `frames` interleaved frames, all or none: false when they do not fit. Producer only.
    @discardableResult
    public func write(_ source: UnsafePointer<Float>, frames: Int) -> Bool {
        guard frames <= writableFrames else { return false }
        let h = head.load(ordering: .relaxed)
        copy(frames: frames, at: h) { slot, offset, n in
            (self.storage + slot * self.channels).update(from: source + offset * self.channels, count: n * self.channels)
        }
        head.store(h + frames, ordering: .releasing)
        return true
    }

    // MARK: Consumer

    /// Frames read (or skipped) since creation. Consumer (exact) or any thread.
    public var readPosition: Int { tail.load(ordering: .relaxed) }

    /// Frames the consumer may read now.
    public var readableFrames: Int { head.load(ordering: .acquiring) - tail.load(ordering: .relaxed) }

    /// Reads up to `frames` interleaved frames into `destination`; returns how many. Consumer only.
    public func read(into destination: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        let n = min(frames, readableFrames)
        let t = tail.load(ordering: .relaxed)
        copy(frames: n, at: t) { slot, offset, count in
            (destination + offset * self.channels).update(from: self.storage + slot * self.channels, count: count * self.channels)
        }
        tail.store(t + n, ordering: .releasing)
        return n
    }

    /// Reads up to `frames` stereo frames as planar left and right; returns how many. Consumer only.
    public func readPlanar(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        precondition(channels == 2)
        let n = min(frames, readableFrames)
        let t = tail.load(ordering: .relaxed)
        copy(frames: n, at: t) { slot, offset, count in
            let from = self.storage + slot * 2
            for i in 0..<count { left[offset + i] = from[2 * i]; right[offset + i] = from[2 * i + 1] }
        }
        tail.store(t + n, ordering: .releasing)
        return n
    }

    /// Drops what is readable up to `position` (at most the write position). Consumer only.
    public func skip(to position: Int) {
        let t = tail.load(ordering: .relaxed)
        let target = min(max(position, t), head.load(ordering: .acquiring))
        tail.store(target, ordering: .releasing)
    }

    /// Calls `body(slot, offset, count)` for the one or two contiguous runs of `frames` frames from `position`.
    @inline(__always)
    private func copy(frames: Int, at position: Int, _ body: (Int, Int, Int) -> Void) {
        guard frames > 0 else { return }
        let slot = position & mask
        let first = min(frames, capacity - slot)
        body(slot, 0, first)
        if first < frames { body(0, first, frames - first) }
    }
}
