import Analysis
import Hosting
import OfflineRender
import RenderBatch
import Sampling
import Synchronization
import Threads
import Glibc

/// Why a call failed, by kind: the C ABI's `kind` out-parameter, and the
/// Python exception it becomes (`carillon.MIDIError`, …).
enum CarillonError: Error {
    case midi(String)
    case soundFont(String)
    case option(String)
    case render(String)
    /// A stream's consumer asked the render to stop.
    case stopped

    /// The number the C ABI reports (0 is success).
    var kind: Int32 {
        switch self {
        case .midi: 1
        case .soundFont: 2
        case .option: 3
        case .render: 4
        case .stopped: 5
        }
    }

    var message: String {
        switch self {
        case .midi(let m), .soundFont(let m), .option(let m), .render(let m): m
        case .stopped: "stopped by the stream's consumer"
        }
    }

    /// A render's failure by what it is about: the MIDI file, the SoundFont, or anything else.
    init(_ failure: RenderJob.Failure) {
        switch failure {
        case .midiFile: self = .midi("\(failure)")
        case .sampler: self = .soundFont("\(failure)")
        default: self = .render("\(failure)")
        }
    }
}

/// Interleaved stereo frames collected in memory: the render's sink for the C
/// ABI, in place of `carillon render`'s audio file (the same blocks it writes).
final class MemorySink: RenderSink {
    private(set) var samples = SampleBuffer()
    /// The render's name, for a message.
    let name: String
    init(name: String) { self.name = name }

    func write(_ block: UnsafeBufferPointer<Float>, frames: Int) throws(RenderJob.Failure) {
        guard samples.append(UnsafeBufferPointer(rebasing: block[0..<(2 * frames)])) else {
            throw .scratchFile(path: "\(name) (in memory)", reason: "out of memory for \(samples.count + 2 * frames) samples")
        }
    }
    func finish() throws(RenderJob.Failure) {}
    func discard() { samples = SampleBuffer() }
}

/// Floats in one malloc'd buffer, grown by `realloc` and freed with it: a
/// render's samples, handed to the result as they are, which Python wraps
/// without a copy (`carillon_result_samples`). Not an array: appending to
/// one copies what it holds into new pages at each doubling, where glibc's
/// `realloc` moves a large buffer's pages (`mremap`) (Benchmarks/README.md,
/// "Where the `Renderer`'s time goes besides the render").
final class SampleBuffer {
    private(set) var base: UnsafeMutablePointer<Float>? = nil
    private(set) var count = 0
    private var capacity = 0

    /// Appends `values`; false when the memory for them cannot be had (nothing is changed).
    func append(_ values: UnsafeBufferPointer<Float>) -> Bool {
        guard let from = values.baseAddress, !values.isEmpty else { return true }
        if count + values.count > capacity {
            let wanted = max(count + values.count, 2 * capacity, 1 << 16)
            guard let grown = realloc(base, wanted * MemoryLayout<Float>.stride) else { return false }
            base = grown.bindMemory(to: Float.self, capacity: wanted)
            capacity = wanted
        }
        (base! + count).initialize(from: from, count: values.count)
        count += values.count
        return true
    }

    var buffer: UnsafeBufferPointer<Float> { UnsafeBufferPointer(start: base, count: count) }

    deinit { free(base) }
}

/// A render's frames handed on as they come, in chunks of `chunkFrames`
/// (the last shorter), to a C function: `carillon_render_stream`'s sink.
/// Memory stays bounded whatever the piece's length. The function returns
/// non-zero to stop the render (`stopped`).
final class CallbackSink: RenderSink {
    typealias Callback = @convention(c) (UnsafePointer<Float>?, Int64, UnsafeMutableRawPointer?) -> Int32
    private let callback: Callback
    private let context: UnsafeMutableRawPointer?
    private let chunkFrames: Int
    private var pending: [Float] = []
    let stop = CancellationFlag()

    init(callback: Callback, context: UnsafeMutableRawPointer?, chunkFrames: Int) {
        self.callback = callback; self.context = context; self.chunkFrames = max(1, chunkFrames)
        pending.reserveCapacity(2 * self.chunkFrames)
    }

    func write(_ block: UnsafeBufferPointer<Float>, frames: Int) throws(RenderJob.Failure) {
        var from = 0
        while from < frames {
            let take = min(frames - from, chunkFrames - pending.count / 2)
            pending.append(contentsOf: block[(2 * from)..<(2 * (from + take))])
            from += take
            if pending.count / 2 == chunkFrames { flush() }
        }
    }

    func finish() throws(RenderJob.Failure) { flush() }
    func discard() { pending.removeAll(keepingCapacity: true) }

    private func flush() {
        guard !pending.isEmpty, !stop.isSet else { pending.removeAll(keepingCapacity: true); return }
        let stopped = pending.withUnsafeBufferPointer { callback($0.baseAddress, Int64($0.count / 2), context) } != 0
        pending.removeAll(keepingCapacity: true)
        if stopped { stop.set() }
    }
}

/// One render's output: the frames, the manifest line's facts and the labels.
final class MemoryRender {
    let samples: SampleBuffer
    /// The manifest line `carillon render --manifest` writes for it (JSON).
    let facts: String
    /// notes.csv's lines (header first), with `labels`; nil without.
    let notesCSV: String?
    init(samples: SampleBuffer, facts: String, notesCSV: String?) {
        self.samples = samples; self.facts = facts; self.notesCSV = notesCSV
    }
    var frames: Int { samples.count / 2 }
}

/// The fonts read once and a job per font for each render under way, reused:
/// what `carillon render` does for a batch, for callers that hand it MIDI
/// bytes one at a time, from any number of threads at once. Each render takes
/// an idle job of its font (or makes one) and gives it back; a job renders
/// one file at a time, so two threads never share one.
final class MemoryRenderer: Sendable {
    /// The version written in the facts (`carillon --version`'s).
    static let version = "0.1.0"

    let configuration: RenderConfigurationBox
    let soundFonts: SoundFontSet
    private let fonts: [SharedSoundFont]
    private let soundFontBytes: [Int]
    /// Idle jobs, by font.
    private let idle: Mutex<[[RenderJob.Unchecked]]>

    init(json: String) throws(CarillonError) {
        let configuration: RenderConfiguration
        do throws(OptionError) { configuration = try RenderConfiguration(json: json) } catch { throw .option(error.description) }
        self.configuration = RenderConfigurationBox(configuration)
        let paths: [String]
        do throws(SoundFontLocator.Failure) {
            paths = configuration.soundFonts.isEmpty
                ? [try SoundFontLocator().locate()]
                : try configuration.soundFonts.map { p throws(SoundFontLocator.Failure) in try SoundFontLocator(explicitPath: p).locate() }
        } catch { throw .soundFont("\(error)") }
        do throws(SoundFontSetError) { soundFonts = try SoundFontSet(paths: paths, pick: .hash) } catch { throw .option("\(error)") }
        fonts = soundFonts.fonts.map { SharedSoundFont(path: $0.path) }
        soundFontBytes = soundFonts.fonts.map { font in
            var info = stat()
            return stat(font.path, &info) == 0 ? Int(info.st_size) : 0
        }
        // A job per font now: a bad font is an error here, before any render.
        // With `timbres` over several fonts, each draws across all of them (the picked one its home).
        let drawSet = configuration.augmentation?.timbres != nil && fonts.count > 1 ? fonts : []
        var first: [[RenderJob.Unchecked]] = []
        for font in fonts {
            do throws(RenderJob.Failure) { first.append([RenderJob.Unchecked(try RenderJob(soundFont: font, options: configuration.job, drawSet: drawSet))]) } catch {
                if case .sampler = error { throw .soundFont("\(error)") }
                throw .option("\(error)")
            }
        }
        // A pool's presets against the fonts now read (`--timbres`, as the CLI checks them).
        do throws(RenderOptionError) {
            try RenderOptionChecks.timbrePool(configuration.augmentation,
                                              fonts: zip(soundFonts.fonts, first).map { (name: $0.fileName, job: $1[0].job) })
        } catch { throw .option(error.description) }
        idle = Mutex(first)
    }

    /// Renders the MIDI file `midi` (named `name` in messages; `key` picks its
    /// font and draws its augmentation, as a batch's key does). With `stream`,
    /// the frames go to it as they come and the result holds none.
    func render(midi: [UInt8], name: String, key: String, stream: CallbackSink? = nil) throws(CarillonError) -> MemoryRender {
        let configuration = self.configuration.value
        if stream != nil && configuration.job.threads > 1 {
            throw .option("a stream renders on one synth (threads=1): a pool may start a piece again on one synth, "
                + "and blocks handed on cannot be taken back")
        }
        let font = soundFonts.picks(forKey: key)[0]
        let drawSet = configuration.augmentation?.timbres != nil && fonts.count > 1 ? fonts : []
        let job: RenderJob
        if let taken = idle.withLock({ $0[font].popLast() }) { job = taken.job } else {
            do throws(RenderJob.Failure) { job = try RenderJob(soundFont: fonts[font], options: configuration.job, drawSet: drawSet) } catch {
                throw CarillonError(error)
            }
        }
        defer { _ = job.log.take(); idle.withLock { $0[font].append(RenderJob.Unchecked(job)) } }
        let draw = configuration.augmentation?.draw(forKey: key)
        var sink: MemorySink? = nil
        let summary: RenderJob.Summary
        do throws(RenderJob.Failure) {
            // A piece rendered again on one synth asks for a new sink: the last one holds it.
            // (A stream is on one synth: its blocks, once handed on, cannot be taken back.)
            summary = try job.render(input: name, midi: midi, to: .sink(named: name) { () throws(RenderJob.Failure) -> any RenderSink in
                if let stream { return stream }
                let made = MemorySink(name: name)
                sink = made
                return made
            }, augmentation: draw, cancel: stream?.stop)
        } catch {
            if case .interrupted = error { throw .stopped }
            throw CarillonError(error)
        }
        guard let samples = stream == nil ? sink?.samples : SampleBuffer() else { preconditionFailure("the render made its sink") }
        var entry = ManifestEntry(input: name, output: "", status: .ok, carillonVersion: Self.version,
                                  soundFont: soundFonts.fonts[font].path, soundFontBytes: soundFontBytes[font])
        entry.augmentation = draw
        entry.record(summary)
        if configuration.measuresLoudness { entry.loudness = try Self.loudness(samples, sampleRate: configuration.job.sampleRate) }
        let csv = configuration.labels ? summary.labels.map { $0.noteRows(.csv).joined(separator: "\n") + "\n" } : nil
        return MemoryRender(samples: samples, facts: entry.jsonLine, notesCSV: csv)
    }

    /// The integrated loudness of `samples` (libebur128), as the manifest measures it.
    private static func loudness(_ samples: SampleBuffer, sampleRate: Int) throws(CarillonError) -> Double {
        do throws(LoudnessError) {
            let meter = try LoudnessMeter(channels: 2, sampleRate: sampleRate, truePeak: false)
            try meter.add(samples.buffer, frames: samples.count / 2)
            return try meter.integratedLoudness()
        } catch { throw .render("\(error)") }
    }
}

/// The configuration, immutable after parsing: shared by the render threads.
final class RenderConfigurationBox: @unchecked Sendable {
    let value: RenderConfiguration
    init(_ value: RenderConfiguration) { self.value = value }
}

extension RenderJob {
    /// A job handed between threads through the idle list: only one thread
    /// holds it at a time (taken under the lock, given back under it).
    struct Unchecked: @unchecked Sendable {
        let job: RenderJob
        init(_ job: RenderJob) { self.job = job }
    }
}
