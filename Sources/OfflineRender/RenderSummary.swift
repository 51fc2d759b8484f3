import Engine
import MIDI
import Glibc

extension RenderJob {
    /// What one render did: the figures the CLI prints, the labels and stems
    /// report it made, and (`facts`) what its manifest line writes.
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
        /// The loudness measured (`Loudness.measure`, `.normalize`), nil when not.
        public var loudness: LoudnessReport?

        public var peakDBFS: Double { peak > 0 ? 20 * log10(Double(peak)) : -.infinity }
        public var speed: Double { elapsed > 0 ? duration / elapsed : .infinity }

        init(input: String, output: String, duration: Double, pieceDuration: Double, peak: Float, clippedSamples: Int,
                    elapsed: Double, refusedSynthCalls: Int, droppedMessages: Int, truncated: Bool = false) {
            self.input = input; self.output = output; self.duration = duration; self.pieceDuration = pieceDuration
            self.peak = peak; self.clippedSamples = clippedSamples; self.elapsed = elapsed
            self.refusedSynthCalls = refusedSynthCalls; self.droppedMessages = droppedMessages; self.truncated = truncated
        }

        /// What the block loop `played` of `piece` (its `score` as played, the tracks' length included).
        init(input: String, output: String, played: BlockLoop.Played, piece: PiecePlan, score: Score, options: Options, elapsed: Double) {
            let rate = Double(options.sampleRate)
            self.init(input: input, output: output, duration: Double(played.frames) / rate, pieceDuration: score.duration,
                      peak: played.peak, clippedSamples: played.clippedSamples, elapsed: elapsed,
                      refusedSynthCalls: played.refusedSynthCalls, droppedMessages: played.droppedMessages,
                      truncated: played.truncated)
            if played.endedInDeadAir { deadAir = max(0, score.duration - duration) }
            deadAir += piece.deadAirCut
            limits = piece.limits
            if played.truncated, let maxDuration = options.maxDuration {
                limits.append(PieceLimits.Cut(reason: .maxDuration(maxDuration), seconds: max(0, score.duration - duration)))
            }
            shortenedGaps = piece.gaps
            secondsCut = piece.gaps.reduce(0) { $0 + $1.length - (options.maxGap ?? 0) }
            notesDropped = piece.notesDropped
            warnings = piece.warnings
            timbres = piece.timbres
        }
    }
}

extension RenderJob.Summary {
    /// The summary's figures as a manifest line writes them (`ManifestEntry`
    /// embeds them: their keys are among the line's). The compiler writes and
    /// reads them; every optional is `@OrNull` (null when absent or not
    /// finite: a silent file's −∞ dBFS). All nil: nothing rendered (a failed
    /// or skipped line). A fact added here, and in `facts`, is in every line.
    public struct Facts: Codable, Sendable, Equatable {
        /// Seconds of the piece (to its last event) and of audio written.
        @OrNull public var pieceDuration: Double? = nil
        @OrNull public var duration: Double? = nil
        @OrNull public var peakDBFS: Double? = nil
        @OrNull public var clippedSamples: Int? = nil
        /// Integrated loudness as rendered, in LUFS (−∞, written as null, for silence).
        @OrNull public var loudness: Double? = nil
        /// With `--normalize`: the true peak as rendered (dBTP), the gain applied
        /// (dB) and the loudness after it.
        @OrNull public var truePeak: Double? = nil
        @OrNull public var gain: Double? = nil
        @OrNull public var normalizedLoudness: Double? = nil
        public var truncated: Bool = false
        /// Stretches with no event longer than `--max-gap` that were cut to it, and the seconds they lost.
        @OrNull public var shortenedGaps: Int? = nil
        @OrNull public var secondsCut: Double? = nil
        /// Seconds of a late end of track not rendered (dead air after the last sound).
        @OrNull public var deadAirSeconds: Double? = nil
        /// Why the damage rules or `--max-duration` cut the piece (`PieceLimits.Cut`,
        /// one sentence each; empty: nothing cut), and the seconds they took out.
        @OrNull public var limits: [String]? = nil
        @OrNull public var limitSecondsCut: Double? = nil
        /// What the MIDI reader salvaged of a damaged file (`SMFWarning`, one
        /// sentence each; empty: a sound file; nil: not rendered).
        @OrNull public var warnings: [String]? = nil
        @OrNull public var renderSeconds: Double? = nil

        public init() {}

        enum CodingKeys: String, CodingKey {
            case pieceDuration = "piece_seconds", duration = "rendered_seconds", peakDBFS = "peak_dbfs"
            case clippedSamples = "clipped_samples", loudness = "loudness_lufs", truePeak = "true_peak_dbtp"
            case gain = "gain_db", normalizedLoudness = "normalized_lufs", truncated
            case shortenedGaps = "gaps_cut", secondsCut = "seconds_cut", renderSeconds = "render_seconds"
            case deadAirSeconds = "dead_air_seconds", limits, limitSecondsCut = "limit_seconds_cut", warnings
        }
    }

    /// This render's facts for its manifest line.
    public var facts: Facts {
        var f = Facts()
        f.pieceDuration = pieceDuration; f.duration = duration
        f.peakDBFS = peakDBFS; f.clippedSamples = clippedSamples
        f.loudness = loudness?.loudness; f.truePeak = loudness?.truePeak
        f.gain = loudness?.gain; f.normalizedLoudness = loudness?.normalizedLoudness
        f.truncated = truncated
        f.shortenedGaps = shortenedGaps.count; f.secondsCut = secondsCut
        f.deadAirSeconds = deadAir
        f.limits = limits.map(\.description); f.limitSecondsCut = limits.reduce(0) { $0 + $1.seconds }
        f.warnings = warnings.map(\.description)
        f.renderSeconds = elapsed
        return f
    }
}
