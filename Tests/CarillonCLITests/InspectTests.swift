import Foundation
import Testing

/// `carillon inspect`, run as a user runs it: the built binary, its output and exit status.
@Suite struct InspectTests {
    static let realFile = "/usr/share/games/openttd/baseset/openmsx/busy_schedule.mid"

    /// The `carillon` binary next to the test bundle (swift build puts products in one folder).
    static func binary() throws -> URL {
        var candidates: [URL] = []
        if let exe = Bundle.main.executableURL { candidates.append(exe.deletingLastPathComponent()) }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        for folder in candidates {
            var dir = folder
            for _ in 0..<4 {
                let url = dir.appendingPathComponent("carillon")
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
                dir = dir.deletingLastPathComponent()
            }
        }
        throw CLIError(message: "carillon binary not found near \(candidates.map(\.path)); build it with `swift build`")
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
}
