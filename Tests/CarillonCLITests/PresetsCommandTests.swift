import Foundation
import Testing

/// `carillon presets FONT`: every bank, program and name equal to what
/// FluidSynth's own shell lists (`inst 1`), for two SF2 and two SF3 fonts;
/// a missing or broken font is one clear line and exit status 1.
@Suite struct PresetsCommandTests {
    typealias R = RenderCommandTests

    static let fonts = [
        "/usr/share/sounds/sf2/FluidR3_GM.sf2",
        "/usr/share/sounds/sf2/TimGM6mb.sf2",
        "/usr/share/sounds/sf3/MuseScore_General_Lite.sf3",   // musescore-general-soundfont-small
        "/usr/share/sounds/sf3/FluidR3Mono_GM.sf3",           // fluidr3mono-gm-soundfont
    ]

    struct Preset: Equatable, CustomStringConvertible {
        var bank: Int, program: Int, name: String
        var description: String { "\(bank)-\(program) \(name)" }
    }

    /// `fluidsynth -n -i` with the font, `inst 1` read from a command file
    /// (with -i there is no interactive shell; -f runs the same shell commands):
    /// its lines are `BBB-PPP name`.
    static func fluidsynthListing(_ font: String) throws -> [Preset] {
        let commands = R.scratch() + "/inst.cmd"
        defer { try? FileManager.default.removeItem(atPath: (commands as NSString).deletingLastPathComponent) }
        try "inst 1\n".write(toFile: commands, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/fluidsynth")
        process.arguments = ["-n", "-i", "-q", "-a", "file", "-o", "audio.file.name=/dev/null",
                             "-o", "synth.dynamic-sample-loading=1", "-f", commands, font]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { line in
            // "000-000 Yamaha Grand Piano": the name is everything after the first space.
            let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            let numbers = parts[0].split(separator: "-")
            guard parts.count == 2, numbers.count == 2, let bank = Int(numbers[0]), let program = Int(numbers[1]) else { return nil }
            return Preset(bank: bank, program: program, name: String(parts[1]))
        }
    }

    static func carillonListing(_ font: String) throws -> [Preset] {
        let r = try R.carillon(["presets", font, "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let items = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]] ?? []
        return items.map { Preset(bank: $0["bank"] as? Int ?? -1, program: $0["program"] as? Int ?? -1, name: $0["name"] as? String ?? "?") }
    }

    @Test(arguments: fonts) func presets_equalFluidSynthsInstListing(font: String) throws {
        let expected = try Self.fluidsynthListing(font)
        let listed = try Self.carillonListing(font)
        #expect(expected.count > 100, "fluidsynth listed \(expected.count) presets of \(font)")
        #expect(listed.count == expected.count, "\(font): \(listed.count) presets, fluidsynth \(expected.count)")
        for (mine, theirs) in zip(listed, expected) where mine != theirs {
            Issue.record("\(font): carillon \(mine), fluidsynth \(theirs)")
            break
        }
        #expect(listed.contains { $0.bank == 128 }, "\(font) has drum kits")
    }

    @Test func text_marksDrumKits_andJSONSaysWhich() throws {
        let r = try R.carillon(["presets", R.timGM])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "bank prog  name")
        #expect(lines.contains("   0    0  Piano 1"), "\(lines.prefix(3))")
        let drums = lines.filter { $0.hasSuffix("(drum kit)") }
        #expect(!drums.isEmpty && drums.allSatisfy { $0.hasPrefix(" 128 ") }, "\(drums)")
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix(" 128 ") == $0.hasSuffix("(drum kit)") })
        let json = try R.carillon(["presets", R.timGM, "--json"])
        let items = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(items.allSatisfy { ($0["drum-kit"] as? Bool) == (($0["bank"] as? Int) == 128) })
        #expect(items.contains { $0["drum-kit"] as? Bool == true })
    }

    @Test func missingOrBrokenFont_isOneClearLine_andExitStatus1() throws {
        let dir = R.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let text = dir + "/notes.sf2", truncated = dir + "/half.sf2"
        try "not a font\n".write(toFile: text, atomically: true, encoding: .utf8)
        // The first megabyte of TimGM6mb: a real header, no preset data.
        let head = try FileHandle(forReadingFrom: URL(fileURLWithPath: R.timGM)).read(upToCount: 1 << 20) ?? Data()
        try head.write(to: URL(fileURLWithPath: truncated))
        let cases = [
            (dir + "/none.sf2", "carillon: error: SoundFont not found: \(dir)/none.sf2"),
            (text, "carillon: error: not a SoundFont (SF2/SF3): \(text)"),
            (truncated, "carillon: error: cannot read SoundFont \(truncated): damaged or truncated"),
            (dir, "carillon: error: cannot read SoundFont \(dir): is a directory"),
        ]
        for (path, message) in cases {
            let r = try R.carillon(["presets", path])
            #expect(r.status == 1, "\(path): \(r.status)")
            #expect(r.stderr.hasPrefix(message) && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
            #expect(r.stdout.isEmpty)
        }
    }
}
