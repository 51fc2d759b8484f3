import Foundation
import Testing
@testable import MIDI

/// Real General MIDI files no one here wrote (Debian `openttd-openmsx`, installed by
/// scripts/setup), checked event by event against `midicsv`, an independent C reader.
@Suite struct RealFilesTests {
    static let folder = "/usr/share/games/openttd/baseset/openmsx"
    static let midicsv = "/usr/bin/midicsv"

    static var files: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".mid") }.sorted().map { folder + "/" + $0 }
    }

    @Test func realFiles_present() {
        #expect(Self.files.count >= 20, "openttd-openmsx MIDI files missing from \(Self.folder): run scripts/setup")
        #expect(FileManager.default.isExecutableFile(atPath: Self.midicsv), "midicsv missing: run scripts/setup")
    }

    @Test func realFiles_everyEventMatchesMidicsv() throws {
        let files = Self.files
        try #require(!files.isEmpty, "no .mid files in \(Self.folder): run scripts/setup")
        var compared = 0
        for path in files {
            let file = try StandardMIDIFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            #expect(file.warnings.isEmpty, "\(path): \(file.warnings)")
            let expected = try Self.runMidicsv(path)
            let ours = Self.csvLines(file)
            #expect(ours.count == expected.count, "\(path): \(ours.count) events, midicsv \(expected.count)")
            for (n, (a, b)) in zip(ours, expected).enumerated() where a != b {
                Issue.record("\(path) line \(n + 1): ours «\(a)» midicsv «\(b)»")
                break
            }
            compared += expected.count
        }
        #expect(compared > 100_000)
    }

    @Test func realFiles_roundTripThroughWriter() throws {
        let files = Self.files
        try #require(!files.isEmpty, "no .mid files in \(Self.folder): run scripts/setup")
        for path in files {
            let file = try StandardMIDIFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            let written = file.serialized()
            let again = try StandardMIDIFile(bytes: written)
            #expect(again.warnings.isEmpty)
            #expect(again.format == file.format && again.division == file.division)
            #expect(again.tracks == file.tracks, "\(path): events changed through write and read")
            #expect(again.serialized() == written)
            #expect(again.timeline() == file.timeline())
        }
    }

    @Test func writer_outputReadByMidicsvAsOriginal() throws {
        let files = Self.files
        try #require(!files.isEmpty, "no .mid files in \(Self.folder): run scripts/setup")
        let temporary = NSTemporaryDirectory() + "carillon-written-\(ProcessInfo.processInfo.processIdentifier).mid"
        defer { try? FileManager.default.removeItem(atPath: temporary) }
        for path in files {
            let file = try StandardMIDIFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            try Data(file.serialized()).write(to: URL(fileURLWithPath: temporary))
            #expect(try Self.runMidicsv(temporary) == Self.runMidicsv(path), "\(path): midicsv reads the written file differently")
        }
    }

    @Test func realFile_insideRIFFReadAsPlain() throws {
        let files = Self.files
        try #require(!files.isEmpty, "no .mid files in \(Self.folder): run scripts/setup")
        let smf = Array(try Data(contentsOf: URL(fileURLWithPath: files[0])))
        let pad: [UInt8] = smf.count % 2 == 1 ? [0] : []
        let riff = Array("RIFF".utf8) + SMFBytes.le32(UInt32(4 + 8 + smf.count + pad.count)) + Array("RMID".utf8)
            + Array("data".utf8) + SMFBytes.le32(UInt32(smf.count)) + smf + pad
        #expect(try StandardMIDIFile(bytes: riff) == StandardMIDIFile(bytes: smf))
    }

    @Test func realFiles_timelineSortedAndComplete() throws {
        let files = Self.files
        try #require(!files.isEmpty, "no .mid files in \(Self.folder): run scripts/setup")
        for path in files {
            let file = try StandardMIDIFile(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            let timeline = file.timeline()
            #expect(timeline.count == file.tracks.reduce(0) { $0 + $1.events.count })
            #expect(zip(timeline, timeline.dropFirst()).allSatisfy { $0.tick <= $1.tick && $0.seconds <= $1.seconds })
            let map = file.tempoMap
            for e in timeline.prefix(2000) {
                #expect(abs(map.tick(atSeconds: e.seconds) - Double(e.tick)) < 1e-6)
            }
            #expect(file.duration > 10 && file.duration < 1200)
        }
    }

    // MARK: - midicsv

    /// midicsv's lines for the file, without Start_track / End_of_file, normalised to our layout.
    static func runMidicsv(_ path: String) throws -> [String] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: midicsv)
        process.arguments = [path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        // Bytes, not a String: midicsv passes Latin-1 text through unchanged.
        return Array(data).split(separator: 0x0A).compactMap { line in
            let fields = splitCSV(Array(line))
            guard fields.count >= 3, fields[2] != "Start_track", fields[2] != "End_of_file" else { return nil }
            return fields.joined(separator: "|")
        }
    }

    /// Splits a midicsv line at commas outside quotes; quoted strings are unescaped
    /// (`""` → `"`, `\\` → `\`, `\ooo` → byte) and shown as hex bytes.
    static func splitCSV(_ bytes: [UInt8]) -> [String] {
        var fields: [String] = []
        var i = 0
        while i <= bytes.count {
            while i < bytes.count && bytes[i] == 0x20 { i += 1 }
            if i < bytes.count && bytes[i] == 0x22 {
                var raw: [UInt8] = []
                i += 1
                while i < bytes.count {
                    let b = bytes[i]
                    if b == 0x22 {
                        if i + 1 < bytes.count && bytes[i + 1] == 0x22 { raw.append(0x22); i += 2; continue }
                        i += 1
                        break
                    }
                    if b == 0x5C, i + 1 < bytes.count {
                        if bytes[i + 1] == 0x5C { raw.append(0x5C); i += 2; continue }
                        if i + 3 < bytes.count, let v = UInt8(String(decoding: bytes[(i + 1)...(i + 3)], as: UTF8.self), radix: 8) {
                            raw.append(v); i += 4; continue
                        }
                    }
                    raw.append(b)
                    i += 1
                }
                fields.append(hexString(raw))
                while i < bytes.count && bytes[i] != 0x2C { i += 1 }
                i += 1
            } else {
                var j = i
                while j < bytes.count && bytes[j] != 0x2C { j += 1 }
                fields.append(String(decoding: bytes[i..<j], as: UTF8.self).trimmingCharacters(in: .whitespaces))
                i = j + 1
            }
        }
        return fields
    }

    static func hexString(_ bytes: [UInt8]) -> String { "\"" + bytes.map { String($0, radix: 16) }.joined(separator: " ") + "\"" }

    /// Our events in midicsv's vocabulary, joined the way `runMidicsv` joins its fields.
    static func csvLines(_ file: StandardMIDIFile) -> [String] {
        var lines: [String] = []
        let division: Int
        switch file.division {
        case .ticksPerQuarterNote(let q): division = Int(q)
        case .smpte(let fps, let tpf): division = Int(UInt16(UInt8(bitPattern: Int8(-fps))) << 8 | UInt16(tpf))
        }
        lines.append(["0", "0", "Header", "\(file.format.rawValue)", "\(file.tracks.count)", "\(division)"].joined(separator: "|"))
        for (k, track) in file.tracks.enumerated() {
            for e in track.events {
                var f = ["\(k + 1)", "\(e.tick)"]
                switch e.event {
                case .midi(let m):
                    switch m {
                    case .noteOn(let n): f += ["Note_on_c", "\(n.channel)", "\(n.note)", "\(n.velocity)"]
                    case .noteOff(let n): f += ["Note_off_c", "\(n.channel)", "\(n.note)", "\(n.velocity)"]
                    case .polyPressure(let n): f += ["Poly_aftertouch_c", "\(n.channel)", "\(n.note)", "\(n.pressure)"]
                    case .controlChange(let c): f += ["Control_c", "\(c.channel)", "\(c.controller)", "\(c.value)"]
                    case .programChange(let p): f += ["Program_c", "\(p.channel)", "\(p.program)"]
                    case .channelPressure(let p): f += ["Channel_aftertouch_c", "\(p.channel)", "\(p.pressure)"]
                    case .pitchBend(let p): f += ["Pitch_bend_c", "\(p.channel)", "\(p.value)"]
                    case .sysEx(let s): f += ["System_exclusive", "\(s.data.count + 1)"] + (s.data + [0xF7]).map { "\($0)" }
                    default: f += ["System_message", "\(m.bytes)"]
                    }
                case .sysExStart(let d): f += ["System_exclusive", "\(d.count)"] + d.map { "\($0)" }
                case .sysExEscape(let d): f += ["System_exclusive_packet", "\(d.count)"] + d.map { "\($0)" }
                case .meta(let meta):
                    switch meta {
                    case .sequenceNumber(let n): f += ["Sequence_number", "\(n)"]
                    case .text(let kind, let bytes):
                        let names: [MetaEvent.TextKind: String] = [
                            .text: "Text_t", .copyright: "Copyright_t", .trackName: "Title_t", .instrumentName: "Instrument_name_t",
                            .lyric: "Lyric_t", .marker: "Marker_t", .cuePoint: "Cue_point_t",
                        ]
                        if let name = names[kind] {
                            f += [name, hexString(bytes)]
                        } else {
                            f += ["Unknown_meta_event", "\(kind.rawValue)", "\(bytes.count)"] + bytes.map { "\($0)" }
                        }
                    case .channelPrefix(let c): f += ["Channel_prefix", "\(c)"]
                    case .port(let p): f += ["MIDI_port", "\(p)"]
                    case .endOfTrack: f += ["End_track"]
                    case .tempo(let t): f += ["Tempo", "\(t)"]
                    case .smpteOffset(let o): f += ["SMPTE_offset"] + [o.hours, o.minutes, o.seconds, o.frames, o.fractionalFrames].map { "\($0)" }
                    case .timeSignature(let t): f += ["Time_signature"] + [t.numerator, t.denominatorPower, t.clocksPerClick, t.thirtySecondsPerQuarter].map { "\($0)" }
                    case .keySignature(let k): f += ["Key_signature", "\(k.sharpsOrFlats)", k.isMinor ? "\"6d 69 6e 6f 72\"" : "\"6d 61 6a 6f 72\""]
                    case .sequencerSpecific(let d): f += ["Sequencer_specific", "\(d.count)"] + d.map { "\($0)" }
                    case .unknown(let type, let d): f += ["Unknown_meta_event", "\(type)", "\(d.count)"] + d.map { "\($0)" }
                    }
                }
                lines.append(f.joined(separator: "|"))
            }
        }
        return lines
    }
}
