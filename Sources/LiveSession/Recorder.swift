import SoundFile
import Synchronization
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// Records what the output thread plays: `push` copies each rendered block
/// into a preallocated single-producer single-consumer ring; a writer thread
/// takes blocks out and writes them with `AudioFileWriter` (temporary file,
/// renamed by `finish`). A block that finds the ring full is dropped and
/// counted, never waited for: the output thread must not block on the disk.
///
/// Threads: `push` from one producer (the output thread; real-time safe: no
/// allocation, lock, log or syscall); `start`, `finish`, `discard` from the
/// owner's thread; the counters from any.
public final class Recorder: @unchecked Sendable {
    public let path: String
    public let blockFrames: Int
    /// Slots in the ring: blocks that may wait for the disk.
    public let capacity: Int
    private let channels: Int
    private let writer: AudioFileWriter
    private let slots: UnsafeMutablePointer<Float>
    private let slotFrames: UnsafeMutablePointer<Int>
    /// Blocks pushed (producer's count) and taken (consumer's): monotonic, slot = count % capacity.
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    private let written = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private let failure = Mutex<SoundFileError?>(nil)
    private var thread: JoinableThread?
    private var closed = false

    /// Opens the file (its temporary twin) now, so a wrong path or format
    /// fails before playing starts. `seconds`: how much audio the ring holds
    /// while the disk or the writer thread is slow (≥ 8 blocks). 10 s by
    /// default: on a loaded machine the real-time threads can keep the writer
    /// (normal priority) off the CPU for seconds, and a 2 s ring once dropped
    /// 12 blocks in the VM (a fresh-clone CI run here, 2026-11-27); 10 s of stereo floats at 48 kHz is 3.7 MiB.
    public init(path: String, format: AudioFileFormat, encoding: SampleEncoding? = nil, sampleRate: Int,
                blockFrames: Int, channels: Int = 2, seconds: Double = 10) throws(SoundFileError) {
        precondition(blockFrames > 0 && channels > 0)
        writer = try AudioFileWriter(path: path, format: format, encoding: encoding,
                                     sampleRate: sampleRate, channels: channels)
        self.path = path
        self.blockFrames = blockFrames
        self.channels = channels
        capacity = max(8, Int((seconds * Double(sampleRate) / Double(blockFrames)).rounded(.up)))
        slots = .allocate(capacity: capacity * blockFrames * channels)
        slots.initialize(repeating: 0, count: capacity * blockFrames * channels)
        slotFrames = .allocate(capacity: capacity)
        slotFrames.initialize(repeating: 0, count: capacity)
    }

    deinit {
        stopping.store(true, ordering: .releasing)
        thread?.join()
        writer.discard()   // no-op once finished
        slots.deallocate()
        slotFrames.deallocate()
    }

    /// Blocks lost because the ring was full (or the file had failed). Any thread.
    public var droppedBlocks: Int { dropped.load(ordering: .relaxed) }
    /// Blocks written to the file. Any thread.
    public var writtenBlocks: Int { written.load(ordering: .relaxed) }
    /// The first write error, after which blocks are dropped. Any thread.
    public var error: SoundFileError? { failure.withLock { $0 } }

    /// Copies one block (`frames` ≤ `blockFrames` interleaved frames) into
    /// the ring. Returns false, counting the drop, when the ring is full.
    /// The producer thread only; real-time safe.
    @discardableResult
    public func push(_ block: UnsafeBufferPointer<Float>, frames: Int) -> Bool {
        let h = head.load(ordering: .relaxed)
        guard h - tail.load(ordering: .acquiring) < capacity, frames <= blockFrames, block.count >= frames * channels else {
            dropped.add(1, ordering: .relaxed)
            return false
        }
        let slot = h % capacity
        (slots + slot * blockFrames * channels).update(from: block.baseAddress!, count: frames * channels)
        slotFrames[slot] = frames
        head.store(h + 1, ordering: .releasing)
        return true
    }

    /// Starts the writer thread.
    public func start() throws(ThreadError) {
        guard thread == nil, !closed else { return }
        // Poll at a quarter of the ring's span at most: the ring never fills while the disk keeps up.
        let pause = UInt32(max(500, min(5_000, Double(capacity * blockFrames) / Double(writer.sampleRate) * 250_000)))
        thread = try JoinableThread(name: "recorder") { [self] in
            while !stopping.load(ordering: .acquiring) {
                if drain() == 0 { usleep(pause) }
            }
            drain()   // what was pushed before stop
        }
    }

    /// Writes every block in the ring; returns how many. The writer thread (or `finish`) only.
    @discardableResult
    private func drain() -> Int {
        var t = tail.load(ordering: .relaxed)
        let h = head.load(ordering: .acquiring)
        let count = h - t
        while t < h {
            let slot = t % capacity
            if failure.withLock({ $0 }) == nil {
                do throws(SoundFileError) {
                    try writer.write(UnsafeBufferPointer(start: slots + slot * blockFrames * channels,
                                                         count: slotFrames[slot] * channels), frames: slotFrames[slot])
                    written.add(1, ordering: .relaxed)
                } catch {
                    failure.withLock { $0 = error }
                    dropped.add(1, ordering: .relaxed)
                }
            } else {
                dropped.add(1, ordering: .relaxed)
            }
            t += 1
            tail.store(t, ordering: .releasing)
        }
        return count
    }

    /// Stops the writer after it has written everything pushed so far, then
    /// closes the file and renames it onto `path`. Call after the producer
    /// has stopped pushing. Throws the first write error, if any (the file is then removed).
    public func finish() throws(SoundFileError) {
        guard !closed else { return }
        closed = true
        stopping.store(true, ordering: .releasing)
        if let thread { thread.join() } else { drain() }
        thread = nil
        if let error = failure.withLock({ $0 }) { writer.discard(); throw error }
        try writer.finish()
    }

    /// Stops the writer and removes the temporary file.
    public func discard() {
        closed = true
        stopping.store(true, ordering: .releasing)
        thread?.join()
        thread = nil
        writer.discard()
    }

    /// Seconds written so far.
    public var secondsWritten: Double { Double(writer.framesWritten) / Double(writer.sampleRate) }
}
