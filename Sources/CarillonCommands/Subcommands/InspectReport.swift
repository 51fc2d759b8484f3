import Foundation
import MIDI

/// The facts `inspect` shows, as text or JSON, gathered in one pass over the
/// file's bytes without keeping its events (a 9-million-event file costs its
/// own bytes and little more).
struct InspectReport: Encodable {
    struct TrackInfo: Encodable {
        var index: Int
        var name: String?
        /// 1-based, as people count channels.
        var channels: [Int]
        /// Program numbers 0...127 as they appear (GM instrument = program + 1).
        var programs: [Int]
        var events: Int
        var notes: Int
    }
    struct TempoInfo: Encodable {
        var tick: UInt64
        var seconds: Double
        var microsecondsPerQuarterNote: UInt32
        var bpm: Double
    }
    struct TimeSignatureInfo: Encodable {
        var tick: UInt64
        var numerator: Int
        var denominator: Int
    }
    struct KeySignatureInfo: Encodable {
        var tick: UInt64
        var key: String
    }
    /// A silence of more than `longGapSeconds` in the whole score — no track has an
    /// event in it (ends of track do not count) — with music (a channel message or
    /// SysEx) at or after the event that ends it: usually a corrupt delta time. After
    /// the last music the file only ends: that stretch is `trailingSilence`.
    struct GapInfo: Encodable {
        /// The track of the event after the gap.
        var track: Int
        /// Where the event after the gap starts (its delta time), in the file.
        var byte: Int
        /// The event after the gap, on the file's tick axis.
        var tick: UInt64
        var seconds: Double
    }

    /// Gaps longer than this are warned about: no real piece rests five minutes on every track.
    static let longGapSeconds = 300.0

    var file: String
    var format: Int
    var formatName: String
    var division: String
    var ticksPerQuarterNote: Int?
    var tracks: [TrackInfo]
    var tempoChanges: [TempoInfo]
    var timeSignatures: [TimeSignatureInfo]
    var keySignatures: [KeySignatureInfo]
    var duration: Double
    var eventCount: Int
    var noteCount: Int
    var longGaps: [GapInfo]
    /// Seconds from the last music (channel message or SysEx) to the end of the file.
    var trailingSilence: Double
    var warnings: [String]

    init(bytes: UnsafeRawBufferPointer, path: String) throws(SMFError) {
        var summary = Summary()
        let header = try StandardMIDIFile.visit(bytes: bytes, &summary)
        file = path
        format = Int(header.format.rawValue)
        formatName = switch header.format {
        case .singleTrack: "single track"
        case .multiTrack: "multi-track"
        case .sequentialTracks: "sequential tracks"
        }
        switch header.division {
        case .ticksPerQuarterNote(let q):
            division = "\(q) ticks per quarter note"
            ticksPerQuarterNote = Int(q)
        case .smpte(let fps, let tpf):
            division = "SMPTE \(fps == 29 ? "29.97 (30 drop-frame)" : String(fps)) fps, \(tpf) ticks per frame"
        }
        tracks = summary.tracks
        let map = StandardMIDIFile.tempoMap(format: header.format, division: header.division,
                                            trackTempos: summary.tempos, trackEndTicks: summary.endTicks)
        tempoChanges = map.changes.map {
            TempoInfo(tick: $0.tick, seconds: $0.seconds, microsecondsPerQuarterNote: $0.microsecondsPerQuarterNote, bpm: $0.beatsPerMinute)
        }
        // In timeline order: by tick on the file's axis, then track, then file order (the sort is stable).
        let starts = StandardMIDIFile.trackStartTicks(format: header.format, trackEndTicks: summary.endTicks)
        func ordered<T>(_ list: [(track: Int, tick: UInt64, value: T)]) -> [(tick: UInt64, value: T)] {
            list.map { (starts[$0.track] &+ $0.tick, $0.track, $0.value) }
                .enumerated().sorted { ($0.element.0, $0.element.1, $0.offset) < ($1.element.0, $1.element.1, $1.offset) }
                .map { ($0.element.0, $0.element.2) }
        }
        timeSignatures = ordered(summary.timeSignatures).map {
            TimeSignatureInfo(tick: $0.tick, numerator: Int($0.value.numerator), denominator: $0.value.denominator ?? 0)
        }
        keySignatures = ordered(summary.keySignatures).map { KeySignatureInfo(tick: $0.tick, key: Self.keyName($0.value)) }
        duration = map.seconds(atTick: StandardMIDIFile.lastTick(format: header.format, trackEndTicks: summary.endTicks))
        eventCount = tracks.reduce(0) { $0 + $1.events }
        noteCount = tracks.reduce(0) { $0 + $1.notes }
        // Gaps are judged on the whole score: a track that rests while others play has no gap.
        // Every silence of the score ends at an event that some track reached by a delta at
        // least as long, so the long deltas are the only candidates; a second pass over the
        // bytes (only for files that have one) finds the last event before each.
        let lastMusic = zip(starts, summary.lastMusicTicks).compactMap { start, last in last.map { start &+ $0 } }.max()
        let candidates = summary.longDeltas.filter { d in
            let end = starts[d.track] &+ d.tick
            guard !d.endOfTrack, let lastMusic, end <= lastMusic else { return false }
            return map.seconds(atTick: end) - map.seconds(atTick: end - d.ticks) > Self.longGapSeconds
        }
        var gaps: [GapInfo] = []
        if !candidates.isEmpty {
            var probe = LastEventProbe(ends: candidates.map { starts[$0.track] &+ $0.tick }, trackStarts: starts)
            _ = try StandardMIDIFile.visit(bytes: bytes, &probe)
            let before = probe.lastEvents()
            for d in candidates {
                let end = starts[d.track] &+ d.tick
                guard !gaps.contains(where: { $0.tick == end }) else { continue }
                let seconds = map.seconds(atTick: end) - map.seconds(atTick: before[end] ?? 0)
                if seconds > Self.longGapSeconds { gaps.append(GapInfo(track: d.track, byte: d.offset, tick: end, seconds: seconds)) }
            }
        }
        longGaps = gaps
        // The ending, from the last music to the end of the file, is reported in its own words:
        // it is not a rest inside music, yet a file that goes on minutes after its last note
        // holds minutes of silence (render leaves them out as dead air unless
        // --keep-end-of-track). Its place: the latest long delta past the music, if any.
        // (A file without a channel message is all ending: its trailingSilence is its duration,
        // and nothing in it is a sign of a corrupt delta.)
        trailingSilence = duration - map.seconds(atTick: lastMusic ?? 0)
        var trailingWarning: [String] = []
        if trailingSilence > Self.longGapSeconds, lastMusic != nil {
            let jump = summary.longDeltas.filter { starts[$0.track] &+ $0.tick > (lastMusic ?? 0) }
                .max { starts[$0.track] &+ $0.tick < starts[$1.track] &+ $1.tick }
            let message = "the file ends \(span(trailingSilence)) after its last channel message"
            trailingWarning = [jump.map { SMFWarning(offset: $0.offset, track: $0.track, message: message + ", by this event's delta time (a corrupt delta time?)").description }
                               ?? message]
        }
        warnings = header.warnings.map(\.description) + longGaps.map {
            SMFWarning(offset: $0.byte, track: $0.track,
                       message: "\(span($0.seconds)) without an event on any track before this one (a corrupt delta time?)").description
        } + trailingWarning
    }

    /// The second pass for gaps: for each tick in `ends`, the last event (not an end of
    /// track) before it, on the file's tick axis. Keeps one tick per end, not the events.
    struct LastEventProbe: SMFVisitor {
        /// The ends, sorted and unique; `latest[k]`: the last event in `ends[k-1] ..< ends[k]`.
        let ends: [UInt64]
        let trackStarts: [UInt64]
        var latest: [UInt64?]
        var start: UInt64 = 0

        init(ends: [UInt64], trackStarts: [UInt64]) {
            self.ends = Array(Set(ends)).sorted()
            self.trackStarts = trackStarts
            latest = Array(repeating: nil, count: self.ends.count)
        }

        mutating func beginTrack(_ index: Int, byteCount: Int) { start = index < trackStarts.count ? trackStarts[index] : 0 }
        mutating func endTrack(_ index: Int) {}

        mutating func visit(tick: UInt64, _ event: FileEvent) {
            if case .meta(.endOfTrack) = event { return }
            let t = start &+ tick
            // The first end after t (binary search).
            var lo = 0, hi = ends.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if ends[mid] <= t { lo = mid + 1 } else { hi = mid }
            }
            guard lo < ends.count else { return }
            if latest[lo].map({ t > $0 }) ?? true { latest[lo] = t }
        }

        /// The last event before each end (nil where none comes before it).
        func lastEvents() -> [UInt64: UInt64] {
            var result: [UInt64: UInt64] = [:]
            var running: UInt64?
            for (k, end) in ends.enumerated() {
                if let l = latest[k] { running = max(running ?? l, l) }
                result[end] = running
            }
            return result
        }
    }

    /// Counts per track as the reader goes; keeps only what the summary shows.
    struct Summary: SMFVisitor {
        var tracks: [TrackInfo] = []
        var endTicks: [UInt64] = []
        var tempos: [[(tick: UInt64, microsecondsPerQuarterNote: UInt32)]] = []
        var timeSignatures: [(track: Int, tick: UInt64, value: MetaEvent.TimeSignature)] = []
        var keySignatures: [(track: Int, tick: UInt64, value: MetaEvent.KeySignature)] = []
        // The current track.
        var index = 0, events = 0, notes = 0, channelMask: UInt16 = 0, lastTick: UInt64 = 0
        var programs: [Int] = [], name: String?, trackTempos: [(tick: UInt64, microsecondsPerQuarterNote: UInt32)] = []
        /// Per track, the tick of its last channel message or SysEx (nil: none).
        var lastMusicTicks: [UInt64?] = []
        var lastMusicTick: UInt64?
        /// Deltas that may last over `longGapSeconds` (decided once the tempo map is known),
        /// and whether the event after them is an end of track.
        var longDeltas: [(track: Int, ticks: UInt64, tick: UInt64, offset: Int, endOfTrack: Bool)] = []
        /// A long delta whose event has not come yet.
        var pendingDelta: (ticks: UInt64, tick: UInt64, offset: Int)?

        /// The fewest ticks that can last `longGapSeconds`: a quarter note lasts at
        /// most 0xFFFFFF µs (16.8 s), so a shorter delta never does.
        func longDeltaTicks(for division: StandardMIDIFile.Division) -> UInt64 {
            switch division {
            case .ticksPerQuarterNote(let q):
                return UInt64(InspectReport.longGapSeconds / (Double(0xFF_FFFF) / 1e6)) * UInt64(q)
            case .smpte(let fps, let tpf):
                return UInt64(InspectReport.longGapSeconds * (fps == 29 ? 29.97 : Double(fps)) * Double(tpf))
            }
        }

        mutating func longDelta(_ ticks: UInt64, toTick tick: UInt64, eventOffset offset: Int) {
            pendingDelta = (ticks, tick, offset)
        }

        mutating func beginTrack(_ index: Int, byteCount: Int) {
            self.index = index
            events = 0; notes = 0; channelMask = 0; lastTick = 0; lastMusicTick = nil; pendingDelta = nil
            programs = []; name = nil; trackTempos = []
        }

        @inline(__always)
        mutating func visit(tick: UInt64, _ event: FileEvent) {
            events += 1
            lastTick = tick
            let endOfTrack = if case .meta(.endOfTrack) = event { true } else { false }
            if let d = pendingDelta {
                longDeltas.append((index, d.ticks, d.tick, d.offset, endOfTrack))
                pendingDelta = nil
            }
            switch event {
            case .midi(let m):
                lastMusicTick = tick
                switch m {
                case .noteOn(let n):
                    channelMask |= 1 << n.channel.value
                    if n.velocity.value > 0 { notes += 1 }
                case .programChange(let p):
                    channelMask |= 1 << p.channel.value
                    if !programs.contains(p.program.intValue) { programs.append(p.program.intValue) }
                default:
                    if let c = m.channel { channelMask |= 1 << c.value }
                }
            case .meta(let meta):
                switch meta {
                case .tempo(let t): trackTempos.append((tick, t))
                case .text(.trackName, let bytes) where name == nil: name = MetaEvent.string(from: bytes)
                case .timeSignature(let t): timeSignatures.append((index, tick, t))
                case .keySignature(let k): keySignatures.append((index, tick, k))
                default: break
                }
            case .sysExStart, .sysExEscape:
                lastMusicTick = tick
            }
        }

        mutating func endTrack(_ index: Int) {
            let channels = (0..<16).filter { channelMask & (1 << $0) != 0 }.map { $0 + 1 }
            tracks.append(TrackInfo(index: index, name: name, channels: channels, programs: programs, events: events, notes: notes))
            endTicks.append(lastTick)
            lastMusicTicks.append(lastMusicTick)
            tempos.append(trackTempos)
            pendingDelta = nil
        }
    }

    static func keyName(_ k: MetaEvent.KeySignature) -> String {
        let majors = ["Cb", "Gb", "Db", "Ab", "Eb", "Bb", "F", "C", "G", "D", "A", "E", "B", "F#", "C#"]
        let minors = ["Ab", "Eb", "Bb", "F", "C", "G", "D", "A", "E", "B", "F#", "C#", "G#", "D#", "A#"]
        let i = Int(k.sharpsOrFlats) + 7
        guard (0..<15).contains(i) else { return "\(k.sharpsOrFlats) sharps/flats \(k.isMinor ? "minor" : "major")" }
        return k.isMinor ? minors[i] + " minor" : majors[i] + " major"
    }

    // MARK: - Output

    /// The summary as a JSON object; not `closed`, it ends after a comma so that `"events"` can follow.
    func json(closed: Bool) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        var text = String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
        if closed { return text + "\n" }
        while let last = text.last, last == "}" || last.isWhitespace { text.removeLast() }
        return text + ",\n"
    }

    func text() -> String {
        var out = ""
        func line(_ s: String) { out += s + "\n" }
        line("File:      \(file)")
        line("Format:    \(format) (\(formatName))")
        line("Division:  \(division)")
        line("Duration:  \(formatted(duration, 3)) s (\(clock(duration, decimals: 3)))")
        line("Events:    \(eventCount), notes: \(noteCount)")
        if ticksPerQuarterNote != nil {
            let list = tempoChanges.prefix(8).map { "\(formatted($0.bpm, 2)) BPM at \(clock($0.seconds, decimals: 3))" }.joined(separator: ", ")
            line("Tempo:     \(list)\(tempoChanges.count > 8 ? ", … (\(tempoChanges.count) changes)" : "")")
        }
        if let first = timeSignatures.first {
            line("Time sig.: \(first.numerator)/\(first.denominator)\(timeSignatures.count > 1 ? " (\(timeSignatures.count) changes)" : "")")
        }
        if let first = keySignatures.first {
            line("Key:       \(first.key)\(keySignatures.count > 1 ? " (\(keySignatures.count) changes)" : "")")
        }
        for gap in longGaps {
            line("Gap:       \(span(gap.seconds)) without an event on any track, before track \(gap.track)'s event at byte \(gap.byte)")
        }
        if trailingSilence > Self.longGapSeconds {
            line("End:       \(span(trailingSilence)) after the last channel message")
        }
        if !warnings.isEmpty { line("Warnings:  \(warnings.count) (see stderr)") }
        line("")
        line("Track  Events  Notes  Channels     Programs     Name")
        for t in tracks {
            let channels = t.channels.map(String.init).joined(separator: ",")
            let programs = t.programs.map(String.init).joined(separator: ",")
            line(Self.pad(String(t.index), 5, right: true) + "  " + Self.pad(String(t.events), 6, right: true) + "  "
                 + Self.pad(String(t.notes), 5, right: true) + "  " + Self.pad(channels.isEmpty ? "-" : channels, 11) + "  "
                 + Self.pad(programs.isEmpty ? "-" : programs, 11) + "  " + (t.name.map { "\"\(Self.escaped($0))\"" } ?? "-"))
        }
        return out
    }

    /// Text as one table cell: control characters (newline, tab, C0 and C1
    /// controls, DEL) written as escapes (\n, \t, \r, \u{1B}), and `\` and `"`
    /// escaped so the quoted text reads back unambiguously.
    static func escaped(_ s: String) -> String {
        var needs = false
        for u in s.unicodeScalars where u.value < 0x20 || (0x7F...0x9F).contains(u.value) || u == "\\" || u == "\"" {
            needs = true
            break
        }
        guard needs else { return s }
        var out = ""
        for u in s.unicodeScalars {
            switch u {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case _ where u.value < 0x20 || (0x7F...0x9F).contains(u.value):
                out += "\\u{" + String(u.value, radix: 16, uppercase: true) + "}"
            default: out.unicodeScalars.append(u)
            }
        }
        return out
    }

    static func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - s.count))
        return right ? fill + s : s + fill
    }
}

/// One event's fields as `inspect --events` shows them, made as the event is
/// written and then dropped.
struct EventFields {
    var track: Int
    var tick: UInt64
    var seconds: Double
    var kind = ""
    var channel: Int?, note: Int?, velocity: Int?, controller: Int?, value: Int?
    var program: Int?, pressure: Int?, bend: Int?
    var tempo: UInt32?
    var text: String?
    var data: [UInt8]?

    init(_ e: TimedEvent) {
        track = e.track; tick = e.tick; seconds = e.seconds
        switch e.event {
        case .midi(let m):
            channel = m.channel.map { $0.intValue + 1 }
            switch m {
            case .noteOn(let n): kind = "note-on"; note = n.note.intValue; velocity = n.velocity.intValue
            case .noteOff(let n): kind = "note-off"; note = n.note.intValue; velocity = n.velocity.intValue
            case .polyPressure(let n): kind = "poly-pressure"; note = n.note.intValue; pressure = n.pressure.intValue
            case .controlChange(let c): kind = "control-change"; controller = c.controller.intValue; value = c.value.intValue
            case .programChange(let p): kind = "program-change"; program = p.program.intValue
            case .channelPressure(let p): kind = "channel-pressure"; pressure = p.pressure.intValue
            case .pitchBend(let p): kind = "pitch-bend"; bend = p.signedValue
            case .sysEx(let s): kind = "sysex"; data = s.data
            default: kind = "system"; data = m.bytes
            }
        case .sysExStart(let d): kind = "sysex-start"; data = d
        case .sysExEscape(let d): kind = "sysex-escape"; data = d
        case .meta(let meta):
            switch meta {
            case .text(let textKind, let bytes):
                kind = switch textKind {
                case .text: "text"
                case .copyright: "copyright"
                case .trackName: "track-name"
                case .instrumentName: "instrument-name"
                case .lyric: "lyric"
                case .marker: "marker"
                case .cuePoint: "cue-point"
                case .programName: "program-name"
                case .deviceName: "device-name"
                }
                text = MetaEvent.string(from: bytes)
            case .sequenceNumber(let n): kind = "sequence-number"; value = Int(n)
            case .channelPrefix(let c): kind = "channel-prefix"; channel = Int(c) + 1
            case .port(let p): kind = "port"; value = Int(p)
            case .endOfTrack: kind = "end-of-track"
            case .tempo(let t): kind = "tempo"; tempo = t
            case .smpteOffset: kind = "smpte-offset"; data = meta.data
            case .timeSignature(let t): kind = "time-signature"; text = "\(t.numerator)/\(t.denominator ?? 0)"; data = meta.data
            case .keySignature(let k): kind = "key-signature"; text = InspectReport.keyName(k)
            case .sequencerSpecific(let d): kind = "sequencer-specific"; data = d
            case .unknown(let type, let d): kind = "meta-0x" + String(type, radix: 16); data = d
            }
        }
    }

    /// `Track Tick Seconds Event` line of the text listing.
    func appendText(to out: inout OutputBuffer) {
        out.append(track, width: 5); out.append("  ")
        out.append(tick, width: 8); out.append("  ")
        out.appendSeconds(seconds, width: 10); out.append("  ")
        out.append(kind)
        if let v = channel { out.append(" ch="); out.append(v) }
        if let v = note { out.append(" note="); out.append(v) }
        if let v = velocity { out.append(" vel="); out.append(v) }
        if let v = controller { out.append(" cc="); out.append(v) }
        if let v = value { out.append(" value="); out.append(v) }
        if let v = program { out.append(" program="); out.append(v) }
        if let v = pressure { out.append(" pressure="); out.append(v) }
        if let v = bend { out.append(" bend="); out.append(v) }
        if let v = tempo {
            out.append(" tempo="); out.append(Int(v)); out.append("us (")
            out.append(formatted(60_000_000 / Double(max(1, v)), 2)); out.append(" BPM)")
        }
        if let v = text { out.append(" \""); out.append(InspectReport.escaped(v)); out.append("\"") }
        if let v = data { out.append(" ["); out.appendHex(v, separator: " "); out.append("]") }
        out.append("\n")
    }

    /// One JSON object on one line, keys sorted, absent fields left out.
    func appendJSON(to out: inout OutputBuffer) {
        out.append("{")
        var first = true
        func key(_ k: StaticString) {
            out.append(first ? "\"" : ", \""); first = false
            out.append(k); out.append("\" : ")
        }
        if let v = bend { key("bend"); out.append(v) }
        if let v = channel { key("channel"); out.append(v) }
        if let v = controller { key("controller"); out.append(v) }
        if let v = data {
            key("data"); out.append("[")
            for (n, b) in v.enumerated() { if n > 0 { out.append(", ") }; out.append(Int(b)) }
            out.append("]")
        }
        key("kind"); out.appendJSONString(kind)
        if let v = note { key("note"); out.append(v) }
        if let v = pressure { key("pressure"); out.append(v) }
        if let v = program { key("program"); out.append(v) }
        key("seconds"); out.append(String(seconds))
        if let v = tempo { key("tempo"); out.append(Int(v)) }
        if let v = text { key("text"); out.appendJSONString(v) }
        key("tick"); out.append(tick, width: 0)
        key("track"); out.append(track)
        if let v = value { key("value"); out.append(v) }
        if let v = velocity { key("velocity"); out.append(v) }
        out.append("}")
    }
}

/// Bytes for stdout, written in large blocks: a listing of millions of
/// events is never held whole.
struct OutputBuffer {
    private var bytes: [UInt8] = []
    private static let blockSize = 1 << 16

    init() { bytes.reserveCapacity(Self.blockSize + 1024) }

    mutating func append(_ s: String) {
        bytes.append(contentsOf: s.utf8)
        if bytes.count >= Self.blockSize { flush() }
    }
    mutating func append(_ s: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
        if bytes.count >= Self.blockSize { flush() }
    }
    mutating func append(_ v: Int) { append(Int64(v), width: 0) }
    mutating func append(_ v: UInt64, width: Int) { append(Int64(clamping: v), width: width) }
    mutating func append(_ v: Int, width: Int) { append(Int64(v), width: width) }

    /// A decimal number, right-aligned in `width` columns.
    mutating func append(_ v: Int64, width: Int) {
        // Digits backwards into a fixed 24-byte scratch, no allocation.
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &scratch) { tmp in
            var m = v.magnitude, n = 0
            repeat { tmp[23 - n] = UInt8(48 + m % 10); m /= 10; n += 1 } while m > 0
            if v < 0 { tmp[23 - n] = UInt8(ascii: "-"); n += 1 }
            if n < width { bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: width - n)) }
            bytes.append(contentsOf: tmp[(24 - n)...])
        }
    }

    /// Seconds with three decimals (as `%.3f`), right-aligned.
    mutating func appendSeconds(_ s: Double, width: Int) {
        let ms = Int64((s * 1000).rounded())
        let whole = ms / 1000, frac = ms % 1000
        var text = String(whole) + "."
        if frac < 100 { text += frac < 10 ? "00" : "0" }
        text += String(frac)
        if text.utf8.count < width { bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: width - text.utf8.count)) }
        bytes.append(contentsOf: text.utf8)
    }

    mutating func appendHex(_ data: [UInt8], separator: StaticString) {
        let digits: [UInt8] = Array("0123456789ABCDEF".utf8)
        for (n, b) in data.enumerated() {
            if n > 0 { append(separator) }
            bytes.append(digits[Int(b >> 4)]); bytes.append(digits[Int(b & 0xF)])
        }
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped.
    mutating func appendJSONString(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        for u in s.unicodeScalars {
            switch u {
            case "\"": append("\\\"" as StaticString)
            case "\\": append("\\\\" as StaticString)
            case "\n": append("\\n" as StaticString)
            case "\t": append("\\t" as StaticString)
            case "\r": append("\\r" as StaticString)
            case _ where u.value < 0x20:
                append("\\u00" as StaticString)
                appendHex([UInt8(u.value)], separator: "")
            default: bytes.append(contentsOf: String(u).utf8)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func flush() {
        guard !bytes.isEmpty else { return }
        FileHandle.standardOutput.write(Data(bytes))
        bytes.removeAll(keepingCapacity: true)
    }
}
