import Engine
import MIDI

/// How a render tells damage from music, so that a damaged file (scraped
/// files: corrupt delta times just under `--max-gap`, a corrupt Set Tempo)
/// renders the music it holds in seconds instead of 16 hours of nearly
/// nothing. Applied by default (`RenderJob.Options.limits`; `render
/// --no-limit` turns them off), each said in the summary (`RenderJob.Summary.limits`),
/// on stderr and in the manifest:
///
/// - a tempo no one plays — slower than 20 (a quarter over 3 s) or faster than 1000 beats per
///   minute — in force for more than 4 quarter notes is ignored: the tempo
///   before it goes on (`StandardMIDIFile.implausibleTempos`);
/// - a piece that thins out: at the first note-on after which a whole
///   `thinWindow` (10 minutes) of the piece holds fewer than `thinNotes` (10)
///   note-ons, or than a tenth of its busiest 10 minutes (at most one a
///   second: a corrupt track's few notes a minute after the music), the rest is damage, and the piece ends `thinGrace` (10 s)
///   after that note (at its last event up to then), its tail then ringing
///   out as at any end (`Score.endingWhereItThinsOut`);
/// - what is left stops at `--max-duration` (`RenderJob.Options.defaultMaxDuration`, an hour).
public struct PieceLimits: Sendable, Equatable {
    public var plausibleTempo: ClosedRange<Double> = 20...1000
    /// Quarter notes an implausible tempo may last and still be music.
    public var tempoQuarters: UInt64 = 4
    public var thinWindow: Double = 600
    public var thinNotes: Int = 10
    public var thinGrace: Double = 10

    public init() {}
    public static let `default` = PieceLimits()

    /// What a limit took out of a piece, and why.
    public struct Cut: Sendable, Equatable, CustomStringConvertible {
        public enum Reason: Sendable, Equatable {
            /// Set Tempo events ignored: their tempos (beats per minute) and where each began (the file's seconds).
            case tempo([(beatsPerMinute: Double, seconds: Double)])
            /// The piece thinned out after a note-on at `after` seconds: `notes` note-ons in the `window` seconds after it.
            case thin(after: Double, notes: Int, window: Double)
            /// The render stopped at `--max-duration` seconds.
            case maxDuration(Double)

            public static func == (a: Reason, b: Reason) -> Bool {
                switch (a, b) {
                case let (.tempo(x), .tempo(y)):
                    x.count == y.count && zip(x, y).allSatisfy { $0.beatsPerMinute == $1.beatsPerMinute && $0.seconds == $1.seconds }
                case let (.thin(a1, n1, w1), .thin(a2, n2, w2)): a1 == a2 && n1 == n2 && w1 == w2
                case let (.maxDuration(x), .maxDuration(y)): x == y
                default: false
                }
            }
        }
        public var reason: Reason
        /// Seconds of the piece it took out (of the render's time).
        public var seconds: Double

        /// One sentence fragment: what was found and what became of it.
        public var description: String {
            switch reason {
            case .tempo(let tempos):
                let list = tempos.prefix(3).map { "\(Self.decimal($0.beatsPerMinute, 2)) BPM at \(Self.decimal($0.seconds, 1)) s" }
                    .joined(separator: ", ") + (tempos.count > 3 ? " …" : "")
                return "\(tempos.count) tempo\(tempos.count == 1 ? "" : "s") no one plays (\(list)) ignored, the tempo before going on"
            case .thin(let after, let notes, let window):
                return "the piece thins out after the note at \(Self.decimal(after, 1)) s (\(notes) note\(notes == 1 ? "" : "s") in the "
                    + "\(Self.decimal(window, 0)) s after it): ended there as damage"
            case .maxDuration(let limit):
                return "stopped at --max-duration \(Self.decimal(limit, 1)) s"
            }
        }

        /// `value` with `places` decimals (no Foundation here).
        static func decimal(_ value: Double, _ places: Int) -> String {
            guard value.isFinite else { return "\(value)" }
            var scale = 1.0
            for _ in 0..<places { scale *= 10 }
            let n = (abs(value) * scale).rounded()
            guard n < 1e15 else { return "\(value)" }
            let whole = Int(n / scale), fraction = Int(n - Double(whole) * scale)
            var text = (value < 0 && n > 0 ? "-" : "") + String(whole)
            if places > 0 {
                let digits = String(fraction)
                text += "." + String(repeating: "0", count: places - digits.count) + digits
            }
            return text
        }
    }
}

extension Score {
    /// Ends the piece where it thins out (see `PieceLimits`). The first
    /// note-on (velocity above 0) after which the `window` seconds that
    /// follow, all before the piece's last event, hold fewer than `notes`
    /// note-ons, or than a tenth of the piece's busiest `window` (but not more
    /// than one a second), is near the end of the music; the music goes on through the
    /// note-ons that follow it within `grace` seconds of each other, and
    /// every event more than `grace` seconds after the last of those is
    /// dropped: the piece ends at its last event left. Returns that last
    /// note-on's time and the note-ons in the `window` after it; nil (the
    /// score unchanged) when the piece never thins out.
    public mutating func endingWhereItThinsOut(window: Double, notes: Int, grace: Double) -> (after: Double, notes: Int)? {
        guard let last = events.last?.seconds else { return nil }
        var onsets: [Double] = []
        for e in events where e.message.isNoteOn { onsets.append(e.seconds) }
        // Thin is measured against the piece's own music: fewer than `notes`, or than a
        // tenth of its busiest `window` (a corrupt track's few notes a minute after a
        // piece of a thousand a minute), but never more than one a second.
        var busiest = 0, b = 0
        for (i, t) in onsets.enumerated() {
            while onsets[b] < t - window { b += 1 }
            busiest = max(busiest, i - b + 1)
        }
        let notes = max(notes, min(busiest / 10, Int(window)))
        var j = 0
        for (i, t) in onsets.enumerated() {
            guard t + window <= last else { return nil }
            j = max(j, i + 1)
            while j < onsets.count && onsets[j] <= t + window { j += 1 }
            guard j - i - 1 < notes else { continue }
            // The music goes on as long as its notes follow within `grace`: the
            // thin stretch begins at the first longer silence.
            var k = i
            while k + 1 < onsets.count && onsets[k + 1] - onsets[k] <= grace { k += 1 }
            let count = onsets[(k + 1)...].prefix { $0 <= onsets[k] + window }.count
            let end = onsets[k] + grace
            var kept = events
            if let cut = kept.firstIndex(where: { $0.seconds > end }) { kept.removeSubrange(cut...) }
            let sysEx = sysExMessages
            self = Score(events: kept, duration: kept.last?.seconds ?? 0)
            sysExMessages = sysEx
            return (onsets[k], count)
        }
        return nil
    }

    /// The time of the piece's last event (0 without any): where the music
    /// stops, whatever the file's end of track says.
    public var lastEventSeconds: Double { events.last?.seconds ?? 0 }
}

extension StandardMIDIFile {
    /// Tempos no one plays, read as damage (a flipped byte in a Set Tempo event
    /// turns 120 beats per minute into 3): each change of the tempo map whose
    /// beats per minute fall outside `plausible` and that stays in force for
    /// more than `quarters` quarter notes (to the next change, or to the
    /// file's last tick). A short one (a fermata written as one very slow
    /// beat) is music and stays. None with SMPTE division (tempo means nothing there).
    public func implausibleTempos(plausible: ClosedRange<Double> = 20...1000, quarters: UInt64 = 4) -> [TempoMap.Change] {
        guard case .ticksPerQuarterNote(let ppqn) = division, ppqn > 0 else { return [] }
        let changes = tempoMap.changes
        let end = lastTick
        var found: [TempoMap.Change] = []
        for (k, change) in changes.enumerated() where !plausible.contains(change.beatsPerMinute) {
            let next = k + 1 < changes.count ? changes[k + 1].tick : end
            if next > change.tick && next - change.tick > quarters * UInt64(ppqn) { found.append(change) }
        }
        return found
    }

    /// The file with the Set Tempo events that make `changes` (as
    /// `implausibleTempos` finds them) set to the last `plausible` tempo
    /// before each (120 beats per minute at the start): every tempo event in
    /// a change's stretch of the tempo map, from its tick to the next change,
    /// is rewritten, so the tempo before it goes on (not a short implausible
    /// one kept as music). Every event and tick stays.
    public func ignoringTempos(_ changes: [TempoMap.Change], plausible: ClosedRange<Double> = 20...1000) -> StandardMIDIFile {
        guard !changes.isEmpty else { return self }
        let ignored = Set(changes.map(\.tick))
        // The file-axis tick ranges whose tempo events are rewritten, each with the tempo that goes on.
        var ranges: [(ticks: Range<UInt64>, tempo: UInt32)] = []
        var inForce = TempoMap.defaultMicrosecondsPerQuarterNote
        let map = tempoMap.changes
        for (k, change) in map.enumerated() {
            guard ignored.contains(change.tick) else {
                if plausible.contains(change.beatsPerMinute) { inForce = change.microsecondsPerQuarterNote }
                continue
            }
            ranges.append((change.tick..<(k + 1 < map.count ? map[k + 1].tick : .max), inForce))
        }
        var file = self
        for (t, start) in zip(file.tracks.indices, trackStartTicks) {
            for e in file.tracks[t].events.indices {
                guard case .meta(.tempo) = file.tracks[t].events[e].event else { continue }
                let tick = start &+ file.tracks[t].events[e].tick
                if let range = ranges.first(where: { $0.ticks.contains(tick) }) {
                    file.tracks[t].events[e].event = .meta(.tempo(microsecondsPerQuarterNote: range.tempo))
                }
            }
        }
        return file
    }
}
