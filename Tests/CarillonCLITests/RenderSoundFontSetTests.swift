import Foundation
import SoundFile
import Testing

/// `carillon render` with several `--soundfont`s: `--soundfont-pick hash`
/// (a font per input, by its key) and `all` (every input with every font),
/// their names, manifests, labels and stems; the fonts checked before anything
/// is written; `live` and `play` refusing several.
@Suite(.serialized) struct RenderSoundFontSetTests {
    typealias CLI = RenderCommandTests
    typealias Batch = RenderBatchTests
    static let timGM = RenderCommandTests.timGM
    static let fluidR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"
    static let openmsx = RenderCommandTests.openmsx
    static let two = ["--soundfont", fluidR3, "--soundfont", timGM]

    static func bytes(_ path: String) -> Data { FileManager.default.contents(atPath: path) ?? Data() }

    /// The two files hold the same bytes (a Bool: Swift Testing would diff two
    /// megabytes of `Data` for the failure message, for minutes).
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        let x = bytes(a)
        return x.count > 1000 && x == bytes(b)
    }

    /// Output (below `root`) → the font's path, from a manifest.
    static func fonts(_ manifest: String, below root: String) throws -> [String: String] {
        Dictionary(uniqueKeysWithValues: try Batch.manifest(manifest).map {
            (($0["output"] as! String).replacingOccurrences(of: root + "/", with: ""), $0["soundfont"] as! String)
        })
    }

    static func samples(_ path: String) throws -> [Float] { try AudioFileReader(path: path).samples }

    /// Hash: one font per file, the same whatever the list's order, --jobs and
    /// --shard; the shards together render every file once, each with the font
    /// the unsharded batch gave it, under its usual name; both fonts are used.
    @Test func hashPick_isStable_underReorderedListsJobsAndShards() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var paths: [String] = []
        for i in 0..<12 {
            let p = "\(dir)/in/\(i % 3 == 0 ? "sub/" : "")n\(i).mid"
            Batch.write(Batch.smf(gap: 0.05, key: UInt8(40 + i)), p)
            paths.append(p)
        }
        let common = ["--input-root", "\(dir)/in", "--tail", "0.2", "-q", "-r", "8000"] + Self.two
        func run(_ inputs: [String], _ tag: String, _ extra: [String] = []) throws -> [String: String] {
            try inputs.joined(separator: "\n").write(toFile: "\(dir)/list-\(tag)", atomically: true, encoding: .utf8)
            let r = try CLI.carillon(["render", "--from-list", "\(dir)/list-\(tag)", "--output-dir", "\(dir)/out-\(tag)",
                                      "--manifest", "\(dir)/m-\(tag).jsonl"] + common + extra)
            #expect(r.status == 0, "\(r.stderr)")
            return try Self.fonts("\(dir)/m-\(tag).jsonl", below: "\(dir)/out-\(tag)")
        }
        let whole = try run(paths, "whole", ["--jobs", "2"])
        #expect(whole.keys.sorted() == paths.map { $0.replacingOccurrences(of: "\(dir)/in/", with: "").replacingOccurrences(of: ".mid", with: ".wav") }.sorted())
        #expect(Set(whole.values) == [Self.fluidR3, Self.timGM], "one font for all 12 files: \(whole)")
        #expect(try run(paths.reversed(), "reversed", ["--jobs", "1"]) == whole)
        var union: [String: String] = [:]
        for k in 0..<2 {
            let shard = try run(paths.shuffled(), "shard\(k)", ["--shard", "\(k)/2"])
            #expect(!shard.isEmpty)
            union.merge(shard) { a, _ in Issue.record("\(a) rendered by two shards"); return a }
        }
        #expect(union == whole)
        // The audio is each file's with its font alone.
        let one = try #require(whole.first { $0.value == Self.timGM }?.key)
        let alone = try CLI.carillon(["render", "\(dir)/in/" + one.replacingOccurrences(of: ".wav", with: ".mid"),
                                      "-o", "\(dir)/alone.wav", "--soundfont", Self.timGM, "-q", "-r", "8000", "--tail", "0.2",
                                      "--threads", "1"])
        #expect(alone.status == 0, "\(alone.stderr)")
        #expect(Self.sameBytes("\(dir)/alone.wav", "\(dir)/out-whole/\(one)"))
    }

    /// A real file: the hash's rendering is the chosen font's alone, byte for
    /// byte; `all` renders it with both fonts, and they sound different.
    @Test func aRealFile_hashIsItsFontAlone_andAllRendersEachFontDifferently() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let song = "\(Self.openmsx)/train_filled_with_cash.mid"
        let common = ["--max-duration", "8", "--bits", "32", "--threads", "1", "-q"]
        let hash = try CLI.carillon(["render", song, "-o", "\(dir)/hash.wav", "--manifest", "\(dir)/m.jsonl"] + Self.two + common)
        #expect(hash.status == 0, "\(hash.stderr)")
        let chosen = try #require(try Batch.manifest("\(dir)/m.jsonl").first?["soundfont"] as? String)
        let all = try CLI.carillon(["render", song, "-o", "\(dir)/all.wav", "--soundfont-pick", "all"] + Self.two + common)
        #expect(all.status == 0, "\(all.stderr)")
        #expect(CLI.contents(dir) == ["all.FluidR3_GM.wav", "all.TimGM6mb.wav", "hash.manifest.json", "hash.wav", "m.jsonl"])
        for font in [Self.fluidR3, Self.timGM] {
            let name = (font as NSString).lastPathComponent.replacingOccurrences(of: ".sf2", with: "")
            let alone = try CLI.carillon(["render", song, "-o", "\(dir)/\(name).wav", "--soundfont", font] + common)
            #expect(alone.status == 0, "\(alone.stderr)")
            #expect(Self.sameBytes("\(dir)/all.\(name).wav", "\(dir)/\(name).wav"), "all's \(name) rendering")
            if font == chosen { #expect(Self.sameBytes("\(dir)/hash.wav", "\(dir)/\(name).wav"), "hash's rendering with \(name)") }
        }
        // Different samples: the difference is about as loud as the renders themselves.
        let a = try Self.samples("\(dir)/all.FluidR3_GM.wav"), b = try Self.samples("\(dir)/all.TimGM6mb.wav")
        let n = min(a.count, b.count)
        #expect(n > 8 * 44_100)
        func rms(_ f: (Int) -> Float) -> Double { (Double((0..<n).reduce(Float(0)) { $0 + f($1) * f($1) }) / Double(n)).squareRoot() }
        let difference = rms { a[$0] - b[$0] }, level = min(rms { a[$0] }, rms { b[$0] })
        #expect(level > 0.01 && difference > 0.5 * level, "difference \(difference), level \(level)")
    }

    /// All: every font's output, stems and labels under names of their own, a
    /// manifest line per rendering naming its font; a rerun with
    /// --skip-existing renders only the missing rendering and keeps a line per rendering.
    @Test func allPick_writesEveryFontsOutputStemsAndLabels_andResumes() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Batch.write(Batch.smf(gap: 0.3), "\(dir)/in/a.mid")
        Batch.write(Batch.smf(gap: 0.3, key: 70), "\(dir)/in/sub/b.mid")
        let args = ["render", "\(dir)/in", "--output-dir", "\(dir)/out", "--soundfont-pick", "all", "--labels",
                    "--stems", "\(dir)/stems", "--manifest", "\(dir)/m.jsonl", "--tail", "0.5", "-q", "-r", "8000", "--jobs", "2"]
            + Self.two
        let r = try CLI.carillon(args)
        #expect(r.status == 0, "\(r.stderr)")
        var expected: [String] = []
        for name in ["a", "sub/b"] {
            for font in ["FluidR3_GM", "TimGM6mb"] {
                expected += ["beats.csv", "manifest.json", "notes.csv", "tempo.csv", "wav"].map { "\(name).\(font).\($0)" }
            }
        }
        #expect(Batch.tree("\(dir)/out") == expected.sorted())
        #expect(Batch.tree("\(dir)/stems") == ["a.FluidR3_GM/ch01.wav", "a.TimGM6mb/ch01.wav",
                                               "sub/b.FluidR3_GM/ch01.wav", "sub/b.TimGM6mb/ch01.wav"])
        #expect(try Self.fonts("\(dir)/m.jsonl", below: "\(dir)/out") == [
            "a.FluidR3_GM.wav": Self.fluidR3, "a.TimGM6mb.wav": Self.timGM,
            "sub/b.FluidR3_GM.wav": Self.fluidR3, "sub/b.TimGM6mb.wav": Self.timGM])
        for line in try Batch.manifest("\(dir)/m.jsonl") {
            #expect(Set(line.keys) == Batch.manifestKeys)
            let size = try FileManager.default.attributesOfItem(atPath: line["soundfont"] as! String)[.size] as? Int
            #expect(line["soundfont_bytes"] as? Int == size)
        }
        for (font, file) in [("FluidR3_GM", "FluidR3_GM.sf2"), ("TimGM6mb", "TimGM6mb.sf2")] {
            let rows = try String(contentsOfFile: "\(dir)/out/sub/b.\(font).notes.csv", encoding: .utf8).split(separator: "\n")
            #expect(rows.first?.hasSuffix(",soundfont") == true && rows.count == 3)
            #expect(rows.dropFirst().allSatisfy { $0.hasSuffix(",\(file)") }, "\(rows)")
        }
        // One rendering gone: a rerun renders it alone, every other line kept, one per rendering.
        try FileManager.default.removeItem(atPath: "\(dir)/out/sub/b.TimGM6mb.wav")
        let kept = try FileManager.default.attributesOfItem(atPath: "\(dir)/out/sub/b.FluidR3_GM.wav")[.modificationDate] as? Date
        usleep(20_000)
        let rerun = try CLI.carillon(args + ["--skip-existing"])
        #expect(rerun.status == 0, "\(rerun.stderr)")
        #expect(Batch.tree("\(dir)/out") == expected.sorted())
        #expect(try FileManager.default.attributesOfItem(atPath: "\(dir)/out/sub/b.FluidR3_GM.wav")[.modificationDate] as? Date == kept)
        let lines = try Batch.manifest("\(dir)/m.jsonl")
        #expect(lines.count == 4)
        #expect(lines.last?["output"] as? String == "\(dir)/out/sub/b.TimGM6mb.wav" && lines.last?["status"] as? String == "ok")
        #expect(Set(lines.map { $0["output"] as! String }).count == 4)
    }

    /// One MIDI file named with --stems and all: its stems in the --stems
    /// folder, a folder per font; -o song.wav gives song.FONTNAME.wav.
    @Test func allPick_oneFile_namesItsOutputsAndStemsByFont() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Batch.write(Batch.smf(gap: 0.3), "\(dir)/song.mid")
        let r = try CLI.carillon(["render", "\(dir)/song.mid", "-o", "\(dir)/song.flac", "--stems", "\(dir)/st",
                                  "--soundfont-pick", "all", "--tail", "0.5", "-q", "-r", "8000"] + Self.two)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(CLI.contents(dir) == ["song.FluidR3_GM.flac", "song.TimGM6mb.flac", "song.mid", "st"])
        #expect(Batch.tree("\(dir)/st") == ["FluidR3_GM/ch01.flac", "TimGM6mb/ch01.flac"])
    }

    /// A font that is missing, or that FluidSynth cannot load: one line naming
    /// it and status 1, before any folder, output or manifest line is written.
    @Test func aBadFont_isOneLine_beforeAnythingIsWritten() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Batch.write(Batch.smf(gap: 0.3), "\(dir)/in/a.mid")
        Batch.write(Data("not a SoundFont".utf8), "\(dir)/bad.sf2")
        let earlier = "{\"input\":\"\(dir)/in/a.mid\",\"output\":\"\(dir)/out/a.wav\",\"status\":\"ok\"}\n"
        try earlier.write(toFile: "\(dir)/m.jsonl", atomically: true, encoding: .utf8)
        for (font, message) in [("\(dir)/missing.sf2", "SoundFont not found: \(dir)/missing.sf2 (from --soundfont)"),
                                ("\(dir)/bad.sf2", "not a SoundFont")] {
            for pick in ["hash", "all"] {
                let r = try CLI.carillon(["render", "\(dir)/in", "--output-dir", "\(dir)/out", "--manifest", "\(dir)/m.jsonl",
                                          "--soundfont", Self.timGM, "--soundfont", font, "--soundfont-pick", pick, "--stems", "\(dir)/st"])
                #expect(r.status == 1)
                #expect(r.stderr.hasPrefix("carillon: error: ") && r.stderr.contains(message) && r.stderr.contains(font)
                        && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
                #expect(!FileManager.default.fileExists(atPath: "\(dir)/out") && !FileManager.default.fileExists(atPath: "\(dir)/st"))
                #expect(try String(contentsOfFile: "\(dir)/m.jsonl", encoding: .utf8) == earlier)
            }
        }
        let same = try CLI.carillon(["render", "\(dir)/in", "--output-dir", "\(dir)/out", "--soundfont", Self.timGM,
                                     "--soundfont", Self.timGM])
        #expect(same.status == 1 && same.stderr == "carillon: error: --soundfont \(Self.timGM) is given twice\n", "\(same.stderr)")
        let stdout = try CLI.carillon(["render", "\(dir)/in/a.mid", "-o", "-", "--soundfont-pick", "all", "--soundfont", Self.timGM])
        #expect(stdout.status == 64 && stdout.stderr.contains("--soundfont-pick all writes a file per font"), "\(stdout.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/out"))
    }

    /// live and play play one font: several are a usage error, said in one line.
    @Test(arguments: ["live", "play"])
    func liveAndPlay_refuseSeveralFonts(command: String) throws {
        let r = try CLI.carillon([command] + (command == "play" ? ["\(Self.openmsx)/coconut_run2.mid"] : []) + Self.two)
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("Error: \(command) plays one SoundFont; --soundfont is given 2 times"), "\(r.stderr)")
    }
}
