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
/// rendered before.
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

    public struct Summary: Sendable {
        public var input: String
        public var output: String
        /// Seconds of audio written.
        public var duration: Double
        /// Seconds of the piece itself (to its last event).
        public var pieceDuration: Double
        /// Highest sample magnitude (linear; 1 = full scale).
        public var peak: Float
        public var clippedSamples: Int
        /// Wall-clock seconds taken.
        public var elapsed: Double
        /// Calls the sampler refused while rendering this file (no preset on a channel, …).
        public var refusedSynthCalls: Int
        /// Sequencer events dropped (its held-note or chase tables full).
        public var droppedMessages: Int
        /// The render stopped at `Options.maxDuration` before the piece and its tail ended.
        public var truncated = false
        /// Stretches with no event longer than `Options.maxGap`, cut to that length.
        public var shortenedGaps: [Score.Gap] = []
        /// Seconds the cuts took out of the piece.
        public var secondsCut: Double = 0
        /// Seconds from where the render ended to the file's end of track not
        /// rendered: dead air after the last event (see `Options.keepsEndOfTrack`).
        public var deadAir: Double = 0
        /// What the damage rules and `--max-duration` took out, and why (`PieceLimits`).
        public var limits: [PieceLimits.Cut] = []
        /// The piece needed more voices at once than one synth has, so its
        /// split render would have differed from one synth's (which steals
        /// voices): it was rendered again on one synth.
        public var renderedOnOneSynth = false
        /// The stem files written (strips that sounded), with `stemsDirectory`.
        public var stems: [String] = []
        /// The piece's notes, beats and tempo as rendered, with `Options.labels`.
        public var labels: RenderLabels?
        /// What each stem holds, with `Options.stemsBy` and stems written.
        public var stemReport: StemReport?
        /// What the piece was changed by (`render --transpose` …), nil for nothing.
        public var augmentation: Augmentation.Draw?
        /// Notes the transposition pushed outside 0...127, dropped with their note-offs.
        public var notesDropped = 0
        /// What the MIDI reader salvaged of a damaged file (a truncated track, …): rendered as read.
        public var warnings: [SMFWarning] = []
        /// With `--timbres`: what each track drew (`TimbreDraw`).
        public var timbres: [TimbrePick] = []

        public var peakDBFS: Double { peak > 0 ? 20 * log10(Double(peak)) : -.infinity }
        public var speed: Double { elapsed > 0 ? duration / elapsed : .infinity }
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

        public var description: String {
            switch self {
            case .plugin(let e): "\(e)"
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
    /// Notes on how the job runs (a font whose samples are loaded by preset, not by note).
    public let log = HostLog()
    /// `--track` files, played with every piece; a render lasts as long as the longest.
    public let tracks: [FileTrack]
    private let buffer: UnsafeMutableBufferPointer<Float>
    /// What live and play build the same way (routes, tuning, start values).
    let assembly: HostAssembly
    /// The start values (no mapping: a render has no controls).
    private let hub: ControlHub
    /// The instruments' and inserts' plugins (nil without any).
    let plugins: PluginHost?

    /// Reads the SoundFont and checks that FluidSynth loads it (a bad font
    /// fails here, before any piece). Each piece then renders on synths built
    /// for it (`render`), sharing the font's samples.
    public convenience init(soundFont path: String, options: Options = Options()) throws(Failure) {
        try self.init(soundFont: SharedSoundFont(path: path), options: options)
    }

    /// A job playing `font`, read once for every job of the process that
    /// plays it; checks that FluidSynth loads it.
    public init(soundFont font: SharedSoundFont, options: Options = Options()) throws(Failure) {
        let path = font.path
        self.options = options
        self.soundFontPath = path
        // The zones' midi-fx run only in a take's pass through the rig (`--take`).
        let effects: [MIDIEffectSpec]
        do { effects = try options.mapping.map(MIDIEffectSpec.all(in:)) ?? [] } catch { throw .plugin(error) }
        assembly = HostAssembly(options: options.host, channels: options.mapping?.channels ?? [],
                                inserts: options.mapping?.inserts ?? [], midiEffects: effects)
        // The plugins' parameters exist before the hub that starts them at their defaults.
        do { plugins = try assembly.makePluginHost() } catch { throw .plugin(error) }
        for note in plugins?.notes ?? [] { log.append(note) }
        hub = assembly.makeHub(mapping: options.mapping, plugins: plugins)
        let selection = SampleSelection(soundFont: font, byNotes: options.loadsSamplesOnDemand && options.selectsSamplesByNotes,
                                        log: log)
        sampleSelection = selection
        let samplerOptions = Self.samplerOptions(options)
        do throws(Sampler.Failure) {
            do {
                scout = try Sampler(soundFont: path, sampleRate: Double(options.sampleRate), options: samplerOptions,
                                    view: selection.scoutView, planning: true)
            } catch where selection.byNotes {
                selection.fallBack("\(error)")
                scout = try Sampler(soundFont: path, sampleRate: Double(options.sampleRate), options: samplerOptions,
                                    planning: true)
            }
        } catch { throw .sampler(error) }
        do { tracks = try options.host.openTracks(sampleRate: options.sampleRate, offline: true) } catch { throw .track(error) }
        buffer = .allocate(capacity: 2 * max(options.effectiveBlockFrames, options.blockFrames(threads: 1)))
        buffer.initialize(repeating: 0)
    }

    deinit {
        for track in tracks { track.close() }
        buffer.deallocate()
    }

    private static func samplerOptions(_ options: Options) -> SamplerOptions {
        var samplerOptions = options.host.sampler
        samplerOptions.loadsSamplesOnDemand = options.loadsSamplesOnDemand
        if options.stems { samplerOptions.effectsPerChannel = true }
        return samplerOptions
    }

    /// The synths, pool and renderer of one piece, all new for it, so a
    /// file's audio depends only on the file, the font and the options: not
    /// on what was rendered before it (FluidSynth's reset leaves a voice
    /// slot's last gain, which the next voice there ramps from, and the
    /// chorus's phase where they were).
    private struct Rig {
        let samplers: [Sampler]
        let pool: SamplerPool?
        let renderer: Renderer
        let blockFrames: Int
    }

    private func makeRig(_ plan: SampleSelection.Plan, threads: Int) throws(Failure) -> Rig {
        let options = self.options
        var samplers: [Sampler] = []
        do throws(Sampler.Failure) {
            for _ in 0..<max(1, threads) {
                samplers.append(try sampleSelection.makeSampler(for: plan, path: soundFontPath, sampleRate: Double(options.sampleRate),
                                                                options: Self.samplerOptions(options)))
            }
        } catch { throw .sampler(error) }
        var pool: SamplerPool? = nil
        if samplers.count > 1 {
            do throws(ThreadError) {
                // New synths: nothing to reset, only the channels that play whole to set.
                pool = try SamplerPool(members: samplers.map(\.instrument), keepingAlive: samplers,
                                       blocksInFlight: options.blocksInFlight,
                                       wholeChannels: sampleSelection.wholeChannels(plan.selection))
            } catch { throw .threads("\(error)") }
        }
        let blockFrames = options.blockFrames(threads: samplers.count)
        let renderer: Renderer
        do {
            renderer = try assembly.makeRenderer(instrument: pool ?? samplers[0].instrument, tracks: tracks,
                                                 sampleRate: options.sampleRate, maxFrames: blockFrames,
                                                 capturesStems: options.stems, plugins: plugins, offline: true)
        } catch { throw .plugin(error) }
        // The same values as live, the same way; nothing moves them during a
        // render, so the subscription ends once they are handed over.
        hub.unsubscribe(assembly.connect(hub, to: renderer, events: EventQueueProducer(renderer.events),
                                         transport: renderer.transport))
        return Rig(samplers: samplers, pool: pool, renderer: renderer, blockFrames: blockFrames)
    }

    /// Renders `input` into `output`. The audio goes to a temporary file beside
    /// `output`, renamed only when complete; on any failure or when `cancel`
    /// is set, nothing is left under `output`. With `stemsDirectory` (and
    /// `Options.stems`), each strip that sounds also goes to a file of its own
    /// there (written into `stemsStaging` when given: see `OutputSet`), in
    /// the same format (see `StemWriter`); the stems add up to `output`.
    public func render(
        input: String, output: String, format: AudioFileFormat, encoding: SampleEncoding?,
        stemsDirectory: String? = nil, stemsStaging: String? = nil, augmentation: Augmentation.Draw? = nil,
        cancel: CancellationFlag? = nil, progress: ((Progress) -> Void)? = nil
    ) throws(Failure) -> Summary {
        try render(input: input, output: output,
                   stems: stemsDirectory.map { StemTarget(directory: $0, format: format, encoding: encoding, staging: stemsStaging) },
                   augmentation: augmentation, cancel: cancel, progress: progress) { () throws(Failure) -> any RenderSink in
            do throws(SoundFileError) {
                return AudioFileSink(try AudioFileWriter(path: output, format: format, encoding: encoding,
                                                         sampleRate: options.sampleRate, channels: 2))
            } catch { throw .audioFile(error) }
        }
    }

    /// Where and how a render writes its stems.
    public struct StemTarget: Sendable {
        public var directory: String
        public var format: AudioFileFormat
        public var encoding: SampleEncoding?
        /// The folder the stems are written into until their `OutputSet` moves
        /// them onto `directory` (the paths reported are `directory`'s); nil: `directory`.
        public var staging: String? = nil
        public init(directory: String, format: AudioFileFormat, encoding: SampleEncoding?, staging: String? = nil) {
            self.directory = directory; self.format = format; self.encoding = encoding; self.staging = staging
        }
    }

    /// Renders `input` into the sink `makeSink` opens once the MIDI file has
    /// been read (`output` names it in the summary and messages), and the
    /// stems into `stems` (its folder made if missing). On any failure or
    /// cancellation the sink and the stems are discarded.
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
    /// is rendered again on one synth from the start, into a new sink
    /// (`makeSink` is called again; the first is discarded).
    ///
    /// With `midi`, the MIDI file is those bytes, already in memory, and
    /// `input` only names it (the C ABI renders bytes into a memory sink).
    public func render(
        input: String, midi: [UInt8]? = nil, output: String, stems: StemTarget? = nil, augmentation: Augmentation.Draw? = nil,
        cancel: CancellationFlag? = nil, progress: ((Progress) -> Void)? = nil,
        makeSink: () throws(Failure) -> any RenderSink
    ) throws(Failure) -> Summary {
        precondition(stems == nil || options.stems, "stems need RenderJob.Options.stems")
        let clock = ContinuousClock()
        let start = clock.now
        // What is rendered, worked out before anything renders (see `PiecePlan`).
        let piece = try plan(input: input, midi: midi, augmentation: augmentation, stems: stems != nil, labels: options.labels)
        var score = piece.score
        let gaps = piece.gaps, maps = piece.maps, notesDropped = piece.notesDropped
        let trackNames = piece.trackNames, groups = piece.groups, splitPlan = piece.samples
        if let stems {
            do throws(FolderError) { try Folders.make(stems.staging ?? stems.directory) } catch { throw .stemsFolder("\(error)") }
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
        var plan: SampleSelection.Plan? = splitPlan
        while true {
            let rig = try makeRig(for: score, threads: threads, plan: &plan)
            var names: [Int: String] = [:]
            for (s, strip) in rig.renderer.meters.strips.enumerated() {
                if case .channel(let n) = strip, let name = groups?.stemOfChannel[n.intValue] { names[s] = name }
            }
            let stemWriter = stems.map {
                StemWriter(directory: $0.directory, staging: $0.staging, fileStems: rig.renderer.meters.fileStems, names: names, format: $0.format,
                           encoding: $0.encoding, sampleRate: options.sampleRate, blockFrames: rig.blockFrames,
                           measures: groups != nil)
            }
            let writer = try makeSink()
            do throws(Failure) {
                guard var summary = try render(score, on: rig, input: input, output: output, into: writer, stems: stemWriter,
                                               changes: piece.changes, deadAirFrom: deadAirFrom,
                                               cancel: cancel, progress: progress, clock: clock, start: start) else {
                    // Over one synth's voice budget: again, on one synth.
                    writer.discard()
                    stemWriter?.discard()
                    threads = 1
                    continue
                }
                summary.stems = stemWriter?.writtenPaths ?? []
                summary.shortenedGaps = gaps
                summary.secondsCut = gaps.reduce(0) { $0 + $1.length - (options.maxGap ?? 0) }
                summary.deadAir += piece.deadAirCut
                summary.limits = piece.limits + summary.limits
                summary.renderedOnOneSynth = threads < options.threads
                summary.augmentation = augmentation
                summary.notesDropped = notesDropped
                summary.warnings = piece.warnings
                summary.timbres = piece.timbres
                if let maps, let plan {
                    summary.labels = labels(maps, score, plan: plan, rig: rig)
                    // The labels hold what the audio holds: not the beats of a cut end.
                    if summary.truncated || summary.deadAir > 0 { summary.labels?.clip(to: summary.duration) }
                    if let groups, let notes = summary.labels?.notes { summary.labels?.notes = Self.inStems(notes, groups) }
                }
                if let groups, let grouping = options.stemsBy, let plan, let stemWriter {
                    var notes = RenderLabels.playedNotes(score, trackNames: trackNames, rendering: rendering(plan: plan, rig: rig))
                    if summary.truncated { notes = notes.filter { $0.onset < summary.duration } }
                    summary.stemReport = StemReport(grouping: grouping, notes: Self.inStems(notes, groups),
                                                    writer: stemWriter, groups: groups)
                }
                return summary
            } catch {
                writer.discard()
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

    /// The piece's labels as `rig` rendered it: its grid, the oscillator's and
    /// the plugins' channels, and each note-on's preset as the scout's FluidSynth chose it.
    private func labels(_ maps: RenderLabels.FileMaps, _ score: Score, plan: SampleSelection.Plan, rig: Rig) -> RenderLabels {
        RenderLabels(maps, score: score, rendering: rendering(plan: plan, rig: rig))
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

    /// How `rig` places the score, for the labels.
    private func rendering(plan: SampleSelection.Plan, rig: Rig) -> RenderLabels.Rendering {
        rendering(plan: plan, grid: rig.pool?.eventGranularity ?? rig.samplers[0].instrument.eventGranularity)
    }

    /// How a synth applying events on a `grid`-frame grid places the score, for the labels.
    private func rendering(plan: SampleSelection.Plan, grid: Int) -> RenderLabels.Rendering {
        let presets: [(bank: Int, program: Int, name: String)] = (scout.soundFont?.presets ?? []).map { ($0.bank, $0.program, $0.name) }
        let rendering = RenderLabels.Rendering(sampleRate: options.sampleRate, grid: grid,
                                               oscillatorChannels: Set(options.host.oscillatorChannels),
                                               presets: presets, notePresets: Self.notePresets(plan),
                                               pluginChannels: plugins?.instrumentNames ?? [:],
                                               soundFont: AtomicFile.split(soundFontPath).1)
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
            return try sampleSelection.plan(score, scout: scout, pinned: &scoutPinned, skipping: skippedChannels)
        } catch { throw .sampler(error) }
    }

    /// The (bank, program) each note-on of the planned score plays, in score order.
    static func notePresets(_ plan: SampleSelection.Plan) -> [(bank: Int, program: Int)?] {
        plan.selection.notePresets.map { p in p.map { (bank: Int($0.bank), program: Int($0.program)) } }
    }

    /// The synths, pool and renderer for `score`, by note unless FluidSynth
    /// refuses the piece's view of the font (then by preset from now on, with
    /// a note in `log`).
    private func makeRig(for score: Score, threads: Int, plan: inout SampleSelection.Plan?) throws(Failure) -> Rig {
        let planned: SampleSelection.Plan
        if let plan { planned = plan } else { planned = try planSamples(score) }
        plan = planned
        do { return try makeRig(planned, threads: threads) } catch where planned.view != nil {
            do throws(Sampler.Failure) {
                try sampleSelection.fallBack("\(error)", scout: scout, pinned: &scoutPinned)
            } catch { throw .sampler(error) }
            let byPreset = try planSamples(score)
            plan = byPreset
            return try makeRig(byPreset, threads: threads)
        }
    }

    /// Renders `score` on `rig` into `writer` and `stems`; nil as soon as the
    /// rig's pool has held more voices than one synth may (the output is then
    /// incomplete: the caller discards it).
    private func render(
        _ score: Score, on rig: Rig, input: String, output: String, into writer: any RenderSink, stems: StemWriter?,
        changes: [(seconds: Double, change: ParameterChange)] = [], deadAirFrom: Double? = nil,
        cancel: CancellationFlag?, progress: ((Progress) -> Void)?, clock: ContinuousClock, start: ContinuousClock.Instant
    ) throws(Failure) -> Summary? {
        let rate = Double(options.sampleRate)
        let renderer = rig.renderer
        renderer.schedule(score, startingAt: 0)
        // A take's parameter moves (`TakeRouting.changes`), each applied as the
        // block it falls in is dispatched, the way live applies a control's.
        let takeRouting = changes.isEmpty ? nil : ParameterRouting(parameters: renderer.parameters, events: EventQueueProducer(renderer.events),
                                                                   transport: renderer.transport)
        var nextChange = 0
        // Blocks go out (`dispatch`) up to `blocksInFlight` ahead of the one
        // written (`collect`); with one synth, one at a time. Everything that
        // decides what is dispatched is known on the dispatch side, so the
        // blocks and their sizes are the same at any depth.
        defer { renderer.discardPending() }
        let depth = renderer.blocksInFlight
        var tail = TailTracker(policy: options.tail, sampleRate: rate)
        /// Tail frames dispatched (the tail tracker counts those written).
        var tailDispatched = 0
        let tailLimit = tail.remainingFrames
        /// Dead air (see `Options.keepsEndOfTrack`): from the first block at
        /// or after this frame until the score's end, the render ends as soon
        /// as the sound has died away (the tail's silence, with no time limit).
        let deadAirFrame = deadAirFrom.map { seconds -> UInt64 in
            let f = (seconds * rate).rounded()
            return f < 0x1p62 ? UInt64(max(0, f)) : 1 << 62   // damaged times run past UInt64: saturate
        }
        var deadAir = TailTracker(policy: TailPolicy(silenceThreshold: options.tail.silenceThreshold,
                                                     silenceHold: options.tail.silenceHold, maxTail: Self.unboundedTail),
                                  sampleRate: rate)
        var endedInDeadAir = false
        /// Per slot: what part of the piece the pending block renders.
        var pendingPart = [BlockPart](repeating: .piece, count: depth + 1)
        var dispatchedBlocks = 0, collectedBlocks = 0
        var dispatching = true, finished = false
        var limit = options.maxDuration.map { UInt64(max(0, ($0 * rate).rounded())) } ?? .max
        var truncated = false
        var written: UInt64 = 0
        /// Frames still to drop from the start: the mix's latency (`Renderer.latency`), read after the first block.
        var latencyLeft: Int? = nil

        func collect() throws(Failure) {
            let part = pendingPart[collectedBlocks % (depth + 1)]
            collectedBlocks += 1
            guard !finished else { renderer.discardPending(); return }
            var frames = renderer.collect(into: buffer)
            var from = 0
            if latencyLeft == nil {
                // Latency compensation: the mix (and each stem) starts where the dry piece starts.
                latencyLeft = renderer.latency
                if limit != .max { limit += UInt64(latencyLeft!) }
            }
            if let left = latencyLeft, left > 0 {
                from = min(left, frames)
                latencyLeft = left - from
                frames -= from
            }
            try writer.write(UnsafeBufferPointer(rebasing: UnsafeBufferPointer(buffer)[(2 * from)...]), frames: frames)
            try stems?.add(from: renderer, skipping: from, frames: frames)
            written += UInt64(frames)
            switch part {
            case .tail: finished = tail.observe(peak: renderer.blockPeak, frames: frames)
            case .deadAir:
                finished = deadAir.observe(peak: renderer.blockPeak, frames: frames)
                endedInDeadAir = finished
            case .piece: break
            }
            if let progress, collectedBlocks & 127 == 0 {
                progress(Progress(rendered: Double(written) / rate, pieceDuration: score.duration,
                                  elapsed: Self.seconds(clock.now - start), inTail: part != .piece))
            }
        }

        while dispatching || renderer.pendingBlocks > 0 {
            if cancel?.isSet == true { throw .interrupted(output: output) }
            if rig.pool?.voiceBudgetExceeded == true { return nil }
            if finished { dispatching = false }
            guard dispatching && renderer.pendingBlocks <= depth else { try collect(); continue }
            let left = limit - min(limit, renderer.sampleTime)
            if left == 0 { truncated = true; dispatching = false; continue }
            let inTail = renderer.isScoreFinished
            let part: BlockPart = inTail ? .tail : deadAirFrame.map { renderer.sampleTime >= $0 } == true ? .deadAir : .piece
            var frames = Int(min(UInt64(rig.blockFrames), left))
            if inTail { frames = min(frames, tailLimit - tailDispatched) }
            guard frames > 0 else { dispatching = false; continue }
            if let takeRouting {
                let end = Double(renderer.sampleTime + UInt64(frames)) / rate
                while nextChange < changes.count, changes[nextChange].seconds < end {
                    takeRouting.apply(changes[nextChange].change)
                    nextChange += 1
                }
            }
            renderer.dispatch(frames: frames)
            pendingPart[dispatchedBlocks % (depth + 1)] = part
            dispatchedBlocks += 1
            if inTail { tailDispatched += frames }
        }
        // Stems first: if the mixdown then fails, they are taken back.
        try stems?.finish()
        do throws(Failure) { try writer.finish() } catch {
            stems?.removeFinished()
            throw error
        }
        let refused = rig.pool?.refusedCount ?? rig.samplers[0].instrument.refusedCount
        var summary = Summary(input: input, output: output, duration: Double(written) / rate,
                              pieceDuration: score.duration, peak: renderer.peak,
                              clippedSamples: renderer.clippedSamples, elapsed: Self.seconds(clock.now - start),
                              refusedSynthCalls: refused, droppedMessages: renderer.droppedMessages, truncated: truncated)
        if endedInDeadAir { summary.deadAir = max(0, score.duration - summary.duration) }
        if truncated, let maxDuration = options.maxDuration {
            summary.limits.append(PieceLimits.Cut(reason: .maxDuration(maxDuration), seconds: max(0, score.duration - summary.duration)))
        }
        return summary
    }

    /// A tail no render reaches (a million hours): dead air is watched for silence only.
    static let unboundedTail = 3.6e9

    /// What part of a piece a block renders: the piece itself, dead air
    /// after its last sound (ends at silence), or the tail after its end.
    private enum BlockPart { case piece, deadAir, tail }

    public static func seconds(_ duration: Duration) -> Double {
        let (s, atto) = duration.components
        return Double(s) + Double(atto) * 1e-18
    }
}

/// Where a render's interleaved stereo blocks go: an audio file, or a
/// scratch file measured on the way (loudness normalisation).
public protocol RenderSink: AnyObject {
    func write(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(RenderJob.Failure)
    /// Completes the output (an audio file appears under its name only now).
    func finish() throws(RenderJob.Failure)
    /// Abandons the output, leaving nothing under its name. Safe to call twice.
    func discard()
}

/// An `AudioFileWriter` as a render sink.
public final class AudioFileSink: RenderSink {
    public let writer: AudioFileWriter
    public init(_ writer: AudioFileWriter) { self.writer = writer }
    public func write(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(RenderJob.Failure) {
        do throws(SoundFileError) { try writer.write(samples, frames: frames) } catch { throw .audioFile(error) }
    }
    public func finish() throws(RenderJob.Failure) {
        do throws(SoundFileError) { try writer.finish() } catch { throw .audioFile(error) }
    }
    public func discard() { writer.discard() }
}
