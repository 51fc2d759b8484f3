import Analysis
import Engine
import SoundFile
import Synchronization
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// Why an audio-file track could not be opened or decoded; names the file.
public enum FileTrackError: Error, Equatable, Sendable, CustomStringConvertible {
    case file(SoundFileError)
    case resampling(path: String, ResamplerError)
    case thread(path: String, ThreadError)

    public var description: String {
        switch self {
        case .file(let error): "track: \(error)"
        case .resampling(let path, let error): "track \(path): \(error)"
        case .thread(let path, let error): "track \(path): cannot start its decoder: \(error)"
        }
    }
}

/// An audio file played as a track beside the instrument, with the piece:
/// it sounds from the piece's start, follows its seeks, loops, stops and
/// starts, and goes silent past its own end.
///
/// A decoder thread reads the file (libsndfile), converts it to the output
/// rate (libsamplerate) when the rates differ, and writes stereo frames into
/// a `FrameRing` that `render` reads: the render thread does no file I/O.
/// The first `prerollSeconds` stay decoded in memory, so a start, a loop or
/// a seek back into them plays at once while the decoder refills the ring
/// behind them; a seek elsewhere is silent until the decoder has the new
/// place (`seekGapFrames`), and a ring that runs dry plays silence
/// (`underruns`). With `waitsForDecoder` (offline rendering), `render`
/// waits for the decoder instead: nothing is ever missed, and the same
/// render gives the same samples every time.
///
/// Threads: `init` and `close` on the owner's thread; `render` on the render
/// thread (real-time safe unless `waitsForDecoder`); the counters from any.
/// The tempo scale does not stretch a track: it plays at its own speed and
/// follows the piece's position only on a jump (a seek, a loop, a start).
public final class FileTrack: TrackSource, @unchecked Sendable {
    public let name: String
    public let path: String
    /// The output rate, frames per second.
    public let sampleRate: Int
    /// The file's own rate.
    public let fileRate: Int
    public let fileChannels: Int
    /// Seconds of audio in the file.
    public let duration: Double
    public let waitsForDecoder: Bool

    /// How far the piece's position may move from where the track expects it
    /// within one block before the track treats it as a jump and seeks.
    static let jumpTolerance = 0.1
    /// Input frames the decoder reads per step.
    static let chunkFrames = 4096

    private let ring: FrameRing
    /// The first seconds at the output rate, planar: left then right.
    private let preroll: UnsafeMutablePointer<Float>
    private let prerollFrames: Int
    /// The whole file fits in the preroll: no decoder thread.
    private let prerollHoldsFile: Bool

    // Render thread → decoder: where to decode from (output frames), with a generation count.
    private let requestGeneration = Atomic<Int>(0)
    private let requestFrame = Atomic<Int>(0)
    // Decoder → render thread: the generation the ring holds from `segmentStart`, and where it ends.
    private let servedGeneration = Atomic<Int>(0)
    private let segmentStart = Atomic<Int>(0)
    private let segmentEnd = Atomic<Int>(Int.max)
    private let failed = Atomic<Bool>(false)
    private let failure = Mutex<FileTrackError?>(nil)
    private let stopping = Atomic<Bool>(false)

    private let underrunCount = Atomic<Int>(0)
    private let gapFrames = Atomic<Int>(0)

    // Render thread state.
    private enum Mode { case preroll, ring, ended }
    private var mode = Mode.preroll
    private var cursor = 0
    private var generation = 0
    private var adopted = true
    /// The output frame at the ring's read position, for `generation` once adopted.
    private var ringFrame = 0
    private var lastPosition = 0.0
    private var lastFrames = 0
    private var wasPlaying = false
    private var started = false
    private var sinceSeek = false

    private let decoder: Decoder
    private var thread: JoinableThread?

    /// Opens `path` and decodes its first seconds; starts the decoder thread.
    /// `name` is the strip's (the file's name without folder by default).
    public init(path: String, name: String? = nil, sampleRate: Int, waitsForDecoder: Bool = false,
                prerollSeconds: Double = 2, ringSeconds: Double = 3) throws(FileTrackError) {
        precondition(sampleRate > 0)
        let stream: AudioFileStream
        do { stream = try AudioFileStream(path: path) } catch { throw .file(error) }
        self.path = path
        self.name = name ?? String(path.split(separator: "/").last ?? Substring(path))
        self.sampleRate = sampleRate
        self.waitsForDecoder = waitsForDecoder
        fileRate = stream.sampleRate
        fileChannels = stream.channels
        duration = stream.duration
        do { decoder = try Decoder(stream: stream, outputRate: sampleRate) } catch { throw .resampling(path: path, error) }
        ring = FrameRing(capacity: max(Self.chunkFrames * 4, Int(ringSeconds * Double(sampleRate))))

        // The preroll, decoded here; the decoder's overshoot past it starts the ring (generation 0).
        let wanted = max(1, Int(prerollSeconds * Double(sampleRate)))
        var frames = [Float]()
        frames.reserveCapacity(2 * (wanted + Self.chunkFrames * 2))
        do {
            while frames.count / 2 < wanted, let chunk = try decoder.next() {
                frames.append(contentsOf: UnsafeBufferPointer(start: chunk.samples, count: 2 * chunk.frames))
            }
        } catch { throw error }
        prerollFrames = min(wanted, frames.count / 2)
        prerollHoldsFile = decoder.atEnd
        preroll = .allocate(capacity: 2 * max(1, prerollFrames))
        for i in 0..<prerollFrames { preroll[i] = frames[2 * i]; preroll[prerollFrames + i] = frames[2 * i + 1] }
        let overshoot = frames.count / 2 - prerollFrames
        frames.withUnsafeBufferPointer { _ = ring.write($0.baseAddress! + 2 * prerollFrames, frames: overshoot) }
        ringFrame = prerollFrames
        if decoder.atEnd { segmentEnd.store(ring.writePosition, ordering: .releasing) }
        requestFrame.store(prerollFrames, ordering: .relaxed)

        if !prerollHoldsFile {
            do {
                let live = !waitsForDecoder
                thread = try JoinableThread(name: "track") { [self] in
                    // Live, the decoder feeds the render thread: above ordinary work, below the
                    // output (70) and input (75) threads. Refused (no rtprio): normal priority.
                    if live { _ = RealtimeScheduling.requestFIFO(priority: 60) }
                    decode()
                }
            } catch { preroll.deallocate(); throw .thread(path: path, error) }
        }
    }

    deinit {
        close()
        preroll.deallocate()
    }

    /// Stops the decoder thread. The owner's thread, after rendering ends.
    public func close() {
        stopping.store(true, ordering: .releasing)
        thread?.join()
        thread = nil
    }

    /// Blocks that found the ring empty while the file still had audio (not waiting on a seek). Any thread.
    public var underruns: Int { underrunCount.load(ordering: .relaxed) }
    /// Frames of silence played while the decoder moved to a seek's target. Any thread.
    public var seekGapFrames: Int { gapFrames.load(ordering: .relaxed) }
    /// The decoder's error, after which the track is silent. Any thread.
    public var error: FileTrackError? { failure.withLock { $0 } }

    // MARK: Render thread

    public func render(frames: Int, position: Double, playing: Bool,
                       left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        guard playing else {
            left.update(repeating: 0, count: frames); right.update(repeating: 0, count: frames)
            wasPlaying = false
            return
        }
        let expected = wasPlaying ? lastPosition + Double(lastFrames) / Double(sampleRate) : lastPosition
        if !started || abs(position - expected) > Self.jumpTolerance {
            jump(toFrame: Int((position * Double(sampleRate)).rounded()))
            started = true
        }
        lastPosition = position; lastFrames = frames; wasPlaying = true

        var done = 0
        while done < frames {
            switch mode {
            case .ended:
                (left + done).update(repeating: 0, count: frames - done)
                (right + done).update(repeating: 0, count: frames - done)
                done = frames
            case .preroll:
                let n = min(frames - done, prerollFrames - cursor)
                (left + done).update(from: preroll + cursor, count: n)
                (right + done).update(from: preroll + prerollFrames + cursor, count: n)
                cursor += n; done += n
                if cursor >= prerollFrames { mode = prerollHoldsFile ? .ended : .ring }
            case .ring:
                if !adopted {
                    guard servedGeneration.load(ordering: .acquiring) == generation else {
                        if waitForDecoder() { continue }
                        miss(from: done, frames: frames, left: left, right: right)
                        return
                    }
                    ring.skip(to: segmentStart.load(ordering: .relaxed))
                    adopted = true
                }
                // After silence the piece has moved on: drop what was due meanwhile.
                if ringFrame < cursor {
                    let late = min(cursor - ringFrame, ring.readableFrames)
                    ring.skip(to: ring.readPosition + late)
                    ringFrame += late
                }
                let n = ringFrame == cursor ? ring.readPlanar(left: left + done, right: right + done, frames: frames - done) : 0
                if n > 0 { sinceSeek = false }
                cursor += n; ringFrame += n; done += n
                if done < frames {
                    if ring.readPosition >= segmentEnd.load(ordering: .acquiring) || failed.load(ordering: .acquiring) {
                        mode = .ended
                    } else if !waitForDecoder() {
                        miss(from: done, frames: frames, left: left, right: right)
                        return
                    }
                }
            }
        }
    }

    /// Offline: sleeps a moment for the decoder and returns true; live: false.
    @inline(__always)
    private func waitForDecoder() -> Bool {
        guard waitsForDecoder, !failed.load(ordering: .acquiring) else { return false }
        usleep(100)
        return true
    }

    /// Silence for the rest of the block, counted as a seek's gap or an underrun.
    @inline(__always)
    private func miss(from done: Int, frames: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        (left + done).update(repeating: 0, count: frames - done)
        (right + done).update(repeating: 0, count: frames - done)
        if sinceSeek { gapFrames.add(frames - done, ordering: .relaxed) } else { underrunCount.add(1, ordering: .relaxed) }
        cursor += frames - done   // the piece goes on: the track catches up when the decoder does
    }

    /// The piece jumped to output frame `frame`: play from the preroll, or ask the decoder.
    private func jump(toFrame frame: Int) {
        cursor = max(0, frame)
        if cursor < prerollFrames {
            mode = .preroll
            // The ring must continue where the preroll ends.
            if !(adopted && ringFrame == prerollFrames) && !prerollHoldsFile { request(prerollFrames) }
            sinceSeek = false
        } else if prerollHoldsFile || cursor >= decoder.outputFrames {
            mode = .ended
        } else {
            mode = .ring
            // A jump ahead into what the ring already holds only skips; elsewhere the decoder seeks.
            let inRing = adopted && ringFrame <= cursor && cursor - ringFrame <= ring.readableFrames
            if !inRing { request(cursor) }
            sinceSeek = true
        }
    }

    private func request(_ frame: Int) {
        requestFrame.store(frame, ordering: .relaxed)
        generation += 1
        requestGeneration.store(generation, ordering: .releasing)
        adopted = false
        ringFrame = frame
    }

    // MARK: Decoder thread

    private func decode() {
        var served = 0
        while !stopping.load(ordering: .acquiring) {
            let wanted = requestGeneration.load(ordering: .acquiring)
            if wanted != served {
                let frame = requestFrame.load(ordering: .relaxed)
                do { try decoder.seek(toOutputFrame: frame, exactSeekFrames: prerollFrames) } catch { return fail(error) }
                served = wanted
                segmentEnd.store(Int.max, ordering: .relaxed)
                segmentStart.store(ring.writePosition, ordering: .relaxed)
                servedGeneration.store(served, ordering: .releasing)
                continue
            }
            guard !decoder.atEnd, ring.writableFrames >= decoder.maximumChunkOutput else {
                usleep(waitsForDecoder ? 200 : 2_000)
                continue
            }
            do {
                if let chunk = try decoder.next() {
                    // The end is published before the frames that reach it, so a reader never takes their absence for an underrun.
                    if decoder.atEnd { segmentEnd.store(ring.writePosition + chunk.frames, ordering: .releasing) }
                    ring.write(chunk.samples, frames: chunk.frames)
                } else {
                    segmentEnd.store(ring.writePosition, ordering: .releasing)
                }
            } catch { return fail(error) }
        }
    }

    private func fail(_ error: FileTrackError) {
        failure.withLock { $0 = error }
        failed.store(true, ordering: .releasing)
    }

    /// The file read in steps of `chunkFrames`, converted to the output rate:
    /// the same steps from the same place give the same samples.
    final class Decoder {
        let stream: AudioFileStream
        let resampler: Resampler?
        /// The file's length at the output rate (approximate when resampled).
        let outputFrames: Int
        private let input: UnsafeMutablePointer<Float>
        private let output: UnsafeMutablePointer<Float>
        private let outputCapacity: Int
        private(set) var atEnd = false
        private var fileEnded = false

        init(stream: AudioFileStream, outputRate: Int) throws(ResamplerError) {
            self.stream = stream
            resampler = stream.sampleRate == outputRate ? nil : try Resampler(from: stream.sampleRate, to: outputRate)
            outputFrames = Int((Double(stream.frames) * Double(outputRate) / Double(stream.sampleRate)).rounded())
            input = .allocate(capacity: 2 * FileTrack.chunkFrames)
            outputCapacity = resampler?.maximumOutput(forInput: FileTrack.chunkFrames) ?? FileTrack.chunkFrames
            output = .allocate(capacity: 2 * outputCapacity)
        }

        deinit { input.deallocate(); output.deallocate() }

        var maximumChunkOutput: Int { outputCapacity }

        /// The next converted frames (nil at the end); valid until the next call.
        func next() throws(FileTrackError) -> (samples: UnsafePointer<Float>, frames: Int)? {
            guard !atEnd else { return nil }
            let read: Int
            do { read = fileEnded ? 0 : try stream.read(into: input, frames: FileTrack.chunkFrames) } catch { throw .file(error) }
            if read < FileTrack.chunkFrames { fileEnded = true }
            guard let resampler else {
                if fileEnded { atEnd = true }
                return (UnsafePointer(input), read)
            }
            do {
                let (used, made) = try resampler.process(input: input, inputFrames: read, output: output,
                                                         outputCapacity: outputCapacity, endOfInput: fileEnded)
                precondition(used == read, "the converter keeps whole chunks: its output room is their maximum")
                // After the last input, the converter's tail comes out over further calls until it gives nothing.
                if fileEnded && made == 0 { atEnd = true }
                let dropped = min(pendingDrop, made)
                pendingDrop -= dropped
                return (UnsafePointer(output + 2 * dropped), made - dropped)
            } catch { throw .resampling(path: stream.path, error) }
        }

        /// Decodes from output frame `frame` on. When resampling and `frame`
        /// is within `exactSeekFrames` (the preroll's end, where a loop to the
        /// start continues), the converter runs again from the file's first
        /// frame and drops what comes before `frame`: the samples continue
        /// exactly those of a play from the start. Further in, it starts at
        /// the nearest input frame (a fresh converter: a few ms of its warm-up).
        func seek(toOutputFrame frame: Int, exactSeekFrames: Int) throws(FileTrackError) {
            atEnd = false; fileEnded = false; pendingDrop = 0
            guard let resampler else {
                do { try stream.seek(toFrame: frame) } catch { throw .file(error) }
                return
            }
            do { try resampler.reset() } catch { throw .resampling(path: stream.path, error) }
            let exact = frame <= exactSeekFrames
            let input = exact ? 0 : Int((Double(frame) / resampler.ratio).rounded())
            if exact { pendingDrop = frame }
            do { try stream.seek(toFrame: input) } catch { throw .file(error) }
        }

        /// Output frames still to drop after an exact seek.
        private var pendingDrop = 0
    }
}
