import Analysis
import ArgumentParser
import OfflineRender
import RenderBatch
import Engine
import Hosting
import SoundFile
import Synchronization
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// `carillon render`: MIDI files to audio files, as fast as the CPU allows.
struct Render: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render MIDI files to audio files (WAV, FLAC, Ogg, Opus, MP3 and more) through the SoundFont sampler.",
        discussion: """
            Examples:
              carillon render song.mid -o song.wav
              carillon render song.mid -o song.flac --bits 24 -g 0.5 --no-chorus
              carillon render *.mid --output-dir out --format ogg
              carillon render corpus/ --output-dir out --jobs 2 --manifest out/manifest.jsonl --skip-existing
              find corpus -name '*.mid' | carillon render --from-list - --input-root corpus --output-dir out --shard 0/4
              carillon render corpus/ --output-dir out --shard slurm --skip-existing --manifest m-$SLURM_ARRAY_TASK_ID.jsonl
              carillon render song.mid -o song.flac --normalize -14 --true-peak -1
              carillon render song.mid -o song.wav --stems song-stems
              carillon render corpus/ --output-dir out --soundfont FluidR3_GM.sf2 --soundfont TimGM6mb.sf2
              carillon render corpus/ --output-dir out --soundfont a.sf2 --soundfont b.sf2 --soundfont-pick all --labels
              carillon render corpus/ --output-dir aug --transpose -2..2 --tempo 0.9..1.1 --seed 7 --labels --manifest aug/manifest.jsonl

            After the last note, rendering goes on until the sound has died away \
            (below --silence for a quarter second), at most --tail seconds. A \
            stretch with no event in any track longer than --max-gap (a corrupt \
            delta time) is cut to that length, with a warning.

            No dead air: an End of Track at most 10 s after the last event (a \
            deliberate ending) is rendered to, then the tail; one later than that \
            is not: the render ends where the sound has died away after the last \
            event (as the tail does, with no --tail limit), at the End of Track at \
            the latest, and says how much it left out. --keep-end-of-track renders \
            to the End of Track however late (not cut by --max-gap either).

            Damage has limits (unless --no-limit): a tempo is judged by what it does \
            to the notes, not by its number. A stretch 8 times slower than the tempo \
            around it that adds over 30 s and makes its notes 8 times sparser than \
            the piece elsewhere (or stretches silence), or 8 times faster squashing \
            them past 100 onsets a second, plays at the tempo around it; a slow \
            movement, a ritardando, a fermata stay as written. Where a piece \
            thins out to fewer than 10 notes, or than a tenth of its busiest 10 \
            minutes (at most 600), in the 10 \
            minutes after a note (all before its last event), it ends 10 s \
            after that note; and a render stops at --max-duration (3600 s unless \
            given). Each is said on stderr and in the manifest (limits, \
            limit_seconds_cut). --no-limit turns all three off (an explicit \
            --max-duration still applies). Nothing else is skipped, so a file \
            sounds as fluidsynth -F plays it.

            A folder is searched recursively for .mid, .midi, .kar and .rmi files. \
            Every input file has a key: its path relative to one root, --input-root \
            or else the deepest folder holding every input (a folder argument counts \
            as itself, a file or list line as the folder it is in). Outputs mirror \
            the keys under --output-dir, and --shard splits by them: `render corpus/` \
            and `render --input-root corpus corpus/a.mid corpus/sub/b.mid` key, place \
            and shard every file alike. A file that fails is reported and the batch \
            goes on; the exit status is 1 when any failed.

            --shard K/N renders the files whose key hashes to K (0 <= K < N); \
            --shard slurm takes K and N from the Slurm array task (K = task ID - \
            the array's lowest ID, N = its task count; the IDs must be consecutive). \
            The manifest keeps one line per input (per input and font with \
            --soundfont-pick all): a rerun replaces the lines of the files it \
            renders again, and an output skipped by --skip-existing keeps its \
            earlier line.

            Several --soundfont: with --soundfont-pick hash, each input renders \
            with one of them, chosen by a hash of its key (the same whatever the \
            list's order, --jobs or --shard, and from run to run), under its usual \
            name; with all, each input renders with every font, into \
            NAME.FONTNAME.EXT (FONTNAME: the font's file name without extension, \
            characters other than letters, digits and . - _ + made _; -o song.wav \
            gives song.FONTNAME.wav), its stems into DIR/NAME.FONTNAME/ (one file \
            named: DIR/FONTNAME/) and its labels beside its output. The manifest \
            has a line per rendering, naming its font (soundfont, soundfont_bytes), \
            and the labels' notes a soundfont column (the font's file name). Two \
            fonts with one FONTNAME (case aside) are refused. Each font is read \
            once and its jobs share it; samples load per piece, only those its \
            notes sound.

            --stems DIR writes, beside the mixdown, one file per mixer strip that \
            sounds (ch01 ... ch16, osc, tone, tracks), each with its own reverb and \
            chorus; they add up to the mixdown. One MIDI file named on the command \
            line (with -o or not) has its stems written into DIR itself; in a batch \
            (several files, a folder, --from-list) each input's go to DIR/<name>/ \
            (its output's path below --output-dir, without extension).

            --stems-by track|program groups the stems as Slakh does: track gives a \
            stem per MIDI track (trackNN-NAME, NN the 0-based track as in the \
            labels), program a stem per program across channels \
            (progNNN-general-midi-name, NNN 0-based) and one drums stem for every \
            note on a drum kit. Where a channel carries notes of more than one \
            stem, the others move to channels the piece does not use, with a copy \
            of the channel's program, controllers and bends, so the piece sounds \
            the same; each stem keeps its own reverb and chorus and the stems add \
            up to the mixdown. A group that cannot move (drums, channel 10, mode \
            messages, no free channel, a free channel that would play another \
            preset) stays in its channel's stem, with a \
            warning. NAME.stems.json beside the output says per stem its file, \
            channels, programs, GM classes, presets, tracks, notes, drums, peak \
            and loudness, lists the silent stems (notes, no sound) and the moves; \
            the labels' stem column names the stem. --stems-by channel keeps the \
            files of --stems alone and adds the report.

            Augmentation: --transpose, --tempo and --velocity-scale take a value or \
            a range A..B, drawn for each file from --seed and the file's key (so a \
            file's draw does not depend on the order, the shard or --jobs, and the \
            same seed gives the same bytes); --program-map maps programs (a YAML \
            file, '0..7: 5'). Drum channels (those FluidSynth plays from the \
            percussion bank: channel 10, or a bank select or SysEx making a kit) \
            keep their notes and programs. The labels, stems and the manifest's \
            augment object show the piece as changed.

            Without -r, files are written at 44100 Hz, or at the format's own rate \
            where it takes only some (Opus: 48000), said in the summary line.
            """)

    @Argument(help: ArgumentHelp("Standard MIDI files, or folders to search for them.", valueName: "midi-file|folder"))
    var inputs: [String] = []

    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("The audio file to write (one input).", valueName: "file"))
    var output: String?

    @Option(name: .customLong("output-dir"), help: ArgumentHelp("Folder for the audio files, named after the inputs (several inputs).", valueName: "dir"))
    var outputDirectory: String?

    @Option(help: ArgumentHelp("Also write one file per mixer strip that sounds into this folder (the stems add up to the mixdown).", valueName: "dir"))
    var stems: String?

    @Option(name: .customLong("stems-by"), help: ArgumentHelp("Group the stems by MIDI channel (one file per strip, as --stems alone), track (one per MIDI track) or program (one per program across channels, drums in one); also writes NAME.stems.json beside the output. Needs --stems.", valueName: "channel|track|program"))
    var stemsBy: StemGrouping?

    @OptionGroup var audio: AudioFileOptions
    @OptionGroup var synth: SynthOptions

    @OptionGroup var tailOption: TailOption
    var tail: Double { tailOption.tail ?? TailOption.renderDefault }

    @Option(help: ArgumentHelp("Level under which the tail counts as silent, in dBFS.", valueName: "dB"))
    var silence: Double = TailPolicy.default.silenceThreshold

    @Option(name: .customLong("max-duration"), help: ArgumentHelp("Cut every render at this many seconds (damaged timing; default 3600, none with --no-limit).", valueName: "seconds"))
    var maxDuration: Double?

    @Flag(name: .customLong("no-limit"), help: "Render damage as it is: no tempo or thinning rule, and no --max-duration unless given.")
    var noLimit = false

    @Flag(name: .customLong("keep-end-of-track"), help: "Render to the End of Track however long after the last event it comes; without it, an End of Track more than 10 s after the last event is dead air, not rendered past where the sound dies away.")
    var keepEndOfTrack = false

    /// `--max-duration` as it applies: as given, else an hour unless `--no-limit`.
    var maxDurationLimit: Double? { maxDuration ?? (noLimit ? nil : RenderJob.Options.defaultMaxDuration) }

    @Option(name: .customLong("max-gap"), help: ArgumentHelp("A stretch with no event in any track longer than this is a corrupt delta time: cut to this length, and said (0: never).", valueName: "seconds"))
    var maxGap: Double = RenderJob.Options.defaultMaxGap

    // Batches.
    @Option(name: .customLong("from-list"), help: ArgumentHelp("Read more inputs from a file, one path a line ('-': standard input).", valueName: "file"))
    var fromList: String?

    @Option(name: .customLong("input-root"), help: ArgumentHelp("Key each input file (for --shard and the layout under --output-dir) by its path below this folder (default: the deepest folder holding every input).", valueName: "dir"))
    var inputRoot: String?

    @Option(help: ArgumentHelp("Files rendered at once, each by its own synth (default: the number of cores).", valueName: "n"))
    var jobs: Int?

    @Option(help: ArgumentHelp("Synths rendering each file in parallel, one thread each (default: the number of cores for one file, 1 for a batch and a take; in a batch --jobs takes the cores).", valueName: "n"))
    var threads: Int?

    @Option(help: ArgumentHelp("Frames per render block (default: 512 for one synth, 2048 for a pool and 256 for a take). A take gives live's samples at live's period (its --period, JACK's buffer size): a control moves its parameter at a block's start.", valueName: "frames"))
    var block: Int?

    @Option(help: ArgumentHelp("Write one JSON line per input (per input and font with --soundfont-pick all) to this file (JSON Lines; a rerun replaces the lines of what it renders again); each input's line is also written beside its output (NAME.manifest.json), so a resumed batch has the figures of every finished input.", valueName: "file.jsonl"))
    var manifest: String?

    @Flag(name: .customLong("skip-existing"), help: "Leave renderings already finished alone (resume a batch): the output and every file asked for with it (labels, stems, NAME.stems.json, NAME.manifest.json); one missing renders the input again.")
    var skipExisting = false

    @Option(help: ArgumentHelp("Render only shard K of N (0 <= K < N), chosen by a hash of each file's key; 'slurm': K and N from the Slurm array task.", valueName: "K/N|slurm"))
    var shard: String?

    // Loudness.
    // Unconditional: the values are negative numbers (`--normalize -23`).
    @Option(parsing: .unconditional, help: ArgumentHelp("Normalise each file to this integrated loudness (EBU R 128), e.g. -23 or -14.", valueName: "LUFS"))
    var normalize: Double?

    @Option(name: .customLong("true-peak"), parsing: .unconditional, help: ArgumentHelp("With --normalize: the highest true peak allowed.", valueName: "dBTP"))
    var truePeak: Double = -1

    @OptionGroup var labelOptions: LabelOptions

    @Option(name: .customLong("soundfont-pick"), help: ArgumentHelp(
        "With several --soundfont: hash renders each input with one font, chosen by a hash of its key; all renders it with every font, into NAME.FONTNAME.EXT.",
        valueName: "pick"))
    var soundFontPick: SoundFontSet.Pick = .hash

    @OptionGroup(title: "Augmentation") var augment: AugmentOptions

    @Option(help: MIDIInputOptions.mappingHelp)
    var mapping: String?

    @Flag(help: "With --mapping: each input is a performance (live --record-midi), played through the mapping's controls and zones as the keyboard played it; a program change or scene control in it switches scenes there. One synth and live's block (--threads 1 --block 256) unless told: live's samples.")
    var take = false

    @Flag(name: [.customShort("q"), .long], help: "No progress bar and no summary.")
    var quiet = false

    func validate() throws {
        guard !inputs.isEmpty || fromList != nil else { throw ValidationError("give at least one MIDI file (or --from-list)") }
        if output != nil && outputDirectory != nil { throw ValidationError("use either -o or --output-dir, not both") }
        if output != nil && (inputs.count > 1 || fromList != nil) {
            throw ValidationError("-o names one file; with several inputs use --output-dir")
        }
        try checked { () throws(RenderOptionError) in
            try RenderOptionChecks.silence(silence)
            if let maxDuration { try RenderOptionChecks.maxDuration(maxDuration) }
            try RenderOptionChecks.maxGap(maxGap)
        }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1") }
        try checked { () throws(RenderOptionError) in
            if let threads { try RenderOptionChecks.threads(threads) }
            if let block { try RenderOptionChecks.block(block) }
        }
        if shard != nil { _ = try resolvedShard() }
        if let normalize, !(-70...0).contains(normalize) { throw ValidationError("--normalize must be between -70 and 0 LUFS") }
        guard (-20...0).contains(truePeak) else { throw ValidationError("--true-peak must be between -20 and 0 dBTP") }
        if stems != nil && normalize != nil {
            throw ValidationError("--stems cannot be used with --normalize: the stems would not add up to the normalised mixdown")
        }
        if let stems, stems.isEmpty { throw ValidationError("--stems needs a folder name") }
        if stemsBy != nil && stems == nil { throw ValidationError("--stems-by needs --stems DIR (the folder the stems go to)") }
        if stemsBy != nil && output == AudioFileWriter.standardOutput {
            throw ValidationError("--stems-by writes NAME.stems.json beside the output: not with -o -")
        }
        if stems != nil && synth.plugins.inserts.contains(where: { $0.strip == .master }) {
            throw ValidationError("--stems cannot be used with --insert master=...: the stems would not add up to a mixdown the insert changes")
        }
        if labelFormat != nil && output == AudioFileWriter.standardOutput {
            throw ValidationError("--labels writes files beside the output; it cannot go with -o - (standard output)")
        }
        if soundFontPick == .all && output == AudioFileWriter.standardOutput {
            throw ValidationError("--soundfont-pick all writes a file per font; it cannot go with -o - (standard output)")
        }
        try checked { () throws(RenderOptionError) in try RenderOptionChecks.take(take, withMapping: mapping != nil) }
        _ = try audio.resolve(for: output)
    }

    /// `--labels` / `--labels-format`: the labels' format, nil for none.
    var labelFormat: RenderLabels.Format? { labelOptions.format }

    /// `--jobs`, or a file per core.
    var jobCount: Int { jobs ?? RenderJob.Options.cores }

    /// `--threads`, or for one file every core on it; for many a file per core (jobs beat threads);
    /// a take one synth, as live played it.
    func threadCount(files: Int) -> Int { threads ?? (files == 1 && !take ? RenderJob.Options.cores : 1) }

    /// `--block`, or for a take live's default period (its control moves land at the same block starts).
    var blockFrames: Int? { block ?? (take ? HostOptions.defaultPeriodFrames : nil) }

    /// `--shard` as given: K/N, or `slurm` read from the array task's environment.
    func resolvedShard() throws -> Shard? {
        guard let shard else { return nil }
        if shard == "slurm" {
            var environment: [String: String] = [:]
            for name in ["SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_COUNT"] {
                if let value = getenv(name) { environment[name] = String(cString: value) }
            }
            do { return try Shard.slurm(environment: environment) } catch { throw ValidationError("\(error)") }
        }
        guard let part = Shard(parsing: shard) else {
            throw ValidationError("--shard must be K/N with 0 ≤ K < N (e.g. 0/4), or slurm")
        }
        return part
    }

    func run() throws {
        // The plugins' controls (flags' and the mapping's own) are parameters before the mapping is read.
        let rig = HostSession.loadMapping(mapping, synth: synth)
        if let rig, let mapping {
            do throws(RenderOptionError) { try RenderOptionChecks.mappingForRender(rig, path: mapping) } catch { Diagnostics.fail("\(error)") }
        }
        // Read before anything is written: a program map with a mistake ends the command here.
        let augmentation = augment.augmentation()
        let (format, encoding, rate, rateChosen) = try audio.resolve(for: output)
        let rateNote = rateChosen ? ", at \(rate) Hz (\(format.rawValue)'s rate; no -r given)" : ""
        // Every font located and named before anything is planned or written.
        let fonts: SoundFontSet
        do { fonts = try SoundFontSet(paths: try synth.locateSoundFonts(), pick: soundFontPick) } catch { fail(error) }
        var items: [BatchItem]
        do {
            let found = try BatchInputs.gather(arguments: inputs, list: fromList, root: inputRoot)
            guard !found.isEmpty else { Diagnostics.fail("no MIDI files found") }
            if let output {
                guard found.count == 1 else { Diagnostics.fail("-o names one file; \(found.count) MIDI files were found (use --output-dir)") }
                items = [BatchItem(input: found[0].input, key: found[0].key, output: output, stems: stems)]
            } else {
                // Every name is checked, shard or not: each shard must agree the batch is valid.
                let all = try BatchPlan.items(found, directory: outputDirectory, fileExtension: format.fileExtension,
                                              stems: stems)
                let part = try resolvedShard()
                items = all.filter { part?.contains(key: $0.key) ?? true }
                // One MIDI file named (not found in a folder or a list): its stems go into --stems itself.
                if Self.namesOneFile(inputs: inputs, list: fromList, found: found) {
                    for i in items.indices { items[i].stems = stems }
                }
            }
            // Each input with its font, or with each font (--soundfont-pick all).
            items = try fonts.renderings(of: items, stemsInTheirOwnFolder: output != nil
                                         || Self.namesOneFile(inputs: inputs, list: fromList, found: found))
            try BatchPlan.refuseOverwritingInputs(items)
        } catch { fail(error) }

        var settings = BatchRenderer.Settings()
        settings.job.sampleRate = rate
        settings.job.host = synth.hostOptions
        settings.job.host.tracks = (rig?.tracks ?? []) + synth.track
        settings.job.mapping = rig
        settings.job.take = take
        settings.job.tail = TailPolicy(silenceThreshold: silence, maxTail: tail)
        settings.job.maxDuration = maxDurationLimit
        settings.job.limits = noLimit ? nil : .default
        settings.job.keepsEndOfTrack = keepEndOfTrack
        settings.job.maxGap = maxGap > 0 ? maxGap : nil
        settings.job.stems = stems != nil
        settings.job.stemsBy = stemsBy
        settings.job.labels = labelFormat != nil
        settings.labels = labelFormat
        settings.format = format
        settings.encoding = encoding
        settings.jobs = jobCount
        settings.job.threads = threadCount(files: items.count)
        settings.job.blockFrames = blockFrames
        settings.skipExisting = skipExisting
        settings.version = CarillonCommand.configuration.version
        settings.augmentation = augmentation
        settings.manifestLines = manifest != nil
        if let normalize { settings.loudness = .normalize(LoudnessTarget(integrated: normalize, truePeakCeiling: truePeak)) }
        else if manifest != nil { settings.loudness = .measure }

        // The heap's settings before the fonts are read and the workers start: an arena for each
        // thread that renders at once, and freed memory given back (`HeapTuning`).
        do throws(HeapTuningError) {
            try HeapTuning.forRender(workers: max(1, min(settings.jobs, items.count)) * settings.job.threads)
        } catch { Diagnostics.warning("\(error)") }
        settings.job.returnsFreePages = true
        // Every font loaded (a bad one is one line) before any folder or manifest line is written.
        let batch: BatchRenderer
        do { batch = try BatchRenderer(soundFonts: fonts, settings: settings) } catch { fail(error) }
        // A pool's presets against the fonts now read: one missing from all of them ends the command here.
        do throws(RenderOptionError) { try batch.checkTimbrePool() } catch { Diagnostics.fail("\(error)") }
        // -o names a file: its folder must exist, as for any single output.
        if output == nil {
            do { try BatchPlan.createFolders(for: items) } catch { fail(error) }
        }

        let writer: ManifestWriter?
        do {
            if let manifest, let slash = manifest.lastIndex(of: "/"), slash != manifest.startIndex {
                try Folders.make(String(manifest[..<slash]))
            }
            let skipExisting = skipExisting
            writer = try manifest.map { path throws(ManifestError) in
                try ManifestWriter(path: path, items: items, skipped: { skipExisting && batch.outputExists($0) })
            }
        } catch { fail(error) }
        if let writer, writer.unreadableLines > 0 {
            Diagnostics.warning("\(writer.path): \(writer.unreadableLines) unreadable line(s) dropped from the earlier manifest")
        }

        Interruption.install()
        let terminal = isatty(STDERR_FILENO) == 1 && !quiet
        let single = items.count == 1
        let fileBar = terminal && single ? ProgressBar(label: baseName(items[0].input)) : nil
        let batchBar = terminal && !single ? BatchProgressBar() : nil
        var interrupted: [String] = []
        var warned: Set<String> = []   // each worker's job notes the same fallback: said once
        var said: Set<String> = []   // what an input's renderings with every font (--soundfont-pick all) all say: once
        let final: BatchRenderer.Snapshot
        do {
            final = try batch.run(items, manifest: writer, cancel: Interruption.flag) { snapshot, outcomes in
                if !outcomes.isEmpty { fileBar?.clear(); batchBar?.clear() }
                for o in outcomes {
                    for note in o.notes where warned.insert(note).inserted { Diagnostics.warning(note) }
                    report(o, single: single, rateNote: rateNote, interrupted: &interrupted, said: &said)
                }
                if let p = snapshot.current.first ?? nil { fileBar?.show(p) }
                if Interruption.flag.isSet { batchBar?.clear() } else { batchBar?.show(snapshot) }
            }
        } catch { fail(error) }
        batchBar?.clear(); fileBar?.clear()

        if let problem = batch.manifestError { Diagnostics.error("\(problem)") }
        if Interruption.flag.isSet {
            let signal = Interruption.signal.load(ordering: .relaxed)
            let name = signal == SIGTERM ? "SIGTERM" : "SIGINT"
            if single, let only = interrupted.first {
                Diagnostics.error("interrupted; \(only) was not written (\(name))")
            } else {
                let list = interrupted.isEmpty ? "" : "; not written: " + interrupted.joined(separator: ", ")
                Diagnostics.error("interrupted (\(name)) after \(final.done) of \(final.total) files\(list)")
            }
            throw ExitCode(128 + signal)
        }
        if !single && !quiet {
            print("\(final.done - final.failed - final.skipped) rendered, \(final.skipped) skipped, \(final.failed) failed "
                  + "in \(formatted(final.elapsed, 1)) s (\(realTime(final.speed)))")
        }
        if final.failed > 0 || batch.manifestError != nil { throw ExitCode.failure }
    }

    /// Whether the command line names one MIDI file, as a file (not a folder or a list):
    /// its stems go into --stems itself, a batch's into a folder per input.
    static func namesOneFile(inputs: [String], list: String?, found: [(input: String, key: String)]) -> Bool {
        list == nil && inputs.count == 1 && found.count == 1 && found[0].input == inputs[0]
    }

    private func report(_ o: BatchRenderer.Outcome, single: Bool, rateNote: String, interrupted: inout [String],
                        said: inout Set<String>) {
        if o.interrupted { interrupted.append(o.item.output); return }
        switch o.entry.status {
        case .failed:
            let message = o.entry.error ?? ""
            // MIDI file errors already start with the file's path.
            let line = single || message.hasPrefix(o.item.input) ? message : "\(o.item.input): \(message)"
            if said.insert(line).inserted { Diagnostics.error(line) }
        case .skipped:
            if !quiet { print("\(o.item.output): exists, skipped") }
        case .ok:
            guard let s = o.summary else { return }
            var warnings = s.shortenedGaps.map { gap in
                "\(o.item.input): " + (gap.trailing
                    ? "the end of track comes \(clock(gap.length)) after the last event (at \(clock(gap.start)))"
                    : "\(clock(gap.length)) without an event at \(clock(gap.start)) (a corrupt delta time?)")
                    + ": cut to \(clock(maxGap)) (--max-gap)"
            }
            // The reader's salvage of a damaged file: rendered as read, but said.
            warnings += s.warnings.map { "\(o.item.input): \($0)" }
            if s.notesDropped > 0, let draw = s.augmentation {
                Diagnostics.warning("\(o.item.input): \(s.notesDropped) note\(s.notesDropped == 1 ? "" : "s") moved outside 0...127 by "
                                    + "--transpose \(draw.transpose > 0 ? "+" : "")\(draw.transpose) dropped")
            }
            if s.deadAir > 0 {
                warnings.append("\(o.item.input): the end of track comes long after the last sound: rendered to "
                                + "\(clock(s.duration)) where the sound died away, \(clock(s.deadAir)) of dead air left out "
                                + "(--keep-end-of-track keeps it)")
            }
            for cut in s.limits {
                let hint = if case .maxDuration = cut.reason {
                    maxDuration == nil ? " (the default limit: --max-duration or --no-limit goes on)" : ""
                } else {
                    " (--no-limit renders it as the file says)"
                }
                warnings.append("\(o.item.input): \(cut)" + (cut.seconds > 0 ? ", \(clock(cut.seconds)) left out" : "") + hint)
            }
            for line in warnings where said.insert(line).inserted { Diagnostics.warning(line) }
            guard !quiet else { return }
            let line = Self.line(s) + rateNote + (s.loudness.map(Self.loudnessText) ?? "")
            if o.item.output == AudioFileWriter.standardOutput {
                // Standard output carries the audio: the summary goes to stderr.
                var text = line + "\n"
                text.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
            } else {
                print(line)
            }
        }
    }

    static func loudnessText(_ r: LoudnessReport) -> String {
        var text = ", " + level(r.loudness, "LUFS")
        if let gain = r.gain, let after = r.normalizedLoudness {
            text += " → \(level(after, "LUFS")) (gain \(level(gain, "dB")))"
        }
        return text
    }

    static func line(_ s: RenderJob.Summary) -> String {
        let peak = s.peak > 0 ? level(s.peakDBFS, "dBFS") : "silent"
        return "\(s.output): \(clock(s.duration)) (piece \(clock(s.pieceDuration))), peak \(peak), "
            + "\(s.clippedSamples) clipped samples, rendered in \(formatted(s.elapsed, 2)) s "
            + "(\(realTime(s.speed)))"
            + (s.refusedSynthCalls > 0 ? ", \(s.refusedSynthCalls) synth calls refused" : "")
            + (s.droppedMessages > 0 ? ", \(s.droppedMessages) events dropped" : "")
            + (s.shortenedGaps.isEmpty ? "" : ", \(s.shortenedGaps.count) gap\(s.shortenedGaps.count == 1 ? "" : "s") cut (--max-gap)")
            + (s.deadAir > 0 ? ", \(clock(s.deadAir)) of dead air left out" : "")
            + (s.limits.isEmpty ? "" : ", cut by \(s.limits.count) limit\(s.limits.count == 1 ? "" : "s")")
    }
}

extension StemGrouping: ExpressibleByArgument {}
extension SoundFontSet.Pick: ExpressibleByArgument {}
