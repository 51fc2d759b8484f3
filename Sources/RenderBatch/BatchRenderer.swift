import OfflineRender
import Sampling
import SoundFile
import Synchronization
import Threads
import Glibc
#if canImport(Glibc)
#endif

/// Renders a batch of files on a pool of worker threads, each with its own
/// `RenderJob` for each SoundFont it meets (its own synths; FluidSynth synths
/// share nothing mutable). Each font is read once for the process
/// (`SharedSoundFont`) and its jobs share that: no worker holds a font's
/// samples whole, each piece's synths load what its notes sound.
/// Workers take the next file from a shared index, largest file first
/// (`largestFirst`), so long and short files balance themselves and the last
/// to finish is a short one. A file that fails is reported and counted; the
/// batch goes on. Each finished file's manifest line is appended at once
/// (one line per input: see `ManifestWriter`).
///
/// Threads: `run` on one thread, which also receives every report; the
/// workers touch only the shared state below, under its lock.
public final class BatchRenderer: Sendable {
    public struct Settings: Sendable {
        public var job = RenderJob.Options()
        public var format: AudioFileFormat = .wav
        public var encoding: SampleEncoding? = nil
        /// Worker threads (each with a job per SoundFont it renders with).
        public var jobs = 1
        /// Leave outputs that already exist alone (a rerun resumes a batch).
        public var skipExisting = false
        public var loudness: RenderJob.Loudness = .off
        /// Written in every manifest line.
        public var version = ""
        /// `--manifest`: each rendering's manifest line is written into its
        /// output set too (`OutputSet.manifestLine`), so a resumed batch has
        /// the figures of every finished rendering.
        public var manifestLines = false
        /// `--labels`: each output's notes, beats and tempo beside it in this
        /// format (`RenderLabels`); needs `job.labels`.
        public var labels: RenderLabels.Format? = nil
        /// `--transpose`, `--tempo`, `--velocity-scale`, `--program-map`: each
        /// file's draw (from its key) changes its piece; nil: none asked for.
        public var augmentation: Augmentation? = nil
        public init() {}
    }

    /// What became of one file.
    public struct Outcome: Sendable {
        public var item: BatchItem
        public var entry: ManifestEntry
        /// What the render measured (its loudness too, when measured).
        public var summary: RenderJob.Summary?
        /// The batch was interrupted while this file rendered: nothing was written.
        public var interrupted = false
        /// What the job noted while it rendered this file (e.g. samples loaded by
        /// preset because the font could not be read by note): warnings to show.
        public var notes: [String] = []
        /// A skipped rendering's manifest line as its output set holds it (the
        /// run that rendered it wrote it), appended instead of `entry`.
        public var storedLine: String? = nil
    }

    /// The batch as a whole, for a progress display.
    public struct Snapshot: Sendable {
        public var total = 0
        public var done = 0
        public var failed = 0
        public var skipped = 0
        /// Seconds of audio written (finished files and files under way).
        public var audioSeconds = 0.0
        public var elapsed = 0.0
        /// Files done plus the fractions of those under way.
        public var filesProgress = 0.0
        /// The files under way, one slot per worker.
        public var current: [RenderJob.Progress?] = []

        public var speed: Double { elapsed > 0 ? audioSeconds / elapsed : 0 }
        /// Seconds left, from the rate so far (nil before anything moved).
        public var eta: Double? {
            guard filesProgress > 0, elapsed > 0 else { return nil }
            return elapsed * (Double(total) - filesProgress) / filesProgress
        }
    }

    private struct State {
        var next = 0
        var running = 0
        var finishedAudio = 0.0
        var snapshot = Snapshot()
        var outcomes: [Outcome] = []
        var manifestError: ManifestError?
    }

    public let settings: Settings
    /// The fonts; an item's `soundFont` is an index in them.
    public let soundFonts: SoundFontSet
    /// Each font read once, for every worker's job.
    private let fonts: [SharedSoundFont]
    private let soundFontBytes: [Int]
    /// With `--timbres` and `--soundfont-pick hash` over several fonts, the
    /// tracks draw across the whole set (the input's picked font its home,
    /// `FontBankLayout`); with `all`, each rendering draws within its own font.
    private let drawSet: [SharedSoundFont]
    private let state = Mutex(State())
    /// The first worker's jobs, one per font, made on the caller's thread so
    /// a bad SoundFont is one clear error before anything is written (make the
    /// renderer before the outputs' folders and the manifest).
    private let firstJobs: Mutex<[RenderJob?]>

    public init(soundFonts: SoundFontSet, settings: Settings) throws(RenderJob.Failure) {
        self.settings = settings
        self.soundFonts = soundFonts
        fonts = soundFonts.fonts.map { SharedSoundFont(path: $0.path) }
        soundFontBytes = soundFonts.fonts.map { font in
            var info = stat()
            return stat(font.path, &info) == 0 ? Int(info.st_size) : 0
        }
        drawSet = settings.augmentation?.timbres != nil && soundFonts.pick == .hash && fonts.count > 1 ? fonts : []
        var jobs: [RenderJob?] = []
        for font in fonts { jobs.append(try RenderJob(soundFont: font, options: settings.job, drawSet: drawSet)) }
        firstJobs = Mutex(jobs)
    }

    /// The `--timbres` pool's presets checked against the fonts just read
    /// (`RenderOptionChecks.timbrePool`): before anything is written.
    public func checkTimbrePool() throws(RenderOptionError) {
        let jobs = firstJobs.withLock { $0 }
        let fonts = zip(soundFonts.fonts, jobs).compactMap { font, job in job.map { (name: font.fileName, job: $0) } }
        try RenderOptionChecks.timbrePool(settings.augmentation, fonts: fonts)
    }

    /// The first manifest write that failed, if any (the batch went on).
    public var manifestError: ManifestError? { state.withLock { $0.manifestError } }

    /// Renders `items`, a line for each in `manifest`, and returns the final
    /// snapshot. Calls `report` on the calling thread about ten times a second
    /// and at the end, with the outcomes finished since the last call.
    public func run(_ items: [BatchItem], manifest: ManifestWriter? = nil, cancel: CancellationFlag,
                    report: (Snapshot, [Outcome]) -> Void) throws(ThreadError) -> Snapshot {
        let workers = max(1, min(settings.jobs, items.count))
        let clock = ContinuousClock(), start = clock.now
        state.withLock {
            $0.snapshot.total = items.count
            $0.snapshot.current = Array(repeating: nil, count: workers)
            $0.running = workers
        }
        let ordered = Self.largestFirst(items).map { items[$0] }
        var threads: [JoinableThread] = []
        for w in 0..<workers {
            do {
                threads.append(try JoinableThread(name: "render-\(w)") { [self] in
                    work(worker: w, items: ordered, manifest: manifest, cancel: cancel, clock: clock, start: start)
                })
            } catch {
                cancel.set()
                state.withLock { $0.running -= workers - w }
                for t in threads { t.join() }
                throw error
            }
        }
        var lastReport = clock.now
        while true {
            usleep(10_000)
            let (running, outcomes, snapshot) = state.withLock { s -> (Int, [Outcome], Snapshot) in
                s.snapshot.elapsed = RenderJob.seconds(clock.now - start)
                let drained = s.outcomes
                s.outcomes.removeAll(keepingCapacity: true)
                return (s.running, drained, s.snapshot)
            }
            if running == 0 || !outcomes.isEmpty || clock.now - lastReport >= .milliseconds(100) {
                report(snapshot, outcomes)
                lastReport = clock.now
            }
            if running == 0 { break }
        }
        for t in threads { t.join() }
        return state.withLock { $0.snapshot }
    }

    /// The order the workers take `items` in (indices): largest input file
    /// first, ties and unreadable files in the given order. A file's size
    /// stands for its render time (its events); starting the longest renders
    /// first keeps a long one from running alone at the end while the other
    /// workers idle (longest-processing-time-first scheduling).
    public static func largestFirst(_ items: [BatchItem]) -> [Int] {
        let sizes = items.map { item -> Int in
            var info = stat()
            return stat(item.input, &info) == 0 ? Int(info.st_size) : 0
        }
        return items.indices.sorted { sizes[$0] != sizes[$1] ? sizes[$0] > sizes[$1] : $0 < $1 }
    }

    /// The item's rendering is finished: its audio and every companion the
    /// settings ask for are there (`OutputSet.isComplete`). With
    /// `skipExisting`, left alone; an input with audio but a companion
    /// missing (labels, stems, report) is rendered again.
    public func outputExists(_ item: BatchItem) -> Bool { outputSet(item).isComplete() }

    /// The files `item`'s rendering writes with these settings.
    public func outputSet(_ item: BatchItem) -> OutputSet {
        OutputSet(item: item, labels: settings.labels, stemReport: settings.job.stemsBy != nil && settings.job.stems,
                  manifestLine: settings.manifestLines)
    }

    private func work(worker: Int, items: [BatchItem], manifest: ManifestWriter?, cancel: CancellationFlag,
                      clock: ContinuousClock, start: ContinuousClock.Instant) {
        defer { state.withLock { $0.running -= 1 } }
        // A job per font this worker meets, made when it first does.
        var jobs: [RenderJob?] = worker == 0
            ? firstJobs.withLock { j in let taken = j; j = []; return taken }
            : Array(repeating: nil, count: fonts.count)
        while !cancel.isSet {
            let index = state.withLock { s -> Int in s.next += 1; return s.next - 1 }
            guard index < items.count else { return }
            let item = items[index]
            let font = item.soundFont
            precondition(fonts.indices.contains(font), "an item's font is one of the batch's")
            if jobs[font] == nil {
                do { jobs[font] = try RenderJob(soundFont: fonts[font], options: settings.job, drawSet: drawSet) } catch {
                    finish(Outcome(item: item, entry: entry(item, .failed, error: "\(error)")), worker: worker, manifest: manifest)
                    continue
                }
            }
            finish(render(item, with: jobs[font]!, worker: worker, cancel: cancel), worker: worker, manifest: manifest)
        }
    }

    private func entry(_ item: BatchItem, _ status: ManifestEntry.Status, error: String? = nil) -> ManifestEntry {
        var e = ManifestEntry(input: item.input, output: item.output, status: status, carillonVersion: settings.version,
                              soundFont: fonts[item.soundFont].path, soundFontBytes: soundFontBytes[item.soundFont])
        e.error = error
        e.augmentation = settings.augmentation?.draw(forKey: item.key)
        return e
    }

    private func render(_ item: BatchItem, with job: RenderJob, worker: Int, cancel: CancellationFlag) -> Outcome {
        var outcome = renderOrSkip(item, with: job, worker: worker, cancel: cancel)
        outcome.notes = job.log.take()
        return outcome
    }

    private func renderOrSkip(_ item: BatchItem, with job: RenderJob, worker: Int, cancel: CancellationFlag) -> Outcome {
        let set = outputSet(item)
        if settings.skipExisting && set.isComplete() {
            var skipped = Outcome(item: item, entry: entry(item, .skipped))
            skipped.storedLine = set.storedManifestLine()
            return skipped
        }
        // What a killed run left under the set's staged names goes first.
        set.sweep()
        do {
            do throws(OutputSetError) { try set.prepare() } catch {
                return Outcome(item: item, entry: entry(item, .failed, error: "\(error)"))
            }
            var s: RenderJob.Summary
            do throws(RenderJob.Failure) {
                // Written straight under the set's staged names: the set's commit is the one rename.
                let stems = set.stems.map { RenderJob.StemFolder($0.final, staging: $0.staged) }
                s = try job.render(
                    input: item.input,
                    to: .file(set.audio.staged, format: settings.format, encoding: settings.encoding, loudness: settings.loudness,
                              stems: stems, staged: true),
                    augmentation: settings.augmentation?.draw(forKey: item.key), cancel: cancel,
                    progress: { [self] p in state.withLock { $0.snapshot.current[worker] = p; refresh(&$0) } })
            } catch {
                set.discard()
                if case .interrupted = error {
                    return Outcome(item: item, entry: entry(item, .failed, error: "\(RenderJob.Failure.interrupted(output: item.output))"),
                                   interrupted: true)
                }
                throw error
            }
            s.output = item.output
            var e = entry(item, .ok)
            e.stemReport = set.stemReport?.final
            if e.stemReport != nil { e.stems = s.stems }
            e.record(s)
            // Labels, report and manifest line written, then the set moved onto its names, the audio last.
            do throws(OutputSetError) {
                try set.commit(labels: settings.labels != nil ? s.labels : nil, report: set.stemReport != nil ? s.stemReport : nil,
                               stemFiles: s.stems, manifestLine: set.manifestLine != nil ? e.jsonLine : nil)
            } catch {
                return Outcome(item: item, entry: entry(item, .failed, error: "\(error)"))
            }
            return Outcome(item: item, entry: e, summary: s)
        } catch {
            // A message names the output, not its staged name.
            return Outcome(item: item, entry: entry(item, .failed, error: "\(error)".replacing(set.audio.staged, with: item.output)))
        }
    }

    private func finish(_ outcome: Outcome, worker: Int, manifest: ManifestWriter?) {
        var manifestFailure: ManifestError? = nil
        // A skipped rendering whose line from the earlier run was kept gets no second line.
        let recorded = outcome.entry.status == .skipped && manifest?.recordedOutputs.contains(outcome.item.output) == true
        if !outcome.interrupted, !recorded, let manifest {
            do { try manifest.append(line: outcome.storedLine ?? outcome.entry.jsonLine) } catch { manifestFailure = error }
        }
        state.withLock { s in
            s.snapshot.current[worker] = nil
            if !outcome.interrupted {
                s.snapshot.done += 1
                switch outcome.entry.status {
                case .failed: s.snapshot.failed += 1
                case .skipped: s.snapshot.skipped += 1
                case .ok: s.finishedAudio += outcome.summary?.duration ?? 0
                }
            }
            if s.manifestError == nil { s.manifestError = manifestFailure }
            s.outcomes.append(outcome)
            refresh(&s)
        }
    }

    private func refresh(_ s: inout State) {
        var audio = s.finishedAudio, files = Double(s.snapshot.done)
        for p in s.snapshot.current {
            guard let p else { continue }
            audio += p.rendered
            files += p.pieceDuration > 0 ? min(0.99, p.rendered / p.pieceDuration) : 0
        }
        s.snapshot.audioSeconds = audio
        s.snapshot.filesProgress = files
    }
}
