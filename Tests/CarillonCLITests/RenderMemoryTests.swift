import Testing
import Foundation

/// `carillon render` keeps in memory only the samples a piece's notes sound
/// (samples selected by note): its peak resident memory, measured by
/// `/usr/bin/time`, grows by far less than the sample data of the presets the piece selects.
@Suite(.serialized) struct RenderMemoryTests {
    static let fluidR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"

    /// Peak resident set of `carillon render input` (one synth, the first second), in KiB.
    static func peakKiB(_ input: String, font: String = fluidR3) throws -> Int {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        return try peakKiB(["render", input, "-o", "\(dir)/out.wav", "--soundfont", font, "-q", "--threads", "1", "--max-duration", "1"])
    }

    /// linns_basket selects 8 presets of FluidR3 with 33 MiB of sample data
    /// (7.4 MiB of it the default piano it never plays); its notes sound
    /// 12.3 MiB of it. Everything is pinned before the first block, so the
    /// first second shows the peak. Against a piece with no notes on the
    /// project's 94 KB font (the process, the synth, no samples): about 14 MiB
    /// more by note (the samples and FluidSynth's tables of the view); by
    /// preset it is about 43 MiB more.
    @Test func linnsBasket_peakMemory_growsByItsNotesSamplesOnly() throws {
        let empty = RenderCommandTests.scratch() + "-empty.mid"
        // One track, end of track only.
        let bytes: [UInt8] = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 1, 0xE0] + Array("MTrk".utf8) + [0, 0, 0, 4, 0, 0xFF, 0x2F, 0]
        FileManager.default.createFile(atPath: empty, contents: Data(bytes))
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let base = try Self.peakKiB(empty, font: Self.projectFont)
        let piece = try Self.peakKiB("\(RenderCommandTests.openmsx)/linns_basket.mid")
        let growth = Double(piece - base) / 1024
        print("peak RSS, 1 synth: no notes on the project font \(base) KiB, linns_basket on FluidR3 \(piece) KiB (+\(growth) MiB)")
        #expect(base > 0)
        #expect(growth > 8, "the piece's samples are not in memory?")
        #expect(growth < 25, "more than the notes' samples in memory: +\(growth) MiB")
    }

    /// Peak resident set of `carillon ARGUMENTS`, in KiB.
    static func peakKiB(_ arguments: [String]) throws -> Int {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        process.arguments = ["-f", "%M", "-o", "\(dir)/rss", RenderCommandTests.carillon] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let text = try String(contentsOfFile: "\(dir)/rss", encoding: .utf8)
        return Int(text.split(separator: "\n").last.map(String.init) ?? "") ?? 0
    }

    /// Two fonts, four files, two workers, every file with both fonts
    /// (`--soundfont-pick all`): each font is read once for the process and no
    /// worker loads a font whole, so the peak is about FluidR3's alone for the
    /// same files (TimGM6mb's renderings add their notes' samples) and stays
    /// below FluidR3's 141 MiB of sample data, which a whole load would hold.
    @Test func twoFontsTwoWorkers_peakMemory_isAboutTheLargerFontAlone() throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["linns_basket", "keep_on_rolling", "relax_song", "tttheme2"] {
            try FileManager.default.copyItem(atPath: "\(RenderCommandTests.openmsx)/\(name).mid", toPath: "\(dir)/\(name).mid")
        }
        let common = ["render", dir, "--jobs", "2", "--max-duration", "5", "-q", "-r", "22050"]
        let one = try Self.peakKiB(common + ["--output-dir", "\(dir)/one", "--soundfont", Self.fluidR3])
        let both = try Self.peakKiB(common + ["--output-dir", "\(dir)/both", "--soundfont", Self.fluidR3,
                                              "--soundfont", RenderCommandTests.timGM, "--soundfont-pick", "all"])
        print("peak RSS, 4 files, --jobs 2: FluidR3 alone \(one) KiB, FluidR3 and TimGM6mb (all) \(both) KiB")
        #expect(one > 0 && both > 0)
        #expect(both - one < 16 * 1024, "a second font costs \((both - one) / 1024) MiB")
        #expect(both < 141 * 1024, "\(both / 1024) MiB: a font loaded whole?")
    }

    static let projectFont = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("soundfonts/carillon-test.sf2").path
}
