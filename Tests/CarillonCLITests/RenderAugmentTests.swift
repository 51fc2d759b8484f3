import Foundation
import Testing

/// `carillon render --transpose/--tempo/--velocity-scale/--program-map/--seed`:
/// the same seed gives the same bytes, another seed other bytes and draws; a
/// file's draw follows its key, not the batch; every mistake is one line and
/// leaves nothing written.
@Suite(.serialized) struct RenderAugmentTests {
    typealias CLI = RenderCommandTests
    static let files = ["ultimate_run.mid", "harp_harmony.mid", "careless_perc_redfarn.mid", "tttheme2.mid"]
    static let ranges = ["--transpose", "-3..3", "--tempo", "0.8..1.25", "--velocity-scale", "0.7..1.3"]

    /// Renders `files` (in this order) into `dir` with its manifest `dir/m.jsonl`; the manifest's
    /// `augment` objects by input file name.
    @discardableResult
    static func render(_ files: [String], into dir: String, _ extra: [String]) throws -> [String: [String: AnyHashable]] {
        let r = try CLI.carillon(["render"] + files.map { "\(CLI.openmsx)/\($0)" }
                                 + ["--output-dir", dir, "--soundfont", CLI.timGM, "--max-duration", "4", "--threads", "1",
                                    "--manifest", "\(dir)/m.jsonl", "-q"] + extra)
        #expect(r.status == 0, "\(r.stderr)")
        return try draws("\(dir)/m.jsonl")
    }

    static func draws(_ manifest: String) throws -> [String: [String: AnyHashable]] {
        var out: [String: [String: AnyHashable]] = [:]
        for line in try RenderBatchTests.manifest(manifest) {
            let input = (line["input"] as! String).split(separator: "/").last.map(String.init)!
            out[input] = try #require(line["augment"] as? [String: AnyHashable], "\(input): no augment object")
        }
        return out
    }

    static func audio(_ dir: String) -> [String: Data] {
        var out: [String: Data] = [:]
        for name in CLI.contents(dir) where name.hasSuffix(".wav") { out[name] = FileManager.default.contents(atPath: "\(dir)/\(name)") }
        return out
    }

    @Test func sameSeed_givesTheSameBytes_anotherSeedOtherBytesAndDraws() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let files = Array(Self.files.prefix(2))
        let first = try Self.render(files, into: "\(dir)/a", Self.ranges + ["--seed", "7"])
        let again = try Self.render(files, into: "\(dir)/b", Self.ranges + ["--seed", "7"])
        let other = try Self.render(files, into: "\(dir)/c", Self.ranges + ["--seed", "8"])
        let a = Self.audio("\(dir)/a"), b = Self.audio("\(dir)/b"), c = Self.audio("\(dir)/c")
        #expect(a.count == 2 && a.values.allSatisfy { $0.count > 44_100 })
        #expect(a == b, "the same seed gave other bytes")
        #expect(first == again)
        for name in a.keys { #expect(a[name] != c[name], "\(name): seed 8 gave seed 7's bytes") }
        for name in first.keys {
            #expect(first[name]?["seed"] == AnyHashable(7) && other[name]?["seed"] == AnyHashable(8))
            let keys = ["transpose", "tempo", "velocity_scale"]
            #expect(keys.map { first[name]?[$0] } != keys.map { other[name]?[$0] }, "\(name): seed 8 drew what seed 7 drew")
        }
        // And without augmentation: other bytes again, and no augment object.
        let r = try CLI.carillon(["render", "\(CLI.openmsx)/\(files[0])", "-o", "\(dir)/plain.wav", "--soundfont", CLI.timGM,
                                  "--max-duration", "4", "--threads", "1", "--manifest", "\(dir)/plain.jsonl", "-q"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try RenderBatchTests.manifest("\(dir)/plain.jsonl").allSatisfy { Set($0.keys) == RenderBatchTests.manifestKeys })
    }

    @Test func aFilesDraw_isTheSameInAnyOrder_shardOrJobs() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let args = Self.ranges + ["--seed", "11", "--max-duration", "1"]
        let all = try Self.render(Self.files, into: "\(dir)/all", args + ["--jobs", "1"])
        let reversed = try Self.render(Self.files.reversed(), into: "\(dir)/reversed", args + ["--jobs", "2"])
        var sharded: [String: [String: AnyHashable]] = [:]
        for k in 0..<2 {
            // --input-root: every shard keys the files alike (the folder holding them).
            let part = try Self.render(Self.files, into: "\(dir)/shard\(k)", args + ["--shard", "\(k)/2", "--input-root", CLI.openmsx])
            sharded.merge(part) { a, _ in a }
        }
        #expect(all.count == Self.files.count && reversed == all && sharded == all)
        // The draws differ between files: each is drawn from its own key.
        #expect(Set(all.values.map { $0["tempo"] }).count == Self.files.count)
    }

    @Test func programMap_isRecordedAndApplied() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "# the pianos (0 is Acoustic Grand Piano) to program 5\n0..7: 5\n".write(toFile: "\(dir)/pianos.yaml", atomically: true, encoding: .utf8)
        let r = try CLI.carillon(["render", "\(CLI.openmsx)/tttheme2.mid", "-o", "\(dir)/out.wav", "--soundfont", CLI.timGM,
                                  "--max-duration", "6", "--program-map", "\(dir)/pianos.yaml", "--labels",
                                  "--manifest", "\(dir)/m.jsonl", "-q"])
        #expect(r.status == 0, "\(r.stderr)")
        let draw = try #require(try Self.draws("\(dir)/m.jsonl")["tttheme2.mid"])
        #expect(draw["program_map"] as? String == "\(dir)/pianos.yaml" && draw["seed"] as? Int == 0 && draw["transpose"] as? Int == 0)
        #expect(draw["tempo"] as? Double == 1 && draw["velocity_scale"] as? Double == 1 && draw["notes_dropped"] as? Int == 0)
        let rows = try String(contentsOfFile: "\(dir)/out.notes.csv", encoding: .utf8).split(separator: "\n").dropFirst()
        let programs = Set(rows.map { $0.split(separator: ",")[5] })   // channel 4's program 0 and the drums' kit 0
        #expect(programs.contains("5") && rows.allSatisfy { !$0.hasSuffix("ch04") || $0.split(separator: ",")[5] == "5" })
    }

    @Test func transposePastTheRange_saysHowManyNotesWereDropped_once() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try CLI.carillon(["render", "\(CLI.openmsx)/tttheme2.mid", "-o", "\(dir)/out.wav", "--soundfont", CLI.timGM,
                                  "--max-duration", "3", "--transpose", "48", "-q"])
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stderr.split(separator: "\n").filter { $0.contains("dropped") }
        #expect(lines.count == 1 && lines[0].contains("moved outside 0...127 by --transpose +48 dropped"), "\(r.stderr)")
    }

    @Test(arguments: [
        (["--transpose", "2..-2"], "--transpose range 2..-2 runs backwards; write the lower end first"),
        (["--transpose", "60"], "--transpose must be within -48...48 semitones"),
        (["--transpose", "1.5"], "--transpose takes a whole number of semitones or a range A..B"),
        (["--tempo", "0"], "--tempo must be within 0.25...4"),
        (["--tempo", "1..9"], "--tempo must be within 0.25...4"),
        (["--velocity-scale", "0..1"], "--velocity-scale must be above 0 and at most 4"),
        (["--velocity-scale", "x"], "--velocity-scale takes a factor"),
        (["--seed", "3"], "--seed draws the ranges of --transpose, --tempo or --velocity-scale (A..B) and --timbres, and none is given"),
        (["--program-map", "MISSING/pianos.yaml"], "pianos.yaml: error: cannot read the program map (No such file or directory)"),
        (["--program-map", "BAD"], "bad.yaml:2:1: error: invalid YAML"),
        (["--program-map", "WRONG"], "wrong.yaml:1:7: error: program 200 is out of range 0...127"),
    ])
    func mistakes_areOneClearLine_andNothingIsWritten(_ arguments: [String], _ message: String) throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "0..7: [5\n".write(toFile: "\(dir)/bad.yaml", atomically: true, encoding: .utf8)
        try "0..7: 200\n".write(toFile: "\(dir)/wrong.yaml", atomically: true, encoding: .utf8)
        let args = arguments.map { $0.replacingOccurrences(of: "MISSING", with: "\(dir)/none")
            .replacingOccurrences(of: "BAD", with: "\(dir)/bad.yaml").replacingOccurrences(of: "WRONG", with: "\(dir)/wrong.yaml") }
        let r = try CLI.carillon(["render", "\(CLI.openmsx)/tttheme2.mid", "--output-dir", "\(dir)/out", "--manifest", "\(dir)/out/m.jsonl",
                                  "--soundfont", CLI.timGM] + args)
        #expect(r.status != 0)
        #expect(r.stderr.contains(message), "\(r.stderr)")
        #expect(r.stderr.split(separator: "\n").first?.contains(message) == true)
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/out"), "something was written")
    }
}
