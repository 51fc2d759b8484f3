import Controls
import Engine
import Hosting
import LV2
import MIDI
import MappingFiles
import Parameters
import Sampling

/// What one file becomes before anything renders: the score after the
/// augmentation and the gap cuts, split into stem groups (`--stems-by`), the
/// maps the labels are drawn from and the sample plan the split was checked
/// with. `RenderJob.plan` makes it from a file and the job's options (the
/// damage rules, `PieceLimits`, included): the one producer of what a piece
/// becomes, for the render (`RenderJob.render`, which only plays it, in its
/// one block loop, and writes what it asks for) and for labels without a
/// render (`RenderJob.labels(of:tempo:)`).
struct PiecePlan {
    /// The score the render thread plays (its duration the piece's; the
    /// `--track` files' lengths are the render's business).
    var score: Score
    /// Stretches longer than `--max-gap` between events, cut to it (a late
    /// end of track is dead air, `deadAirCut`, unless `--keep-end-of-track`
    /// keeps it whole).
    var gaps: [Score.Gap]
    /// Seconds of a late end of track `--max-gap` took out already (dead air).
    var deadAirCut: Double = 0
    /// What the damage rules (`PieceLimits`) took out of the piece.
    var limits: [PieceLimits.Cut] = []
    /// With `Options.labels`: the file's tempo, beats and track maps for the labels.
    var maps: RenderLabels.FileMaps?
    /// Notes the transposition pushed outside 0...127, dropped.
    var notesDropped: Int
    /// With `--stems-by`: the file's track names (stem names, the report).
    var trackNames: [String]
    /// With `--stems-by`: the score split so each channel carries one stem group.
    var groups: StemGroups?
    /// The split score's sample plan, found while checking the split (nil:
    /// planned when the piece's synths are made).
    var samples: SampleSelection.Plan?
    /// With `--take`: the parameters the mapping's controls moved, by time (`TakeRouting`).
    var changes: [(seconds: Double, change: ParameterChange)] = []
    /// What the reader salvaged of a damaged file (`StandardMIDIFile.warnings`).
    var warnings: [SMFWarning] = []
    /// With `--timbres`: what each track drew (`TimbreDraw`).
    var timbres: [TimbrePick] = []
    /// With `--timbres`: the split that moved the tracks apart before the draw
    /// (its moves and kept groups, by track, lead the stems report's; see `stemReportGroups`).
    var timbreSplit: StemGroups? = nil
}

extension RenderJob {
    /// Reads `input` and works out what is rendered of it (see `PiecePlan`):
    /// the augmentation applied (tempo to the file's tempo events, an
    /// SMPTE-timed score's times; notes and programs on the scout), gaps cut,
    /// label maps drawn (with `labels`), and with `stems` and `Options.stemsBy`
    /// the score split into stem groups, the scout replaying the selections
    /// before and after the split. `playedAt`: the piece as a transport plays
    /// it at that tempo scale (`play --tempo`): the score's times divided by
    /// it, the labels' beats from the file's tempo events scaled. With `midi`,
    /// the file's bytes are those (in memory: the C ABI's render) and `input`
    /// only names it.
    func plan(input: String, midi: [UInt8]? = nil, augmentation: Augmentation.Draw?, stems: Bool, labels: Bool,
              playedAt tempo: Double = 1) throws(Failure) -> PiecePlan {
        var score: Score
        let gaps: [Score.Gap]
        var maps: RenderLabels.FileMaps? = nil
        var notesDropped = 0
        var trackNames: [String] = []
        var changes: [(seconds: Double, change: ParameterChange)] = []
        var deadAirCut = 0.0
        var limits: [PieceLimits.Cut] = []
        var warnings: [SMFWarning] = []
        // A set's other fonts out of reach until this piece's draw places them (`drawTimbres`).
        try placeOtherFonts(nil)
        do {
            // The file lives only here: a render keeps its score, not the file.
            var file: StandardMIDIFile
            do throws(MIDIFileError) {
                if let midi {
                    do throws(SMFError) { file = try StandardMIDIFile(bytes: midi) } catch { throw .notReadable(path: input, error) }
                } else {
                    file = try StandardMIDIFile(contentsOf: input)
                }
            } catch { throw .midiFile(error) }
            warnings = file.warnings
            if let rules = options.limits {
                // Before anything reads the tempo map: the score, the augmentation and the labels' beats follow.
                let tempos = file.damagedTempos(rules)
                if !tempos.isEmpty {
                    let before = file.duration
                    file = file.replacingTempos(tempos)
                    limits.append(PieceLimits.Cut(reason: .tempo(tempos.map { (beatsPerMinute: $0.change.beatsPerMinute, seconds: $0.change.seconds) }),
                                                  seconds: max(0, before - file.duration)))
                }
            }
            if let augmentation { file = file.scalingTempo(by: augmentation.tempo) }
            score = Score(file)
            if tempo != 1 {
                // The transport divides the piece's times by its tempo scale: so do the notes here
                // (the beats come from the file's tempo events scaled, a µs rounded at most).
                score = score.faster(by: tempo)
                file = file.scalingTempo(by: tempo)
            }
            if let mapping = options.mapping {
                if options.take {
                    // The performance through the rig, on a hub of its own (the job's stays as it started).
                    let take: TakeRouting
                    let plugins = self.plugins, rate = options.sampleRate
                    let block = options.blockFrames ?? HostOptions.defaultPeriodFrames
                    do {
                        take = try TakeRouting(file, hub: assembly.makeHub(mapping: mapping, plugins: plugins),
                                               effects: plugins?.midiEffects ?? [], sampleRate: rate, blockFrames: block) { k, store throws(LV2Error) in
                            try plugins!.makeMIDIEffect(k, sampleRate: rate, maxFrames: block,
                                                        offline: true, parameters: store)
                        }
                    } catch { throw .plugin(error) }
                    score = take.score
                    changes = take.changes
                }
                score = score.startingWith(Self.presetMessages(mapping))
            }
            if let augmentation {
                if case .smpte = file.division { score = score.faster(by: augmentation.tempo) }
                (score, notesDropped) = scout.instrument.augmenting(score, with: augmentation)
            }
            var cuts = options.maxGap.map { score.shortenGaps(longerThan: $0) } ?? []
            if options.keepsEndOfTrack, let last = cuts.last, last.trailing {
                // `--keep-end-of-track`: the last stretch stays whole (the holes before it are cut).
                score.duration = score.lastEventSeconds + last.length
                cuts.removeLast()
            }
            // A late end of track is no corrupt delta: it is dead air, said as such.
            if let last = cuts.last, last.trailing, let maxGap = options.maxGap {
                gaps = Array(cuts.dropLast())
                deadAirCut = last.length - maxGap
            } else {
                gaps = cuts
            }
            if let rules = options.limits {
                let before = score.duration
                if let thin = score.endingWhereItThinsOut(window: rules.thinWindow, notes: rules.thinNotes, grace: rules.thinGrace) {
                    limits.append(PieceLimits.Cut(reason: .thin(after: thin.after, notes: thin.notes, window: rules.thinWindow),
                                                  seconds: before - score.duration + deadAirCut))
                    deadAirCut = 0
                }
            }
            if labels { maps = RenderLabels.FileMaps(file, score: score, gaps: cuts, maxGap: options.maxGap) }
            if (stems && options.stemsBy != nil) || augmentation?.timbres != nil { trackNames = RenderLabels.trackNames(file) }
        }
        /// With `--stems-by`: the score split so each channel carries one stem group.
        var groups: StemGroups? = nil
        /// The split score's plan, found while checking the split.
        var splitPlan: SampleSelection.Plan? = nil
        /// With `--timbres`: what each track drew.
        var timbres: [TimbrePick] = []
        var timbreSplit: StemGroups? = nil
        if let draw = augmentation?.timbres {
            let split: StemGroups
            (score, timbres, split) = try drawTimbres(score, draw, input: input, trackNames: trackNames)
            timbreSplit = split
        }
        if stems, let grouping = options.stemsBy {
            let split: StemGroups
            (split, splitPlan) = try splitIntoGroups(score, by: grouping, input: input, trackNames: trackNames)
            score = split.score
            groups = split
        }
        return PiecePlan(score: score, gaps: gaps, deadAirCut: deadAirCut, limits: limits, maps: maps,
                         notesDropped: notesDropped, trackNames: trackNames, groups: groups, samples: splitPlan,
                         changes: changes, warnings: warnings, timbres: timbres, timbreSplit: timbreSplit)
    }

    /// `score` split so each channel carries one group (`StemGroups`), and
    /// the split score's sample plan when notes moved. The presets FluidSynth
    /// selects for each note decide programs and drums, as in the labels.
    func splitIntoGroups(_ score: Score, by grouping: StemGrouping, input: String,
               trackNames: [String]) throws(Failure) -> (StemGroups, SampleSelection.Plan?) {
        let first = try planSamples(score)
        let notePresets = Self.notePresets(first)
        var split = StemGroups.split(score, by: grouping, notePresets: notePresets, skipping: skippedChannels,
                                     pinned: channelsWithSettings, trackNames: trackNames)
        var plan: SampleSelection.Plan? = nil
        if !split.moves.isEmpty {
            // A moved note must play the preset it played: a SysEx may have made a free channel
            // a drum part. Note-ons keep their order in the split score, so the lists line up.
            let second = try planSamples(split.score)
            if second.selection.notePresets == first.selection.notePresets {
                plan = second
            } else {
                split = StemGroups.split(score, by: grouping, notePresets: notePresets, skipping: skippedChannels,
                                         pinned: channelsWithSettings, trackNames: trackNames, moves: false)
            }
        }
        for k in split.kept {
            log.append("\(input): stems: \(k.notes) notes of \(k.group) stay on channel \(k.channel + 1), in stem \(k.stem): \(k.reason)")
        }
        return (split, plan)
    }

    /// The presets `mapping` starts with, as messages at the piece's start: its
    /// `channels:` (live selects them on the synth before anything plays), then
    /// its first scene's (the hub starts there): bank select, then program
    /// change, as `ControlHub` selects a scene's. In the score, so the sample
    /// plan and the labels see them. A bank past bank select's 0…127 (128 on
    /// channel 10 is FluidSynth's drum bank there already) sends no bank select.
    static func presetMessages(_ mapping: ControlMapping) -> [ChannelMessage] {
        let setups = mapping.channels + (mapping.scenes.first?.channels ?? [])
        return setups.flatMap { setup -> [ChannelMessage] in
            let c = setup.channel.intValue
            var messages: [ChannelMessage] = []
            if let bank = setup.bank, bank <= 127 { messages.append(.controlChange(0, value: UInt8(bank), channel: c)) }
            if let program = setup.program { messages.append(.programChange(program.value, channel: c)) }
            return messages
        }
    }
}

extension Score {
    /// The score with `messages` first, at its start (before its own events at 0).
    func startingWith(_ messages: [ChannelMessage]) -> Score {
        guard !messages.isEmpty else { return self }
        var score = Score(events: messages.map { Score.Event(seconds: 0, message: $0) } + events, duration: duration)
        score.sysExMessages = sysExMessages
        return score
    }
}
