import Analysis
import Controls
import Engine
import FluidSynth
import Hosting
import LV2
import MIDI
import MappingFiles
import Parameters
import Sampling
import SoundFile
import Synchronization
import Threads
import Glibc
#if canImport(Glibc)
#endif

/// Offline rendering: MIDI files through the engine's render loop, with the
/// FluidSynth sampler, into audio files, as fast as the CPU allows. The
/// sequencer is clocked by rendered samples, so the file holds exactly what
/// live playback would sound like.
///
/// One `RenderJob` reads the SoundFont once and renders any number of files,
/// each on synths built for it: a file's bytes do not depend on what the job
/// rendered before. It is the front of three parts, each with one job: the
/// piece's plan (`plan`, a `PiecePlan`: what the file becomes), the rig for
/// that plan (`PieceRig`: synths, pool, renderer, at the start values) and
/// the block loop that plays the rig into a sink (`BlockLoop`); `render(input:to:)`
/// is the one way in, to an audio file (`FileRender`: its loudness too) or a sink.
public final class RenderJob {
    public struct Options: Sendable {
        public var sampleRate: Int = 44_100
        public var host = HostOptions()
        public var tail: TailPolicy = .default
        /// Frames per block of the render loop; nil: 512 for one synth, 2048 for
        /// a pool. A pool hands each block to its synths' threads: every
        /// hand-over may cost a wake-up (tens of µs, more on a virtual
        /// machine), so a pool takes longer blocks (linns_basket, 2 synths:
        /// 20,670 hand-overs at 512 frames against 5,168 at 2048), and with
        /// `blocksInFlight` ahead its threads run 8192 frames apart at most.
        public var blockFrames: Int? = nil
        /// FluidSynth synths rendering each piece in parallel, one thread each (`--threads`).
        public var threads: Int = 1
        /// With a pool: blocks the render loop dispatches ahead of the one it
        /// writes (`SamplerPool.blocksInFlight`), so the synths' threads are
        /// not held in step block by block. Each costs a slot of buffers
        /// (36 × `blockFrames` floats, twice).
        public var blocksInFlight = 4
        /// Hand the heap's free pages back (`HeapTuning.returnFreePages`) before each
        /// piece renders: the CLI's render, whose process is the render's alone. Off
        /// for a library (the Python package): `malloc_trim` walks every arena of the
        /// host process, whose heap is not ours to size.
        public var returnsFreePages = false
        /// Only the samples of the presets a piece selects are loaded (see `pinPresets`).
        public var loadsSamplesOnDemand = true
        /// With `loadsSamplesOnDemand`: only the samples of the zones a piece's
        /// notes sound are loaded (see `SampleSelection`); off, whole presets'.
        public var selectsSamplesByNotes = true
        /// Cut every render at this many seconds (nil: no limit); `Summary.truncated`
        /// and a `PieceLimits.Cut` in `Summary.limits` say so. An hour by default:
        /// what the damage rules (`limits`) leave of a damaged file stops there.
        public var maxDuration: Double? = Self.defaultMaxDuration
        public static let defaultMaxDuration = 3600.0
        /// The rules that tell damage from music (`PieceLimits`: tempos that
        /// stretch the music out of shape, a piece that thins out); nil: none (`--no-limit`).
        public var limits: PieceLimits? = .default
        /// `--keep-end-of-track`: render to the file's end of track, however
        /// long after the last event it comes (the stretch is not cut by
        /// `maxGap` either). Off, an end of track more than `endOfTrackGrace`
        /// seconds after the last event is dead air: the render ends where the
        /// sound dies away after that event (`TailPolicy`'s silence, no `maxTail`),
        /// at the end of track at the latest.
        public var keepsEndOfTrack = false
        /// An end of track at most this many seconds after the piece's last
        /// event is a deliberate ending, rendered to (then the tail).
        public static let endOfTrackGrace = 10.0
        /// `--max-gap`: a stretch of a piece with no event longer than this many
        /// seconds is a corrupt delta time, cut to this length
        /// (`Score.shortenGaps`); nil: none is cut.
        public var maxGap: Double? = Self.defaultMaxGap
        public static let defaultMaxGap = 300.0
        /// Renders able to write stems (`stemsDirectory`): a reverb and chorus
        /// per channel (so each channel's stem carries its own) and the
        /// renderer keeping each strip's block.
        public var stems = false
        /// `--stems-by`: how the stems group the notes (see `StemGroups`), and
        /// a `StemReport` in `Summary.stemReport`; nil: one stem per strip, no report.
        public var stemsBy: StemGrouping? = nil
        /// Work out each piece's labels (`Summary.labels`, `RenderLabels`).
        public var labels = false
        /// `--mapping`: the rig a piece plays through — its channels' presets
        /// and LV2 instruments, its inserts, its controls' defaults and its first
        /// scene, as `play --mapping` starts (see `TakeRouting` for `take`).
        public var mapping: ControlMapping? = nil
        /// `--take`: the file is a performance played into the mapping's rig,
        /// each message through its controls and zones as the keyboard's (`TakeRouting`).
        public var take = false
        public init() {}

        /// The block size the render loop uses.
        public var effectiveBlockFrames: Int { blockFrames(threads: threads) }

        /// The block size with `threads` synths (a piece re-rendered on one
        /// synth takes one synth's blocks, so it is the one-synth file: the
        /// tail's end is found block by block).
        func blockFrames(threads: Int) -> Int { blockFrames ?? (threads > 1 ? 2048 : 512) }

        /// The machine's cores (the CLI's default for `threads`).
        public static var cores: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
    }

    public struct Progress: Sendable {
        public var rendered: Double
        public var pieceDuration: Double
        public var elapsed: Double
        public var inTail: Bool
    }

    public enum Failure: Error, CustomStringConvertible {
        case sampler(Sampler.Failure)
        case threads(String)
        case midiFile(MIDIFileError)
        case audioFile(SoundFileError)
        case loudness(LoudnessError)
        case scratchFile(path: String, reason: String)
        case interrupted(output: String)
        case stemsFolder(String)
        case track(FileTrackError)
        case plugin(LV2Error)
        /// `--timbres` across a SoundFont set: the fonts cannot share one synth (`FontBankLayoutError`).
        case timbres(String)

        public var description: String {
            switch self {
            case .plugin(let e): "\(e)"
            case .timbres(let e): e
            case .sampler(let e): "\(e)"
            case .threads(let e): "cannot start the render threads: \(e)"
            case .midiFile(let e): "\(e)"
            case .audioFile(let e): "\(e)"
            case .loudness(let e): "\(e)"
            case .scratchFile(let path, let reason): "cannot use scratch file \(path): \(reason)"
            case .interrupted(let output): "interrupted; \(output) was not written"
            case .stemsFolder(let e): "stems: \(e)"
            case .track(let e): "\(e)"
            }
        }
    }

    public let options: Options
    public let soundFontPath: String
    /// Replays each piece's selections before it renders (see `SampleSelection`); renders nothing.
    let scout: Sampler
    /// The presets the scout has pinned for the last piece.
    private var scoutPinned: Set<Synth.PresetAddress> = []
    private let sampleSelection: SampleSelection
    /// With `--timbres` across a SoundFont set (`drawSet`): the set's fonts,
    /// this job's at `home`; the others are loaded beside it, on the scout and
    /// on every piece's synths (`Sampler.extraSoundFonts`, in the set's order).
    struct DrawSet {
        /// The set's fonts' file names, in its order (the labels' `soundfont`).
        var names: [String]
        var home: Int
        /// The other fonts' selections (by note or by preset), in the set's order without `home`.
        var others: [SampleSelection]
        var otherPaths: [String]
        /// The bank offsets the scout has the other fonts at now (parked, or a piece's layout).
        var offsets: [Int]
    }
    var drawSet: DrawSet?
    /// Notes on how the job runs (a font whose samples are loaded by preset, not by note).
    public let log = HostLog()
    /// `--track` files, played with every piece; a render lasts as long as the longest.
    public let tracks: [FileTrack]
    /// What live and play build the same way (routes, tuning, start values).
    let assembly: HostAssembly
    /// The values each piece's rig starts at, as live's hub starts: the
    /// plugins' state, the mapping's defaults and first scene, `--set`.
    let startValues: [ParameterChange]
    /// The instruments' and inserts' plugins (nil without any).
    let plugins: PluginHost?

    /// Reads the SoundFont and checks that FluidSynth loads it (a bad font
    /// fails here, before any piece). Each piece then renders on synths built
    /// for it (`render`), sharing the font's samples.
    public convenience init(soundFont path: String, options: Options = Options()) throws(Failure) {
        try self.init(soundFont: SharedSoundFont(path: path), options: options)
    }

    /// A job playing `font`, read once for every job of the process that
    /// plays it; checks that FluidSynth loads it. `drawSet`: with `--timbres`
    /// across a SoundFont set, the set's fonts in its order (`font` among
    /// them, by path): each piece's tracks then draw among all of them, and
    /// `font` is the piece's home (`FontBankLayout`).
    public init(soundFont font: SharedSoundFont, options: Options = Options(), drawSet set: [SharedSoundFont] = []) throws(Failure) {
        let path = font.path
        self.options = options
        self.soundFontPath = path
        // The same first steps as live and play (`HostStart`): the assembly, the plugins, the hub.
        // The zones' midi-fx run only in a take's pass through the rig (`--take`).
        let start: HostStart
        do { start = try HostStart(options: options.host, mapping: options.mapping) } catch { throw .plugin(error) }
        assembly = start.assembly
        plugins = start.plugins
        for note in plugins?.notes ?? [] { log.append(note) }
        startValues = Self.startValues(of: start.hub)
        let selection = SampleSelection(soundFont: font, byNotes: options.loadsSamplesOnDemand && options.selectsSamplesByNotes,
                                        log: log)
        sampleSelection = selection
        if set.count > 1, let home = set.firstIndex(where: { $0.path == font.path }) {
            let others = set.indices.filter { $0 != home }
            var selections: [SampleSelection] = []
            for f in others { selections.append(SampleSelection(soundFont: set[f], byNotes: selection.byNotes, log: log)) }
            drawSet = DrawSet(names: set.map { AtomicFile.split($0.path).1 }, home: home, others: selections,
                              otherPaths: others.map { set[$0].path },
                              offsets: [Int](repeating: Sampler.parkedBankOffset, count: others.count))
        }
        let extras = drawSet.map { d in zip(d.otherPaths, d.others).map { Sampler.ExtraFont(path: $0, view: $1.scoutView) } } ?? []
        let samplerOptions = options.samplerOptions
        do throws(Sampler.Failure) {
            do {
                scout = try Sampler(soundFont: path, sampleRate: Double(options.sampleRate), options: samplerOptions,
                                    view: selection.scoutView, planning: true, extraFonts: extras)
            } catch where selection.byNotes {
                selection.fallBack("\(error)")
                scout = try Sampler(soundFont: path, sampleRate: Double(options.sampleRate), options: samplerOptions,
                                    planning: true, extraFonts: extras)
            }
        } catch { throw .sampler(error) }
        do { tracks = try options.host.openTracks(sampleRate: options.sampleRate, offline: true) } catch { throw .track(error) }
    }

    deinit {
        for track in tracks { track.close() }
    }

    /// The values `hub` starts its subscribers at (what `subscribeTimed`
    /// hands a new one), read once. A render has no controls to move them:
    /// the hub only works them out — the mapping's defaults, its first scene
    /// and `--set` over it are the hub's to compute, one way for live and
    /// render — and is let go; each rig applies the list (`PieceRig`).
    static func startValues(of hub: ControlHub) -> [ParameterChange] {
        var changes: [ParameterChange] = []
        hub.unsubscribe(hub.subscribeTimed { changes.append($0.change) })
        return changes
    }

    /// What every piece's rig is built from (`PieceRig`).
    private var rigParts: PieceRig.Parts {
        PieceRig.Parts(soundFontPath: soundFontPath, options: options, assembly: assembly, selection: sampleSelection,
                       tracks: tracks, plugins: plugins, startValues: startValues)
    }

    /// Where a render goes.
    public enum Output {
        /// An audio file, written whole or not at all: to a temporary file
        /// beside `path`, renamed onto it when complete; with `staged`, `path`
        /// is itself a name the caller moves into place (`OutputSet`), written
        /// directly. Its loudness measured or normalised (`loudness`), its
        /// stems beside it in the same format (`stems`).
        case file(String, format: AudioFileFormat, encoding: SampleEncoding?, loudness: Loudness = .off,
                  stems: StemFolder? = nil, staged: Bool = false)
        /// A sink the caller makes (memory, a stream), `name` naming it in the
        /// summary and messages; made again when a piece is rendered again on
        /// one synth (see `render`), the first discarded.
        case sink(named: String, make: () throws(Failure) -> any RenderSink)
    }

    /// Where a render writes its stems (`Options.stems`), in the audio's format.
    public struct StemFolder: Sendable {
        public var directory: String
        /// The folder the stems are written into until their `OutputSet` moves
        /// them onto `directory` (the paths reported are `directory`'s); nil: `directory`.
        public var staging: String?
        public init(_ directory: String, staging: String? = nil) { self.directory = directory; self.staging = staging }
    }

    /// Renders `input` to `output`: the one way a job renders. Its plan is
    /// worked out first (`plan`: what the file becomes), then a rig built for
    /// it (`PieceRig`) plays it in the block loop (`BlockLoop`) into the
    /// output. On any failure, or when `cancel` is set, the output and the
    /// stems are discarded: nothing is left under their names.
    ///
    /// With `augmentation`, the piece is changed before anything renders: the
    /// file's tempo events scaled (`StandardMIDIFile.scalingTempo`; an
    /// SMPTE-timed score's times), then its notes and programs
    /// (`FluidSynthInstrument.augmenting`, on the scout): labels, stems and
    /// the summary all see the changed piece.
    ///
    /// A piece renders on `Options.threads` synths. As soon as they together
    /// hold more voices at once than one synth may (`SamplerPool.voiceBudgetExceeded`),
    /// one synth would have stolen voices where the pool does not: the piece
    /// is rendered again on one synth from the start, into a new sink.
    ///
    /// With `midi`, the MIDI file is those bytes, already in memory, and
    /// `input` only names it (the C ABI renders bytes into a memory sink).
    public func render(
        input: String, midi: [UInt8]? = nil, to output: Output, augmentation: Augmentation.Draw? = nil,
        cancel: CancellationFlag? = nil, progress: ((Progress) -> Void)? = nil
    ) throws(Failure) -> Summary {
        switch output {
        case .sink(let name, let make):
            return try render(input: input, midi: midi, output: name, stems: nil, augmentation: augmentation,
                              cancel: cancel, progress: progress, makeSink: make)
        case .file(let path, let format, let encoding, let loudness, let stems, let staged):
            return try renderFile(input: input, midi: midi, file: AudioFileTarget(path: path, format: format, encoding: encoding,
                                                                                 sampleRate: options.sampleRate, staged: staged),
                                  loudness: loudness, stems: stems, augmentation: augmentation, cancel: cancel, progress: progress)
        }
    }

    /// Where and how a render writes its stems: the folder, the audio's format.
    struct StemTarget {
        var folder: StemFolder
        var format: AudioFileFormat
        var encoding: SampleEncoding?
    }

    /// Renders `input` into the sink `makeSink` opens once the plan is made
    /// (`output` names it in the summary and messages), and the stems into
    /// `stems` (its folder made if missing). See `render(input:midi:to:…)`.
    func render(
        input: String, midi: [UInt8]?, output: String, stems: StemTarget?, augmentation: Augmentation.Draw?,
        cancel: CancellationFlag?, progress: ((Progress) -> Void)?,
        makeSink: () throws(Failure) -> any RenderSink
    ) throws(Failure) -> Summary {
        precondition(stems == nil || options.stems, "stems need RenderJob.Options.stems")
        let clock = ContinuousClock()
        let start = clock.now
        // What is rendered, worked out before anything renders (see `PiecePlan`).
        let piece = try plan(input: input, midi: midi, augmentation: augmentation, stems: stems != nil, labels: options.labels)
        var score = piece.score
        let groups = piece.groups
        if let stems {
            do throws(FolderError) { try Folders.make(stems.folder.staging ?? stems.folder.directory) } catch { throw .stemsFolder("\(error)") }
        }
        // The piece lasts until its longest track ends.
        let trackEnd = tracks.map(\.duration).max() ?? 0
        score.duration = max(score.duration, trackEnd)
        // Dead air: an end of track long after everything that sounds (the
        // last event, the tracks, a take's last control move) is not rendered
        // past where the sound dies away.
        let soundEnd = max(score.lastEventSeconds, trackEnd, piece.changes.last?.seconds ?? 0)
        let deadAirFrom = !options.keepsEndOfTrack && score.duration - soundEnd > Options.endOfTrackGrace ? soundEnd : nil
        var threads = options.threads
        /// What the piece needs of the font, found once (a re-render on one synth reuses it).
        var samples: SampleSelection.Plan? = piece.samples
        while true {
            let rig = try rig(for: score, threads: threads, plan: &samples)
            guard let samples else { preconditionFailure("a rig is made from a sample plan") }
            var names: [Int: String] = [:]
            for (s, strip) in rig.renderer.meters.strips.enumerated() {
                if case .channel(let n) = strip, let name = groups?.stemOfChannel[n.intValue] { names[s] = name }
            }
            let stemWriter = stems.map {
                StemWriter(directory: $0.folder.directory, staging: $0.folder.staging, fileStems: rig.renderer.meters.fileStems,
                           names: names, format: $0.format, encoding: $0.encoding, sampleRate: options.sampleRate,
                           blockFrames: rig.blockFrames, measures: groups != nil)
            }
            let sink = try makeSink()
            // The plan's and the font's reading's temporaries are freed: their pages back before the piece renders.
            if options.returnsFreePages { HeapTuning.returnFreePages() }
            do throws(Failure) {
                let loop = BlockLoop(rig: rig, options: options, score: score, changes: piece.changes, deadAirFrom: deadAirFrom)
                guard let played = try loop.run(into: sink, stems: stemWriter, output: output, cancel: cancel, progress: progress,
                                                clock: clock, start: start) else {
                    // Over one synth's voice budget: again, on one synth.
                    sink.discard()
                    stemWriter?.discard()
                    threads = 1
                    continue
                }
                var summary = Summary(input: input, output: output, played: played, piece: piece, score: score,
                                      options: options, elapsed: Self.seconds(clock.now - start))
                summary.stems = stemWriter?.writtenPaths ?? []
                summary.renderedOnOneSynth = threads < options.threads
                summary.augmentation = augmentation
                let rendering = rendering(plan: samples, grid: rig.eventGranularity)
                if let maps = piece.maps {
                    summary.labels = RenderLabels(maps, score: score, rendering: rendering)
                    // The labels hold what the audio holds: not the beats of a cut end.
                    if summary.truncated || summary.deadAir > 0 { summary.labels?.clip(to: summary.duration) }
                    if let groups, let notes = summary.labels?.notes { summary.labels?.notes = Self.inStems(notes, groups) }
                }
                if let groups, let grouping = options.stemsBy, let stemWriter {
                    var notes = RenderLabels.playedNotes(score, trackNames: piece.trackNames, rendering: rendering)
                    if summary.truncated { notes = notes.filter { $0.onset < summary.duration } }
                    summary.stemReport = StemReport(grouping: grouping, notes: Self.inStems(notes, groups),
                                                    writer: stemWriter, groups: groups, timbreSplit: piece.timbreSplit)
                }
                return summary
            } catch {
                sink.discard()
                stemWriter?.discard()
                throw error
            }
        }
    }

    /// The labels of `input` as this job would render it, without rendering,
    /// from the same plan a render plays (`plan`: the job's gap cuts and
    /// damage rules included): for a recording of the piece played at `tempo`
    /// times its speed (`play --record --labels`, whose job cuts nothing),
    /// whose first frame is the piece's start.
    public func labels(of input: String, tempo: Double = 1) throws(Failure) -> RenderLabels {
        let piece = try plan(input: input, augmentation: nil, stems: false, labels: true, playedAt: tempo)
        guard let maps = piece.maps else { preconditionFailure("a plan with labels has their maps") }
        let samples: SampleSelection.Plan
        if let split = piece.samples { samples = split } else { samples = try planSamples(piece.score) }
        return RenderLabels(maps, score: piece.score, rendering: rendering(plan: samples, grid: scout.instrument.eventGranularity))
    }

    /// `notes` with `stem` naming the group stem each sounds in (`--stems-by`):
    /// the stem of its channel; the oscillator's and plugins' channels keep their strips'.
    static func inStems(_ notes: [RenderLabels.Note], _ groups: StemGroups) -> [RenderLabels.Note] {
        notes.map { n in
            var n = n
            if n.stem != "osc", let name = groups.stemOfChannel[n.channel - 1] { n.stem = name }
            return n
        }
    }

    /// How a synth applying events on a `grid`-frame grid places the score, for the labels.
    private func rendering(plan: SampleSelection.Plan, grid: Int) -> RenderLabels.Rendering {
        let presets: [(bank: Int, program: Int, name: String)] = (scout.soundFont?.presets ?? []).map { ($0.bank, $0.program, $0.name) }
        var rendering = RenderLabels.Rendering(sampleRate: options.sampleRate, grid: grid,
                                               oscillatorChannels: Set(options.host.oscillatorChannels),
                                               presets: presets, notePresets: Self.notePresets(plan),
                                               pluginChannels: plugins?.instrumentNames ?? [:],
                                               soundFont: AtomicFile.split(soundFontPath).1)
        if let set = drawSet, !plan.extras.isEmpty {
            // Each note's font: the scout's font IDs, as the selection names them, to the set's names.
            let names = set.names.indices.filter { $0 != set.home }.map { set.names[$0] }
            rendering.otherFonts = zip(names, scout.extraSoundFonts).map { name, font in
                var table: [Int: String] = [:]
                for p in font.presets where table[RenderLabels.Rendering.key(p.bank, p.program)] == nil {
                    table[RenderLabels.Rendering.key(p.bank, p.program)] = p.name
                }
                return (name: name, presetNames: table)
            }
            let ids = plan.extras.map(\.scoutID)
            rendering.noteFonts = plan.selection.notePresets.map { p in p.flatMap { p in ids.firstIndex(of: p.soundFontID).map { $0 + 1 } } ?? 0 }
        }
        return rendering
    }

    /// Channels set up by options of their own (`--set strip.N.*` or
    /// `channel.N.*`, `--insert N=…`): `--stems-by` neither moves notes off
    /// them nor onto them, which would take notes out of or into those settings.
    var channelsWithSettings: UInt16 {
        var mask: UInt16 = 0
        for change in options.host.startValues {
            switch change.address {
            case .strip(.channel(let c), _), .channelCC(let c, _), .channelProgram(let c), .channelPitchBend(let c),
                 .channelNote(let c), .channelGate(let c):
                mask |= 1 << c.intValue
            default: break
            }
        }
        for insert in options.host.inserts {
            if case .strip(.channel(let c)) = insert.strip { mask |= 1 << c.intValue }
        }
        return mask
    }

    /// Channels the sampler never hears: the oscillator's and the plugins'.
    var skippedChannels: UInt16 {
        (options.host.oscillatorChannels + options.host.instruments.map(\.channel)).reduce(UInt16(0)) { $0 | 1 << $1 }
    }

    /// What `score` needs of the font, the scout replaying its selections
    /// (the sampler's channels only).
    func planSamples(_ score: Score) throws(Failure) -> SampleSelection.Plan {
        do throws(Sampler.Failure) {
            var plan = try sampleSelection.plan(score, scout: scout, pinned: &scoutPinned, skipping: skippedChannels)
            if let set = drawSet {
                // The other fonts of the set, each with the zones its notes sound, at the scout's offsets.
                plan.extras = set.others.indices.map { i in
                    let id = scout.extraSoundFonts[i].id
                    let view = set.others[i].view(playing: plan.selection.notesByFont[id] ?? PlayedNotes())
                    return SampleSelection.Extra(font: Sampler.ExtraFont(path: set.otherPaths[i], view: view,
                                                                         bankOffset: set.offsets[i]), scoutID: id)
                }
            }
            return plan
        } catch { throw .sampler(error) }
    }

    /// The (bank, program) each note-on of the planned score plays, in score order.
    static func notePresets(_ plan: SampleSelection.Plan) -> [(bank: Int, program: Int)?] {
        plan.selection.notePresets.map { p in p.map { (bank: Int($0.bank), program: Int($0.program)) } }
    }

    /// The synths, pool and renderer for `score`, by note unless FluidSynth
    /// refuses the piece's view of the font (then by preset from now on, with
    /// a note in `log`).
    private func rig(for score: Score, threads: Int, plan: inout SampleSelection.Plan?) throws(Failure) -> PieceRig {
        let planned: SampleSelection.Plan
        if let plan { planned = plan } else { planned = try planSamples(score) }
        plan = planned
        do { return try PieceRig(samples: planned, threads: threads, parts: rigParts) } catch where planned.view != nil {
            do throws(Sampler.Failure) {
                try sampleSelection.fallBack("\(error)", scout: scout, pinned: &scoutPinned)
            } catch { throw .sampler(error) }
            let byPreset = try planSamples(score)
            plan = byPreset
            return try PieceRig(samples: byPreset, threads: threads, parts: rigParts)
        }
    }

    public static func seconds(_ duration: Duration) -> Double {
        let (s, atto) = duration.components
        return Double(s) + Double(atto) * 1e-18
    }
}
