import ArgumentParser
import Foundation
import MIDI

/// `carillon inspect`: what a Standard MIDI File holds.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what a Standard MIDI File holds: format, division, tracks, tempo, duration.",
        discussion: """
            Examples:
              carillon inspect song.mid
              carillon inspect song.mid --events
              carillon inspect song.mid --json | jq .duration

            A damaged file is read as far as it makes sense; each problem is \
            reported on stderr as a warning. A file that cannot be read at all \
            gives one error line and exit status 1.
            """)

    @Argument(help: ArgumentHelp("The MIDI file (.mid, or .rmi).", valueName: "midi-file"))
    var file: String

    @Flag(help: "List every event with its track, tick and time in seconds.")
    var events = false

    @Flag(help: "Print JSON for scripts (with --events, the events too).")
    var json = false

    func run() throws {
        let smf: StandardMIDIFile
        do {
            smf = try Self.load(file)
        } catch {
            Diagnostics.error("\(file): \(error.message)")
            throw ExitCode.failure
        }
        for warning in smf.warnings {
            Diagnostics.warning("\(file): \(warning)")
        }
        let report = InspectReport(smf, path: file, withEvents: events)
        print(json ? report.json() : report.text(), terminator: "")
    }

    struct InspectError: Error { var message: String }

    static func load(_ path: String) throws(InspectError) -> StandardMIDIFile {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "no such file"
            throw InspectError(message: reason)
        }
        do {
            return try StandardMIDIFile(bytes: Array(data))
        } catch {
            throw InspectError(message: error.description)
        }
    }
}

/// The facts `inspect` shows, as text or JSON.
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
    struct EventInfo: Encodable {
        var track: Int
        var tick: UInt64
        var seconds: Double
        var kind: String
        var channel: Int?
        var note: Int?
        var velocity: Int?
        var controller: Int?
        var value: Int?
        var program: Int?
        var pressure: Int?
        var bend: Int?
        var tempo: UInt32?
        var text: String?
        var data: [UInt8]?
    }

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
    var warnings: [String]
    var events: [EventInfo]?

    init(_ smf: StandardMIDIFile, path: String, withEvents: Bool) {
        file = path
        format = Int(smf.format.rawValue)
        formatName = switch smf.format {
        case .singleTrack: "single track"
        case .multiTrack: "multi-track"
        case .sequentialTracks: "sequential tracks"
        }
        switch smf.division {
        case .ticksPerQuarterNote(let q):
            division = "\(q) ticks per quarter note"
            ticksPerQuarterNote = Int(q)
        case .smpte(let fps, let tpf):
            division = "SMPTE \(fps == 29 ? "29.97 (30 drop-frame)" : String(fps)) fps, \(tpf) ticks per frame"
        }
        tracks = smf.tracks.enumerated().map { index, track in
            var channels = Set<Int>(), programs: [Int] = [], notes = 0
            for e in track.events {
                guard case .midi(let m) = e.event else { continue }
                if let c = m.channel { channels.insert(c.intValue + 1) }
                if case .programChange(let p) = m, !programs.contains(p.program.intValue) { programs.append(p.program.intValue) }
                if case .noteOn(let n) = m, n.velocity.value > 0 { notes += 1 }
            }
            return TrackInfo(index: index, name: track.name, channels: channels.sorted(), programs: programs,
                             events: track.events.count, notes: notes)
        }
        let map = smf.tempoMap
        tempoChanges = map.changes.map {
            TempoInfo(tick: $0.tick, seconds: $0.seconds, microsecondsPerQuarterNote: $0.microsecondsPerQuarterNote, bpm: $0.beatsPerMinute)
        }
        let timeline = smf.timeline()
        timeSignatures = []
        keySignatures = []
        for e in timeline {
            if case .meta(.timeSignature(let t)) = e.event {
                timeSignatures.append(TimeSignatureInfo(tick: e.tick, numerator: Int(t.numerator), denominator: t.denominator ?? 0))
            }
            if case .meta(.keySignature(let k)) = e.event {
                keySignatures.append(KeySignatureInfo(tick: e.tick, key: Self.keyName(k)))
            }
        }
        duration = smf.duration
        eventCount = tracks.reduce(0) { $0 + $1.events }
        noteCount = tracks.reduce(0) { $0 + $1.notes }
        warnings = smf.warnings.map(\.description)
        events = withEvents ? timeline.map(Self.info) : nil
    }

    static func keyName(_ k: MetaEvent.KeySignature) -> String {
        let majors = ["Cb", "Gb", "Db", "Ab", "Eb", "Bb", "F", "C", "G", "D", "A", "E", "B", "F#", "C#"]
        let minors = ["Ab", "Eb", "Bb", "F", "C", "G", "D", "A", "E", "B", "F#", "C#", "G#", "D#", "A#"]
        let i = Int(k.sharpsOrFlats) + 7
        guard (0..<15).contains(i) else { return "\(k.sharpsOrFlats) sharps/flats \(k.isMinor ? "minor" : "major")" }
        return k.isMinor ? minors[i] + " minor" : majors[i] + " major"
    }

    static func info(_ e: TimedEvent) -> EventInfo {
        var i = EventInfo(track: e.track, tick: e.tick, seconds: e.seconds, kind: "")
        switch e.event {
        case .midi(let m):
            i.channel = m.channel.map { $0.intValue + 1 }
            switch m {
            case .noteOn(let n): i.kind = "note-on"; i.note = n.note.intValue; i.velocity = n.velocity.intValue
            case .noteOff(let n): i.kind = "note-off"; i.note = n.note.intValue; i.velocity = n.velocity.intValue
            case .polyPressure(let n): i.kind = "poly-pressure"; i.note = n.note.intValue; i.pressure = n.pressure.intValue
            case .controlChange(let c): i.kind = "control-change"; i.controller = c.controller.intValue; i.value = c.value.intValue
            case .programChange(let p): i.kind = "program-change"; i.program = p.program.intValue
            case .channelPressure(let p): i.kind = "channel-pressure"; i.pressure = p.pressure.intValue
            case .pitchBend(let p): i.kind = "pitch-bend"; i.bend = p.signedValue
            case .sysEx(let s): i.kind = "sysex"; i.data = s.data
            default: i.kind = "system"; i.data = m.bytes
            }
        case .sysExStart(let d): i.kind = "sysex-start"; i.data = d
        case .sysExEscape(let d): i.kind = "sysex-escape"; i.data = d
        case .meta(let meta):
            switch meta {
            case .text(let kind, let bytes):
                i.kind = switch kind {
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
                i.text = MetaEvent.string(from: bytes)
            case .sequenceNumber(let n): i.kind = "sequence-number"; i.value = Int(n)
            case .channelPrefix(let c): i.kind = "channel-prefix"; i.channel = Int(c) + 1
            case .port(let p): i.kind = "port"; i.value = Int(p)
            case .endOfTrack: i.kind = "end-of-track"
            case .tempo(let t): i.kind = "tempo"; i.tempo = t
            case .smpteOffset: i.kind = "smpte-offset"; i.data = meta.data
            case .timeSignature(let t): i.kind = "time-signature"; i.text = "\(t.numerator)/\(t.denominator ?? 0)"; i.data = meta.data
            case .keySignature(let k): i.kind = "key-signature"; i.text = keyName(k)
            case .sequencerSpecific(let d): i.kind = "sequencer-specific"; i.data = d
            case .unknown(let type, let d): i.kind = "meta-0x" + String(type, radix: 16); i.data = d
            }
        }
        return i
    }

    // MARK: - Output

    func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(self)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    func text() -> String {
        var out = ""
        func line(_ s: String) { out += s + "\n" }
        line("File:      \(file)")
        line("Format:    \(format) (\(formatName))")
        line("Division:  \(division)")
        line("Duration:  \(Self.seconds(duration)) s (\(Self.clock(duration)))")
        line("Events:    \(eventCount), notes: \(noteCount)")
        if ticksPerQuarterNote != nil {
            let list = tempoChanges.prefix(8).map { "\(Self.bpm($0.bpm)) BPM at \(Self.clock($0.seconds))" }.joined(separator: ", ")
            line("Tempo:     \(list)\(tempoChanges.count > 8 ? ", … (\(tempoChanges.count) changes)" : "")")
        }
        if let first = timeSignatures.first {
            line("Time sig.: \(first.numerator)/\(first.denominator)\(timeSignatures.count > 1 ? " (\(timeSignatures.count) changes)" : "")")
        }
        if let first = keySignatures.first {
            line("Key:       \(first.key)\(keySignatures.count > 1 ? " (\(keySignatures.count) changes)" : "")")
        }
        if !warnings.isEmpty { line("Warnings:  \(warnings.count) (see stderr)") }
        line("")
        line("Track  Events  Notes  Channels     Programs     Name")
        for t in tracks {
            let channels = t.channels.map(String.init).joined(separator: ",")
            let programs = t.programs.map(String.init).joined(separator: ",")
            line(Self.pad(String(t.index), 5, right: true) + "  " + Self.pad(String(t.events), 6, right: true) + "  "
                 + Self.pad(String(t.notes), 5, right: true) + "  " + Self.pad(channels.isEmpty ? "-" : channels, 11) + "  "
                 + Self.pad(programs.isEmpty ? "-" : programs, 11) + "  " + (t.name.map { "\"\($0)\"" } ?? "-"))
        }
        if let events {
            line("")
            line("Track      Tick     Seconds  Event")
            for e in events {
                var fields = [e.kind]
                if let v = e.channel { fields.append("ch=\(v)") }
                if let v = e.note { fields.append("note=\(v)") }
                if let v = e.velocity { fields.append("vel=\(v)") }
                if let v = e.controller { fields.append("cc=\(v)") }
                if let v = e.value { fields.append("value=\(v)") }
                if let v = e.program { fields.append("program=\(v)") }
                if let v = e.pressure { fields.append("pressure=\(v)") }
                if let v = e.bend { fields.append("bend=\(v)") }
                if let v = e.tempo { fields.append("tempo=\(v)us (\(Self.bpm(60_000_000 / Double(max(1, v)))) BPM)") }
                if let v = e.text { fields.append("\"\(v)\"") }
                if let v = e.data { fields.append("[" + v.map { Self.hex($0) }.joined(separator: " ") + "]") }
                line(Self.pad(String(e.track), 5, right: true) + "  " + Self.pad(String(e.tick), 8, right: true) + "  "
                     + Self.pad(Self.seconds(e.seconds), 10, right: true) + "  " + fields.joined(separator: " "))
            }
        }
        return out
    }

    static func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
        let fill = String(repeating: " ", count: max(0, width - s.count))
        return right ? fill + s : s + fill
    }
    static func seconds(_ s: Double) -> String { String(format: "%.3f", s) }
    static func bpm(_ b: Double) -> String { String(format: "%.2f", b) }
    static func hex(_ b: UInt8) -> String { String(format: "%02X", b) }
    static func clock(_ s: Double) -> String {
        let ms = Int((s * 1000).rounded())
        return String(format: "%d:%02d.%03d", ms / 60_000, (ms / 1000) % 60, ms % 1000)
    }
}
