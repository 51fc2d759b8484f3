import Engine
import MIDI

/// How a render tells damage from music, so that a damaged file (scraped
/// files: corrupt delta times just under `--max-gap`, a corrupt Set Tempo)
/// renders the music it holds in seconds instead of 16 hours of nearly
/// nothing. Applied by default (`RenderJob.Options.limits`; `render
/// --no-limit` turns them off), each said in the summary (`RenderJob.Summary.limits`),
/// on stderr and in the manifest:
///
/// - a tempo that stretches the music out of shape — the same notes suddenly
///   `tempoJump` (8) times slower and as many times sparser in seconds than the
///   piece elsewhere, adding over `tempoExtraSeconds` (30 s), or stretched
///   silence; or `tempoJump` times faster with its notes squashed past
///   `playableOnsetsPerSecond` — plays at the tempo around it
///   (`StandardMIDIFile.damagedTempos`). A slow tempo is no damage by its
///   number: a movement written at 20 beats per minute, a ritardando, a
///   fermata stay as written;
/// - a piece that thins out: at the first note-on after which a whole
///   `thinWindow` (10 minutes) of the piece holds fewer than `thinNotes` (10)
///   note-ons, or than a tenth of its busiest 10 minutes (at most one a
///   second: a corrupt track's few notes a minute after the music), the rest is damage, and the piece ends `thinGrace` (10 s)
///   after that note (at its last event up to then), its tail then ringing
///   out as at any end (`Score.endingWhereItThinsOut`);
/// - what is left stops at `--max-duration` (`RenderJob.Options.defaultMaxDuration`, an hour).
public struct PieceLimits: Sendable, Equatable {
    /// How many times slower (or faster) than the tempo around it, and sparser
    /// (or denser) in seconds than the piece elsewhere, a damaged stretch is.
    public var tempoJump: Double = 8
    /// Seconds a slow stretch must add to the piece to be damage (a fermata adds a few).
    public var tempoExtraSeconds: Double = 30
    /// Onsets a second (distinct note-on times) beyond any player: a fast stretch must pass it to be damage.
    public var playableOnsetsPerSecond: Double = 100
    public var thinWindow: Double = 600
    public var thinNotes: Int = 10
    public var thinGrace: Double = 10

    public init() {}
    public static let `default` = PieceLimits()

    /// What a limit took out of a piece, and why.
    public struct Cut: Sendable, Equatable, CustomStringConvertible {
        public enum Reason: Sendable, Equatable {
            /// Stretches of the tempo map played at the tempo around them: each one's tempo as written
            /// (beats per minute) and where it began (the file's seconds).
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
                return "\(tempos.count) tempo\(tempos.count == 1 ? " that stretches" : "s that stretch") the music out of shape (\(list)) "
                    + "played at the tempo around \(tempos.count == 1 ? "it" : "them")"
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
    /// A stretch of the tempo map judged damage (see `PieceLimits`), and the
    /// tempo it plays at instead.
    public struct DamagedTempo: Sendable, Equatable {
        /// The change that begins the stretch (it lasts to the next change, or to the file's last tick).
        public var change: TempoMap.Change
        /// The tempo around it (µs a quarter): the last tempo kept before it, or for the file's first the piece's prevailing one.
        public var instead: UInt32
        /// How many times slower (above 1) or faster (below 1) than `instead` the stretch was written.
        public var factor: Double { Double(change.microsecondsPerQuarterNote) / Double(instead) }

        public init(change: TempoMap.Change, instead: UInt32) {
            self.change = change
            self.instead = instead
        }
    }

    /// The stretches of the tempo map that are damage, judged by what each
    /// does to the notes under it, never by its number (a movement written at
    /// 19.99998 beats per minute is music). Each stretch (a tempo in force to
    /// the next change) is compared with the tempo around it — the last one
    /// kept before it, for the first stretch the piece's prevailing tempo (the
    /// median over ticks) — and with the
    /// piece's own density elsewhere: onsets (distinct note-on ticks) per tick
    /// of its music (first to last onset) outside the stretch, played at the
    /// tempo around it (onsets a second). It is
    /// damage when
    ///
    /// - slow: it is `tempoJump` times slower than the tempo around it, adds
    ///   at least `tempoExtraSeconds` to the piece, and its onsets per second
    ///   fall `tempoJump` times below the piece's elsewhere (none: stretched
    ///   silence) — the same music suddenly crawling, not a slow movement
    ///   (one tempo throughout), a ritardando (step by step), a fermata (short)
    ///   or a slow section written in short notes (its density stays);
    /// - fast: it is `tempoJump` times faster, and at least two onsets under it
    ///   come `tempoJump` times denser than elsewhere and above
    ///   `playableOnsetsPerSecond` — notes squashed together.
    ///
    /// Where it cannot tell — one tempo, no notes outside the stretch, SMPTE
    /// division, a stretch without a Set Tempo event of its own (the default
    /// before the first) — the file stays as written.
    public func damagedTempos(_ rules: PieceLimits = .default) -> [DamagedTempo] {
        guard case .ticksPerQuarterNote(let ppqn) = division, ppqn > 0 else { return [] }
        let map = tempoMap
        let changes = map.changes
        guard changes.count > 1 else { return [] }
        var onsets: [UInt64] = []
        var tempoTicks = Set<UInt64>()
        for (track, start) in zip(tracks, trackStartTicks) {
            for e in track.events {
                switch e.event {
                case .midi(.noteOn(let on)) where on.velocity.value > 0: onsets.append(start &+ e.tick)
                case .meta(.tempo): tempoTicks.insert(start &+ e.tick)
                default: break
                }
            }
        }
        onsets.sort()
        onsets = onsets.reduce(into: []) { if $0.last != $1 { $0.append($1) } }   // a chord is one onset
        guard let first = onsets.first, let last = onsets.last else { return [] }
        let end = max(lastTick, changes[changes.count - 1].tick)
        // The first stretch has no tempo before it: it is judged against the piece's prevailing tempo
        // (the median over ticks), not the next one, which may be the damage.
        var byTempo: [(tempo: UInt32, ticks: UInt64)] = changes.indices.map { k in
            (changes[k].microsecondsPerQuarterNote, (k + 1 < changes.count ? changes[k + 1].tick : end) - changes[k].tick)
        }
        byTempo.sort { $0.tempo < $1.tempo }
        let allTicks = byTempo.reduce(UInt64(0)) { $0 + $1.ticks }
        var counted: UInt64 = 0
        let prevailing = byTempo.first { counted += $0.ticks; return 2 * counted >= allTicks }?.tempo ?? changes[0].microsecondsPerQuarterNote
        var found: [DamagedTempo] = []
        var kept: UInt32? = nil
        for (k, change) in changes.enumerated() {
            let stop = k + 1 < changes.count ? changes[k + 1].tick : end
            // The tempo around it: the last one kept before it.
            let around = kept ?? prevailing
            let inside = Self.count(onsets, from: change.tick, to: stop, last: k + 1 == changes.count)
            // Elsewhere is counted in ticks (the music's own density, whatever other stretches' tempos
            // do to it), then played at the tempo around the stretch.
            let overlap = stop > change.tick ? min(stop, last) - min(max(change.tick, first), min(stop, last)) : 0
            let outsideTicks = Double(last - first) - Double(overlap)
            let outside = onsets.count - inside
            var damaged = false
            if tempoTicks.contains(change.tick), outside > 0, outsideTicks > 0 {
                let elsewhere = Double(outside) / outsideTicks * Double(ppqn) * 1e6 / Double(around)   // onsets a second
                let factor = Double(change.microsecondsPerQuarterNote) / Double(around)
                let seconds = Double(stop - change.tick) * Double(change.microsecondsPerQuarterNote) / (Double(ppqn) * 1e6)
                let density = Double(inside) / max(seconds, 1e-9)
                if factor >= rules.tempoJump {
                    damaged = seconds - seconds / factor >= rules.tempoExtraSeconds && density * rules.tempoJump <= elsewhere
                } else if factor * rules.tempoJump <= 1, inside >= 2 {
                    damaged = density >= rules.tempoJump * elsewhere && density > rules.playableOnsetsPerSecond
                }
            }
            if damaged {
                found.append(DamagedTempo(change: change, instead: around))
            } else {
                kept = change.microsecondsPerQuarterNote
            }
        }
        return found
    }

    /// How many of the sorted `ticks` fall in `from..<to` (`from...to` for the last stretch).
    static func count(_ ticks: [UInt64], from: UInt64, to: UInt64, last: Bool) -> Int {
        func firstIndex(atLeast t: UInt64) -> Int {
            var lo = 0, hi = ticks.count
            while lo < hi { let mid = (lo + hi) / 2; if ticks[mid] < t { lo = mid + 1 } else { hi = mid } }
            return lo
        }
        let upper = last ? (to == .max ? ticks.count : firstIndex(atLeast: to + 1)) : firstIndex(atLeast: to)
        return max(0, upper - firstIndex(atLeast: from))
    }

    /// The file with each damaged stretch (`damagedTempos`) played at its
    /// `instead` tempo: every Set Tempo event from the stretch's tick to the
    /// next change of the tempo map is rewritten (a damaged tempo repeated in
    /// another track included). Every event and tick stays.
    public func replacingTempos(_ damaged: [DamagedTempo]) -> StandardMIDIFile {
        guard !damaged.isEmpty else { return self }
        let map = tempoMap.changes
        // The file-axis tick ranges whose tempo events are rewritten, each with the tempo that plays them.
        let ranges: [(ticks: Range<UInt64>, tempo: UInt32)] = damaged.map { d in
            let next = map.first { $0.tick > d.change.tick }?.tick ?? .max
            return (d.change.tick..<next, d.instead)
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
