import Foundation
import Testing

/// `carillon inspect`, run as a user runs it: the built binary, its output and exit status.
@Suite struct InspectTests {
    static let realFile = "/usr/share/games/openttd/baseset/openmsx/busy_schedule.mid"

    /// The `carillon` the CLI tests run (`RenderCommandTests.carillon`).
    static func binary() throws -> URL {
        let path = RenderCommandTests.carillon
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw CLIError(message: "no carillon at \(path); build it with `swift build`")
        }
        return URL(fileURLWithPath: path)
    }

    struct CLIError: Error, CustomStringConvertible { var message: String; var description: String { message } }

    static func run(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = try binary()
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    static func temporaryFile(_ bytes: [UInt8], name: String) throws -> String {
        let path = NSTemporaryDirectory() + "carillon-inspect-\(ProcessInfo.processInfo.processIdentifier)-\(name)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func inspect_realFileSummary() throws {
        try #require(FileManager.default.fileExists(atPath: Self.realFile), "\(Self.realFile) missing: run scripts/setup")
        let r = try Self.run(["inspect", Self.realFile])
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty)
        #expect(r.stdout.contains("Format:    1 (multi-track)"))
        #expect(r.stdout.contains("Division:  96 ticks per quarter note"))
        #expect(r.stdout.contains("Tempo:     134.00 BPM at 0:00.000"))
        #expect(r.stdout.contains("Events:    6735, notes: 3137"))
        #expect(r.stdout.contains("\"MIDI Drums\""))
        #expect(r.stdout.contains("Duration:  131.646 s"))
    }

    @Test func inspect_eventsListsEveryEvent() throws {
        try #require(FileManager.default.fileExists(atPath: Self.realFile), "\(Self.realFile) missing: run scripts/setup")
        let r = try Self.run(["inspect", Self.realFile, "--events"])
        #expect(r.status == 0)
        let eventLines = r.stdout.split(separator: "\n").drop { !$0.hasPrefix("Track      Tick") }.dropFirst()
        #expect(eventLines.count == 6735)
        #expect(eventLines.first == "    0         0       0.000  tempo tempo=447761us (134.00 BPM)")
    }

    @Test func inspect_jsonForScripts() throws {
        try #require(FileManager.default.fileExists(atPath: Self.realFile), "\(Self.realFile) missing: run scripts/setup")
        let r = try Self.run(["inspect", Self.realFile, "--json", "--events"])
        #expect(r.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(object?["format"] as? Int == 1)
        #expect(object?["ticksPerQuarterNote"] as? Int == 96)
        #expect((object?["tracks"] as? [Any])?.count == 17)
        #expect((object?["events"] as? [Any])?.count == 6735)
        #expect(abs((object?["duration"] as? Double ?? 0) - 131.646398) < 1e-5)
        let tempo = (object?["tempoChanges"] as? [[String: Any]])?.first
        #expect(tempo?["microsecondsPerQuarterNote"] as? Int == 447761)
    }

    @Test func inspect_notMIDIFileOneErrorLine() throws {
        let path = try Self.temporaryFile(Array("hello".utf8), name: "text.mid")
        let r = try Self.run(["inspect", path])
        #expect(r.status == 1)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr == "carillon: error: \(path): not a MIDI file (no MThd or RIFF RMID header) at byte 0\n")
    }

    @Test func inspect_badFormatNamesByte() throws {
        let bytes: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 7, 0, 1, 0, 96]
        let path = try Self.temporaryFile(bytes, name: "format7.mid")
        let r = try Self.run(["inspect", path])
        #expect(r.status == 1)
        #expect(r.stderr == "carillon: error: \(path): unsupported SMF format 7 at byte 8\n")
    }

    @Test func inspect_missingFile() throws {
        let r = try Self.run(["inspect", "/nonexistent/song.mid"])
        #expect(r.status == 1)
        #expect(r.stderr == "carillon: error: /nonexistent/song.mid: no such file\n")
    }

    @Test func inspect_truncatedFileSalvagedWithWarnings() throws {
        try #require(FileManager.default.fileExists(atPath: Self.realFile), "\(Self.realFile) missing: run scripts/setup")
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: Self.realFile)).prefix(3000))
        let path = try Self.temporaryFile(bytes, name: "truncated.mid")
        let r = try Self.run(["inspect", path])
        #expect(r.status == 0)
        #expect(r.stdout.contains("Warnings:  3"))
        #expect(r.stderr.split(separator: "\n").count == 3)
        #expect(r.stderr.contains("carillon: warning: \(path): track 2: track chunk length 4501 runs past the end of the file by 1664 bytes at byte 159"))
    }

    /// A file whose track name and lyric carry a newline, a tab and a control character.
    static func fileWithControlText() -> [UInt8] {
        let name: [UInt8] = Array("Bass\nline".utf8)
        let lyric: [UInt8] = Array("la\tla".utf8) + [0x01, 0x22]
        let body: [UInt8] = [0x00, 0xFF, 0x03, UInt8(name.count)] + name
            + [0x00, 0xFF, 0x05, UInt8(lyric.count)] + lyric + [0x00, 0xFF, 0x2F, 0x00]
        return Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0, 96]
            + Array("MTrk".utf8) + [0, 0, 0, UInt8(body.count)] + body
    }

    @Test func inspect_textWithControlCharactersEscaped() throws {
        let path = try Self.temporaryFile(Self.fileWithControlText(), name: "control-text.mid")
        let r = try Self.run(["inspect", path, "--events"])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        // Every table row stays one line.
        #expect(lines.contains { $0.hasSuffix("  \"Bass\\nline\"") })
        #expect(lines.contains { $0.hasSuffix("track-name \"Bass\\nline\"") })
        #expect(lines.contains { $0.hasSuffix("lyric \"la\\tla\\u{1}\\\"\"") })
        #expect(!lines.contains { $0 == "line\"" || $0.hasPrefix("line") })
    }

    @Test func inspect_jsonKeepsControlTextExact() throws {
        let path = try Self.temporaryFile(Self.fileWithControlText(), name: "control-text-json.mid")
        let r = try Self.run(["inspect", path, "--json", "--events"])
        #expect(r.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let tracks = object?["tracks"] as? [[String: Any]]
        #expect(tracks?.first?["name"] as? String == "Bass\nline")
        let events = object?["events"] as? [[String: Any]]
        #expect(events?.count == 3)
        #expect(events?[1]["text"] as? String == "la\tla\u{1}\"")
        #expect(events?[1]["kind"] as? String == "lyric")
    }

    /// Two tracks at 96 PPQN and 120 BPM: track 1 rests 4 minutes (allowed), track 2 plays
    /// a note, then a delta time corrupted to 8,388,608 ticks (4 bytes 84 80 80 00:
    /// 12 h 8 min 11 s at 0.5 s a beat) and one more note. Returns the file and the
    /// byte offset of the corrupt delta.
    static func fileWithCorruptDelta() -> (bytes: [UInt8], offset: Int) {
        // Track 1: tempo, a note, then 4 minutes (480 beats = 46,080 ticks: 82 E8 00) and another.
        let track1: [UInt8] = [0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20,
                               0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0,
                               0x82, 0xE8, 0x00, 0x90, 62, 100, 0x60, 0x80, 62, 0,
                               0x00, 0xFF, 0x2F, 0x00]
        let beforeGap: [UInt8] = [0x00, 0x91, 64, 90, 0x60, 0x81, 64, 0]
        let corrupt: [UInt8] = [0x84, 0x80, 0x80, 0x00]
        let track2 = beforeGap + corrupt + [0x91, 65, 90, 0x60, 0x81, 65, 0, 0x00, 0xFF, 0x2F, 0x00]
        func chunk(_ body: [UInt8]) -> [UInt8] {
            Array("MTrk".utf8) + [0, 0, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
        }
        let header: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 1, 0, 2, 0, 96]
        let bytes = header + chunk(track1) + chunk(track2)
        let offset = header.count + 8 + track1.count + 8 + beforeGap.count
        return (bytes, offset)
    }

    @Test func inspect_longGapWarnsWithTrackAndByte() throws {
        let (bytes, offset) = Self.fileWithCorruptDelta()
        let path = try Self.temporaryFile(bytes, name: "corrupt-delta.mid")
        let r = try Self.run(["inspect", path])
        #expect(r.status == 0)
        // The score is silent from track 0's last note-off (tick 46,272) to track 1's note
        // after the corrupt delta (tick 8,388,704): 8,342,432 ticks, 12 h 4 min 10 s.
        #expect(r.stdout.contains("Gap:       12 h 4 min 10 s without an event on any track, before track 1's event at byte \(offset)"))
        #expect(r.stdout.contains("Warnings:  1 (see stderr)"))
        // Track 0's rest of four minutes is music, not damage.
        #expect(!r.stdout.contains("track 0"))
        #expect(r.stderr == "carillon: warning: \(path): track 1: 12 h 4 min 10 s without an event on any track before this one "
                + "(a corrupt delta time?) at byte \(offset)\n")

        let j = try Self.run(["inspect", path, "--json"])
        #expect(j.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any]
        let gaps = object?["longGaps"] as? [[String: Any]]
        #expect(gaps?.count == 1)
        #expect(gaps?.first?["track"] as? Int == 1)
        #expect(gaps?.first?["byte"] as? Int == offset)
        #expect(gaps?.first?["tick"] as? Int == 96 + 8_388_608)
        #expect(abs((gaps?.first?["seconds"] as? Double ?? 0) - (8_388_704.0 - 46_272) / 96 * 0.5) < 1e-6)
        #expect((object?["warnings"] as? [String])?.count == 1)
        #expect(object?["trailingSilence"] as? Double == 0)
    }

    // MARK: - Gaps on the whole score

    /// A delta time as a variable-length quantity.
    static func vlq(_ value: Int) -> [UInt8] {
        var bytes = [UInt8(value & 0x7F)]
        var v = value >> 7
        while v > 0 { bytes.insert(UInt8(v & 0x7F) | 0x80, at: 0); v >>= 7 }
        return bytes
    }

    /// A format 1 file at 96 ticks per quarter note and 120 BPM (0.5 s a beat, 192 ticks a second).
    static func smf(_ tracks: [[UInt8]]) -> [UInt8] {
        let tempo: [UInt8] = [0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20]
        func chunk(_ body: [UInt8]) -> [UInt8] {
            Array("MTrk".utf8) + [0, 0, UInt8(body.count >> 8), UInt8(body.count & 0xFF)] + body
        }
        let header: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 1, 0, UInt8(tracks.count), 0, 96]
        return header + tracks.enumerated().flatMap { chunk(($0.offset == 0 ? tempo : []) + $0.element) }
    }

    /// A note every `every` seconds from 0 up to `until` seconds, each a quarter note long.
    static func notes(every: Int, until: Int) -> [UInt8] {
        var body: [UInt8] = []
        for n in stride(from: 0, through: until, by: every) {
            body += (n == 0 ? [0x00] : vlq(every * 192 - 96)) + [0x91, 60, 90, 0x60, 0x81, 60, 0]
        }
        return body
    }

    static let endOfTrack: [UInt8] = [0x00, 0xFF, 0x2F, 0x00]

    @Test func inspect_trackRestsWhileOthersPlay_noGap() throws {
        // Track 0 rests 6 minutes; track 1 plays a note every 30 s through the rest.
        let rest = [0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0] + Self.vlq(360 * 192) + [0x90, 62, 100, 0x60, 0x80, 62, 0] + Self.endOfTrack
        let path = try Self.temporaryFile(Self.smf([rest, Self.notes(every: 30, until: 390) + Self.endOfTrack]), name: "rest.mid")
        let r = try Self.run(["inspect", path, "--json"])
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect((object?["longGaps"] as? [Any])?.count == 0)
    }

    @Test func inspect_conductorEndOfTrackLate_noGap() throws {
        // The 552-file case: a conductor track whose only event after its tempo is its end of
        // track, 10 minutes later, at the end of a piece that plays all along.
        let conductor = Self.vlq(600 * 192) + [0xFF, 0x2F, 0x00]
        let path = try Self.temporaryFile(Self.smf([conductor, Self.notes(every: 10, until: 600) + Self.endOfTrack]), name: "conductor.mid")
        let r = try Self.run(["inspect", path])
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty)
        #expect(!r.stdout.contains("Gap:"))
        #expect(!r.stdout.contains("End:"))
    }

    @Test func inspect_silenceOnEveryTrack_oneGap() throws {
        // Both tracks rest 6 minutes at the same time, after a note-off at 0.5 s.
        let track: [UInt8] = [0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0] + Self.vlq(360 * 192) + [0x90, 62, 100, 0x60, 0x80, 62, 0] + Self.endOfTrack
        let bytes = Self.smf([track, track])
        let path = try Self.temporaryFile(bytes, name: "silence.mid")
        let r = try Self.run(["inspect", path, "--json"])
        #expect(r.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        let gaps = object?["longGaps"] as? [[String: Any]]
        #expect(gaps?.count == 1)
        #expect(gaps?.first?["track"] as? Int == 0)
        #expect(gaps?.first?["byte"] as? Int == 14 + 8 + 7 + 8)
        #expect(gaps?.first?["tick"] as? Int == 96 + 360 * 192)
        #expect(abs((gaps?.first?["seconds"] as? Double ?? 0) - 360) < 1e-9)
        #expect(r.stderr.components(separatedBy: "\n").filter { !$0.isEmpty }
                == ["carillon: warning: \(path): track 0: 6 min 0 s without an event on any track before this one (a corrupt delta time?) at byte 37"])
    }

    @Test func inspect_metaEventsAfterMusic_notAGap() throws {
        // A tempo event 7 minutes after the last note (as in piano-midi.de's KV 311): the
        // file's ending, not a rest inside music. Reported as such, not as a gap.
        let conductor: [UInt8] = Self.vlq(420 * 192) + [0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20] + Self.endOfTrack
        let path = try Self.temporaryFile(Self.smf([conductor, Self.notes(every: 10, until: 60) + Self.endOfTrack]), name: "late-tempo.mid")
        let r = try Self.run(["inspect", path, "--json"])
        #expect(r.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect((object?["longGaps"] as? [Any])?.count == 0)
        #expect(abs((object?["trailingSilence"] as? Double ?? 0) - (420 - 60.5)) < 1e-6)
        #expect(r.stderr == "carillon: warning: \(path): track 0: the file ends 6 min 0 s after its last channel message, "
                + "by this event's delta time (a corrupt delta time?) at byte 29\n")
    }

    @Test func inspect_noChannelMessage_allEndingNoWarning() throws {
        // A tempo track alone, ten minutes long: nothing sounds, nothing to warn of.
        let path = try Self.temporaryFile(Self.smf([Self.vlq(600 * 192) + [0xFF, 0x2F, 0x00]]), name: "tempo-only.mid")
        let r = try Self.run(["inspect", path, "--json"])
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(abs((object?["trailingSilence"] as? Double ?? 0) - 600) < 1e-6)
    }

    @Test func inspect_lateFinalEndOfTrack_reportedAsEnd() throws {
        // Every note is over at 0.5 s; track 1's end of track comes 12 hours later.
        let early: [UInt8] = [0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0] + Self.endOfTrack
        let late: [UInt8] = [0x00, 0x91, 64, 100, 0x60, 0x81, 64, 0] + Self.vlq(12 * 3600 * 192) + [0xFF, 0x2F, 0x00]
        let bytes = Self.smf([early, late])
        let path = try Self.temporaryFile(bytes, name: "late-end.mid")
        let r = try Self.run(["inspect", path])
        #expect(r.status == 0)
        #expect(!r.stdout.contains("Gap:"))
        #expect(r.stdout.contains("End:       12 h 0 min 0 s after the last channel message"))
        let offset = 14 + 8 + 7 + early.count + 8 + 8
        #expect(r.stderr == "carillon: warning: \(path): track 1: the file ends 12 h 0 min 0 s after its last channel message, "
                + "by this event's delta time (a corrupt delta time?) at byte \(offset)\n")
        let j = try Self.run(["inspect", path, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any]
        #expect((object?["longGaps"] as? [Any])?.count == 0)
        #expect(abs((object?["trailingSilence"] as? Double ?? 0) - 12 * 3600) < 1e-6)
    }

    @Test func inspect_realFileHasNoLongGap() throws {
        try #require(FileManager.default.fileExists(atPath: Self.realFile), "\(Self.realFile) missing: run scripts/setup")
        let r = try Self.run(["inspect", Self.realFile, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect((object?["longGaps"] as? [Any])?.count == 0)
    }
}
