import Analysis
import Engine
import Synchronization
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// The master output's spectrum for the view and the web surface: the
/// output thread `push`es a copy of each block into a `FrameRing`; an
/// analyser thread takes the blocks out, keeps the latest `size` samples
/// (mid: the mean of left and right) and, every `interval` seconds, runs a
/// `SpectrumAnalyzer` (FFTW) over them and publishes the band levels.
///
/// Threads: `push` from one producer (the output thread; real-time safe: a
/// copy, no allocation, lock or wait; a block that finds the ring full is
/// counted in `droppedBlocks`); `start`, `stop` from the owner's; `levels`
/// from any.
public final class SpectrumTap: @unchecked Sendable {
    public let bands: [SpectrumBand]
    private let ring: FrameRing
    private let analyzer: SpectrumAnalyzer
    private let interval: Double
    private let published: Mutex<[Float]>
    private let dropped = Atomic<Int>(0)
    private let analyses = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private var thread: JoinableThread?

    /// Makes the FFTW plan now, on the caller's thread.
    public init(sampleRate: Int, size: Int = 4096, interval: Double = 0.05) throws(SpectrumError) {
        analyzer = try SpectrumAnalyzer(sampleRate: Double(sampleRate), size: size)
        bands = analyzer.bands
        self.interval = interval
        // Room for a quarter second or two transforms, whichever is more: the analyser polls far more often.
        ring = FrameRing(capacity: max(2 * size, sampleRate / 4))
        published = Mutex(analyzer.levels)
    }

    deinit { stop() }

    /// Each band's level in dB (`SpectrumAnalyzer.floor` for silence). Any thread.
    public var levels: [Float] { published.withLock { $0 } }
    /// Blocks lost because the analyser had fallen behind. Any thread.
    public var droppedBlocks: Int { dropped.load(ordering: .relaxed) }
    /// Spectra computed so far. Any thread.
    public var analysisCount: Int { analyses.load(ordering: .relaxed) }

    /// Copies one block of interleaved stereo into the ring. The producer thread only; real-time safe.
    public func push(_ block: UnsafeBufferPointer<Float>, frames: Int) {
        guard let base = block.baseAddress, block.count >= 2 * frames, ring.write(base, frames: frames) else {
            dropped.add(1, ordering: .relaxed)
            return
        }
    }

    /// Starts the analyser thread.
    public func start() throws(ThreadError) {
        guard thread == nil else { return }
        stopping.store(false, ordering: .releasing)
        thread = try JoinableThread(name: "spectrum") { [self] in run() }
    }

    /// Stops the analyser thread. Idempotent.
    public func stop() {
        stopping.store(true, ordering: .releasing)
        thread?.join()
        thread = nil
    }

    private func run() {
        let size = analyzer.size
        var history = [Float](repeating: 0, count: size)
        var chunk = [Float](repeating: 0, count: 2 * 1024)
        var filled = 0, fresh = 0
        let pause = UInt32(interval * 1_000_000)
        while !stopping.load(ordering: .acquiring) {
            // Everything pushed since the last look, into the mono history (newest last).
            while true {
                let n = chunk.withUnsafeMutableBufferPointer { ring.read(into: $0.baseAddress!, frames: 1024) }
                if n == 0 { break }
                history.removeFirst(n)
                for i in 0..<n { history.append(0.5 * (chunk[2 * i] + chunk[2 * i + 1])) }
                filled = min(size, filled + n); fresh += n
            }
            if fresh > 0 && filled == size {
                fresh = 0
                let levels = history.withUnsafeBufferPointer { analyzer.analyze($0, elapsed: interval) }
                published.withLock { $0 = levels }
                analyses.add(1, ordering: .relaxed)
            }
            usleep(pause)
        }
    }
}
