import Testing
import Foundation
import FluidSynth

/// The project's own SoundFont (soundfonts/carillon-test.sf2): the script is
/// its source of truth, FluidSynth and the `fluidsynth` CLI load it cleanly,
/// and its layout follows the SF2 2.01 rules FluidSynth does not check.
@Suite(.serialized) struct GeneratedSoundFontTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    static let font = "\(repository)/soundfonts/carillon-test.sf2"
    static let script = "\(repository)/scripts/make-soundfont"

    static func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Runs a program; returns its exit status and what it wrote on stderr.
    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "carillon-sf2-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func committedFont_isByteIdenticalToTheScriptsOutput() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let result = try Self.run("/usr/bin/env", ["python3", Self.script, "\(dir)/font.sf2"])
        #expect(result.status == 0, "make-soundfont failed: \(result.stderr)")
        let fresh = try Self.bytes("\(dir)/font.sf2"), committed = try Self.bytes(Self.font)
        // Compared as a Bool: a failure names the first differing byte, not 94 KB of arrays.
        let difference = zip(fresh, committed).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(fresh.count, committed.count)
        let identical = fresh == committed
        #expect(identical, "soundfonts/carillon-test.sf2 is stale (first difference at byte \(difference), sizes \(fresh.count) and \(committed.count)): run scripts/make-soundfont and commit it")
        #expect(committed.count < 200_000)
    }

    @Test func load_listsTheFontsPresets() throws {
        let synth = try Synth(settings: Settings.forRendering(sampleRate: 44_100))
        let presets = try synth.loadSoundFont(at: Self.font).presets
        #expect(presets.count == 129)   // bank 0 programs 0-127 and the drum kit
        for program in 0..<128 { #expect(presets.contains { $0.bank == 0 && $0.program == program }) }
        let named = [(0, 0, "Sine Piano"), (0, 1, "Square Lead"), (0, 2, "Saw Lead"), (0, 3, "Sine Organ"),
                     (0, 4, "Saw Pad"), (0, 80, "Synth Lead (square)"), (0, 81, "Synth Lead (saw)"), (128, 0, "Drum Kit")]
        for (bank, program, name) in named {
            #expect(presets.contains { $0.bank == bank && $0.program == program && $0.name == name }, "\(bank):\(program) \(name)")
        }
    }

    /// fluidsynth logs what it finds wrong in a font ("fluidsynth: warning: …")
    /// on stderr; a render of a piece that uses every kind of zone must log nothing.
    @Test func fluidsynthCommandLine_rendersWithoutWarnings() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let midi = "\(dir)/notes.mid"
        try Data(Self.everyZoneFile()).write(to: URL(fileURLWithPath: midi))
        let clean = try Self.run("/usr/bin/fluidsynth", ["-ni", "-q", "-r", "44100", "-F", "\(dir)/out.wav", Self.font, midi])
        #expect(clean.status == 0)
        #expect(clean.stderr.isEmpty, "fluidsynth complained: \(clean.stderr)")

        // The check sees a defect: the first instrument zone with its generators
        // out of the spec's order (keyRange must come first).
        var damaged = try Self.bytes(Self.font)
        let igen = try #require(SF2.chunk("igen", in: damaged))
        damaged.swapAt(igen, igen + 4); damaged.swapAt(igen + 1, igen + 5)
        damaged.swapAt(igen + 2, igen + 6); damaged.swapAt(igen + 3, igen + 7)
        try Data(damaged).write(to: URL(fileURLWithPath: "\(dir)/damaged.sf2"))
        let warned = try Self.run("/usr/bin/fluidsynth", ["-ni", "-q", "-r", "44100", "-F", "\(dir)/out2.wav", "\(dir)/damaged.sf2", midi])
        #expect(warned.stderr.contains("warning"))
    }

    /// Rules of the SF2 2.01 specification that loaders forgive: version,
    /// terminal records, 46 zero points after every sample, loops inside their sample.
    @Test func layout_followsTheSF2Specification() throws {
        let font = try Self.bytes(Self.font)
        #expect(Array(font[0..<4]) == Array("RIFF".utf8) && Array(font[8..<12]) == Array("sfbk".utf8))
        #expect(SF2.u32(font, 4) + 8 == font.count)
        let ifil = try #require(SF2.chunk("ifil", in: font))
        #expect(SF2.u16(font, ifil) == 2 && SF2.u16(font, ifil + 2) == 1)
        for tag in ["isng", "INAM"] { #expect(SF2.chunk(tag, in: font) != nil, "\(tag) missing") }

        let smpl = try #require(SF2.chunk("smpl", in: font))
        let smplPoints = SF2.u32(font, smpl - 4) / 2
        let shdr = try #require(SF2.chunk("shdr", in: font))
        let records = SF2.u32(font, shdr - 4) / 46
        #expect(records >= 2)
        var previousEnd = 0
        for r in 0..<records - 1 {
            let at = shdr + 46 * r
            let name = SF2.name(font, at)
            let start = SF2.u32(font, at + 20), end = SF2.u32(font, at + 24)
            let loopStart = SF2.u32(font, at + 28), loopEnd = SF2.u32(font, at + 32)
            #expect(start >= previousEnd && start < end, "\(name): bounds")
            #expect(end + 46 <= smplPoints, "\(name): no room for 46 zero points")
            let zeros = (end..<min(end + 46, smplPoints)).allSatisfy { SF2.u16(font, smpl + 2 * $0) == 0 }
            #expect(zeros, "\(name): not followed by 46 zero points")
            #expect(loopStart >= start + 8 && loopEnd <= end - 8 && loopEnd - loopStart >= 32, "\(name): loop \(loopStart)-\(loopEnd) in \(start)-\(end)")
            #expect(SF2.u32(font, at + 36) == 44_100 && SF2.u16(font, at + 44) == 1, "\(name): rate or type")
            previousEnd = end + 46
        }
        #expect(SF2.name(font, shdr + 46 * (records - 1)) == "EOS")
        let terminals = [("phdr", 38, "EOP"), ("inst", 22, "EOI")]
        for (tag, size, name) in terminals {
            let at = try #require(SF2.chunk(tag, in: font))
            #expect(SF2.name(font, at + SF2.u32(font, at - 4) - size) == name, "\(tag) terminal")
        }
        for (tag, size) in [("pbag", 4), ("pmod", 10), ("pgen", 4), ("ibag", 4), ("imod", 10), ("igen", 4)] {
            let at = try #require(SF2.chunk(tag, in: font))
            #expect(SF2.u32(font, at - 4) % size == 0, "\(tag) size")
        }
    }

    /// TiMidity++ reads SoundFonts with its own code (not FluidSynth's): mapped
    /// onto every program and drum key of the font, it renders A4 on program 0
    /// at 440 Hz, a kick on channel 10, and every zone without a complaint.
    @Test func timidity_independentReader_rendersTheFont() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Explicit mappings: they override the system's timidity.cfg, which is read too.
        var config = "bank 0\n"
        for program in 0..<128 { config += "\(program) %font \(Self.font) 0 \(program)\n" }
        config += "drumset 0\n"
        for key in 27...87 { config += "\(key) %font \(Self.font) 128 0 \(key)\n" }
        try config.write(toFile: "\(dir)/carillon.cfg", atomically: true, encoding: .utf8)
        func render(_ midi: [UInt8], _ name: String) throws -> (left: [Int16], stderr: String) {
            try Data(midi).write(to: URL(fileURLWithPath: "\(dir)/\(name).mid"))
            let result = try Self.run("/usr/bin/timidity", ["-c", "\(dir)/carillon.cfg", "-Ow1S", "-s", "44100", "--reverb=d", "--chorus=d",
                                                             "-o", "\(dir)/\(name).wav", "\(dir)/\(name).mid"])
            #expect(result.status == 0, "timidity failed on \(name): \(result.stderr)")
            return (try WAV.left16(Self.bytes("\(dir)/\(name).wav")), result.stderr)
        }

        let every = try render(Self.everyZoneFile(), "every")
        #expect(every.stderr.isEmpty, "timidity complained: \(every.stderr)")
        #expect(every.left.contains { $0 != 0 })

        let sine = try render(Self.smf([(0, [0xC0, 0]), (0, [0x90, 69, 100]), (960, [0x80, 69, 0])]), "a4").left
        let segment = sine[4410..<39690]   // 0.1-0.9 s
        var crossings: [Int] = []
        for i in segment.indices.dropFirst() where segment[i - 1] < 0 && segment[i] >= 0 { crossings.append(i) }
        let frequency = Double(crossings.count - 1) / (Double(crossings.last! - crossings.first!) / 44_100)
        print("project font: timidity renders A4 at \(frequency) Hz")
        #expect(abs(frequency - 440) / 440 < 0.01)

        let kick = try render(Self.smf([(0, [0x99, 36, 120]), (60, [0x89, 36, 0]), (900, [0x89, 36, 0])]), "kick").left
        let peak = kick.prefix(4410).map { abs(Int($0)) }.max() ?? 0
        #expect(peak > 1000)
    }

    /// A format 0 file at 480 ticks per quarter note from (delta, bytes) events.
    static func smf(_ events: [(Int, [UInt8])]) -> [UInt8] {
        var track: [UInt8] = []
        for (delta, bytes) in events + [(0, [0xFF, 0x2F, 0])] {
            var v = [UInt8(delta & 0x7F)], rest = delta >> 7
            while rest > 0 { v.insert(UInt8(rest & 0x7F) | 0x80, at: 0); rest >>= 7 }
            track += v + bytes
        }
        let header: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0]
        let length = UInt32(track.count)
        return header + Array("MTrk".utf8) + [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)] + track
    }

    /// One track: a note on every preset of bank 0 and every drum key 27-87.
    static func everyZoneFile() -> [UInt8] {
        var events: [(Int, [UInt8])] = []
        for program in 0..<128 {
            let key = UInt8(36 + program % 60), drum = UInt8(27 + program % 61)
            events += [(0, [0xC0, UInt8(program)]), (0, [0x90, key, 100]), (0, [0x90, 81, 100]), (0, [0x99, drum, 100]),
                       (20, [0x80, key, 0]), (0, [0x80, 81, 0]), (0, [0x89, drum, 0])]
        }
        return smf(events)
    }
}

/// Little-endian reads of RIFF fields, for the layout test.
enum SF2 {
    static func u16(_ b: [UInt8], _ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 }
    static func u32(_ b: [UInt8], _ at: Int) -> Int { u16(b, at) | u16(b, at + 2) << 16 }
    static func name(_ b: [UInt8], _ at: Int) -> String {
        String(decoding: b[at..<at + 20].prefix { $0 != 0 }, as: UTF8.self)
    }
    /// Offset of the data of the first chunk `tag`, walking the RIFF tree (LISTs descended).
    static func chunk(_ tag: String, in b: [UInt8], from: Int = 12, to: Int? = nil) -> Int? {
        var at = from
        let end = to ?? b.count
        while at + 8 <= end {
            let id = String(decoding: b[at..<at + 4], as: UTF8.self), size = u32(b, at + 4)
            if id == tag { return at + 8 }
            if id == "LIST", let found = chunk(tag, in: b, from: at + 12, to: at + 8 + size) { return found }
            at += 8 + size + size % 2
        }
        return nil
    }
}

/// The left channel of a 16-bit stereo WAV file (TiMidity's `-Ow1S` output).
enum WAV {
    static func left16(_ b: [UInt8]) throws -> [Int16] {
        guard let data = SF2.chunk("data", in: b) else { throw Missing.dataChunk }
        let count = min(SF2.u32(b, data - 4), b.count - data) / 4
        return (0..<count).map { Int16(bitPattern: UInt16(SF2.u16(b, data + 4 * $0))) }
    }
    enum Missing: Error { case dataChunk }
}
