import Foundation
import Testing

/// `carillon render --timbres per-track|FILE`: each track's instrument drawn
/// from the seed, the file's key and the track; the manifest and the labels
/// say what each drew; the same seed gives the same bytes; a pool file's
/// mistakes are named by file and line.
@Suite(.serialized) struct RenderTimbresTests {
    typealias CLI = RenderCommandTests
    /// Two string tracks (4 and 5), a drum track, and more: real music from OpenTTD's openmsx.
    static let song = "\(CLI.openmsx)/harp_harmony.mid"

    /// Renders `song` into `dir/out` with labels and a manifest; its one manifest line.
    static func render(into dir: String, _ extra: [String]) throws -> [String: Any] {
        let r = try CLI.carillon(["render", song, "--output-dir", "\(dir)/out", "--soundfont", CLI.timGM, "--max-duration", "4",
                                  "--threads", "1", "--labels", "--manifest", "\(dir)/m.jsonl", "-q"] + extra)
        #expect(r.status == 0, "\(r.stderr)")
        return try #require(try RenderBatchTests.manifest("\(dir)/m.jsonl").last)
    }

    /// A notes.csv's rows by column name (fields may be quoted, with "" for a quote).
    static func csvRows(_ path: String) throws -> [[String: String]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        var rows: [[String]] = [], row: [String] = [], field = "", quoted = false
        var chars = Array(text)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" { if chars.first == "\"" { field.append("\""); chars.removeFirst() } else { quoted = false } } else { field.append(c) }
            } else if c == "\"" { quoted = true }
            else if c == "," { row.append(field); field = "" }
            else if c == "\n" { row.append(field); rows.append(row); row = []; field = "" }
            else { field.append(c) }
        }
        guard let header = rows.first else { return [] }
        return rows.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
    }

    static func picks(_ entry: [String: Any]) throws -> [[String: Any]] {
        try #require(entry["timbres"] as? [[String: Any]], "no timbres in the manifest line")
    }

    static func program(_ picks: [[String: Any]], track: Int) -> Int? {
        picks.first { $0["track"] as? Int == track }?["program"] as? Int
    }

    @Test func perTrack_twoStringTracksDrawApartForSomeSeed_andTheSameSeedGivesTheSameBytes() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var apart: Int? = nil
        for seed in 1...6 {
            let picks = try Self.picks(try Self.render(into: "\(dir)/\(seed)", ["--timbres", "per-track", "--seed", "\(seed)"]))
            let a = try #require(Self.program(picks, track: 4)), b = try #require(Self.program(picks, track: 5))
            // Both strings (programs 40...47), drawn among the font's eight (TimGM6mb: bank 0 only).
            #expect((40...47).contains(a) && (40...47).contains(b), "\(picks)")
            #expect(picks.filter { [4, 5].contains($0["track"] as? Int) }.allSatisfy { $0["class"] as? String == "Strings" && $0["candidates"] as? Int == 8 })
            if a != b { apart = seed; break }
        }
        let seed = try #require(apart, "the two string tracks drew the same preset for every seed 1...6")
        // The same seed again: the same bytes, audio and labels, and the same draws.
        let first = try Self.picks(try RenderBatchTests.manifest("\(dir)/\(seed)/m.jsonl")[0])
        let again = try Self.picks(try Self.render(into: "\(dir)/again", ["--timbres", "per-track", "--seed", "\(seed)"]))
        #expect(NSArray(array: first).isEqual(to: again))
        for name in ["harp_harmony.wav", "harp_harmony.notes.csv"] {
            let a = FileManager.default.contents(atPath: "\(dir)/\(seed)/out/\(name)"), b = FileManager.default.contents(atPath: "\(dir)/again/out/\(name)")
            #expect(a != nil && a == b, "\(name) differs between two runs with --seed \(seed)")
        }
    }

    /// Every note's label names the font and the preset its track drew; the draw changes what plays.
    @Test func labels_nameEachNotesFontAndDrawnPreset() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let picks = try Self.picks(try Self.render(into: "\(dir)/drawn", ["--timbres", "per-track", "--seed", "3"]))
        #expect(picks.contains { $0["class"] as? String == "Drums" && $0["bank"] as? Int == 128 }, "\(picks)")
        let rows = try Self.csvRows("\(dir)/drawn/out/harp_harmony.notes.csv")
        #expect(rows.count > 20)
        for row in rows {
            let track = Int(row["track"]!)!
            let mine = picks.filter { $0["track"] as? Int == track }
            #expect(row["soundfont"] == "TimGM6mb.sf2")
            #expect(mine.contains { "\($0["bank"]!)" == row["bank"] && "\($0["program"]!)" == row["program"] && $0["preset"] as? String == row["preset"] },
                    "track \(track) plays \(row["bank"]!):\(row["program"]!) \(row["preset"]!), drew \(mine)")
        }
        // Without --timbres, some track plays another program: the draw is heard, not only written down.
        _ = try CLI.carillon(["render", Self.song, "-o", "\(dir)/plain.wav", "--soundfont", CLI.timGM, "--max-duration", "4", "--labels", "-q"])
        let plain = try Self.csvRows("\(dir)/plain.notes.csv")
        let before = Set(plain.map { "\($0["track"]!):\($0["program"]!)" }), after = Set(rows.map { "\($0["track"]!):\($0["program"]!)" })
        #expect(before != after, "\(before.sorted()) \(after.sorted())")
    }

    /// A pool: strings draw only among its two; the rest keep their instruments.
    @Test func pool_drawsAmongItsPresetsOnly() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "# the strings draw among two\nstrings: [40, \"0:41\"]\ndrums: [0]\n".write(toFile: "\(dir)/pool.yaml", atomically: true, encoding: .utf8)
        let picks = try Self.picks(try Self.render(into: "\(dir)/r", ["--timbres", "\(dir)/pool.yaml", "--seed", "9"]))
        let strings = picks.filter { $0["class"] as? String == "Strings" }
        #expect(strings.count >= 2 && strings.allSatisfy { [40, 41].contains($0["program"] as? Int) && $0["candidates"] as? Int == 2 }, "\(picks)")
        #expect(picks.allSatisfy { ["Strings", "Drums"].contains($0["class"] as? String) }, "\(picks)")
    }

    @Test(arguments: [
        ("strngs: [1]\n", "pool.yaml:2:1: error: 'strngs' is no General MIDI class; write one of piano"),
        ("piano: [200]\n", "pool.yaml:2:9: error: program 200 is out of range 0...127"),
        ("piano: [\"128:0\"]\n", "pool.yaml:2:9: error: '128:0' is a drum kit (bank 128): list it under drums"),
        ("piano: []\n", "pool.yaml:2:8: error: the list is empty; give at least one preset"),
        ("piano: [0, 1\n", "pool.yaml:3:1: error:"),
    ])
    func poolMistakes_nameFileAndLine_andExitNonZero(_ line2: String, _ message: String) throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try ("drums: [0]\n" + line2).write(toFile: "\(dir)/pool.yaml", atomically: true, encoding: .utf8)
        let r = try CLI.carillon(["render", Self.song, "-o", "\(dir)/x.wav", "--soundfont", CLI.timGM, "--timbres", "\(dir)/pool.yaml"])
        #expect(r.status != 0)
        #expect(r.stderr.split(separator: "\n").first?.contains(message) == true, "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/x.wav"))
    }

    /// A pool's presets are checked against the fonts once they are read: one in none of them is a
    /// mistake at its place in the file, with the closest preset they have, and nothing renders; one
    /// another font of the set has is no mistake.
    @Test func poolPresetInNoFont_isAMistakeAtItsPlace_withTheClosest() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        // TimGM6mb has no bank 8 and no drum kit 99.
        try "drums: [0, 99]\npiano: [0, \"8:4\"]\n".write(toFile: "\(dir)/pool.yaml", atomically: true, encoding: .utf8)
        let r = try CLI.carillon(["render", Self.song, "-o", "\(dir)/x.wav", "--soundfont", CLI.timGM, "--timbres", "\(dir)/pool.yaml"])
        #expect(r.status != 0)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 2, "\(r.stderr)")
        #expect(lines.first?.contains("pool.yaml:1:12: error: preset 128:99 is in none of the fonts (TimGM6mb.sf2); did you mean 128:") == true, "\(r.stderr)")
        #expect(lines.last?.contains("pool.yaml:2:12: error: preset 8:4 is in none of the fonts (TimGM6mb.sf2); did you mean 0:4 (") == true, "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/x.wav"))
        // FluidR3_GM has 8:4: with it in the set, the pool renders.
        try "piano: [0, \"8:4\"]\n".write(toFile: "\(dir)/good.yaml", atomically: true, encoding: .utf8)
        let both = try CLI.carillon(["render", Self.song, "-o", "\(dir)/y.wav", "--soundfont", CLI.timGM, "--soundfont", PresetNamesCommandTests.fluidR3,
                                     "--timbres", "\(dir)/good.yaml", "--seed", "1", "--max-duration", "1", "-q"])
        #expect(both.status == 0, "\(both.stderr)")
    }

    /// Across a set: a preset in neither font is a mistake at its place with the closest of the set (and
    /// its font); a font a preset names that is none of the set, with the closest name; nothing renders.
    @Test func poolAcrossASet_presetInNeitherFontOrAnUnknownFont_isAMistakeAtItsPlace() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try "piano: [0, \"3:4\"]\nstrings: [\"FluidR3:40\"]\n".write(toFile: "\(dir)/pool.yaml", atomically: true, encoding: .utf8)
        let r = try CLI.carillon(["render", Self.song, "-o", "\(dir)/x.wav", "--soundfont", CLI.timGM, "--soundfont", PresetNamesCommandTests.fluidR3,
                                  "--timbres", "\(dir)/pool.yaml", "--seed", "1"])
        #expect(r.status != 0)
        let lines = r.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(r.stderr)")
        #expect(lines.first?.contains("pool.yaml:1:12: error: preset 3:4 is in none of the fonts (TimGM6mb.sf2, FluidR3_GM.sf2); did you mean 0:4 (") == true,
                "\(r.stderr)")
        #expect(lines.last?.contains("pool.yaml:2:11: error: font 'FluidR3' is none of the fonts (TimGM6mb.sf2, FluidR3_GM.sf2); did you mean 'FluidR3_GM'?") == true,
                "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/x.wav"))
    }

    /// Across a set the manifest's picks name their fonts, and the labels each note's font.
    @Test func perTrackAcrossASet_manifestAndLabelsNameTheFonts() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let entry = try Self.render(into: dir, ["--soundfont", PresetNamesCommandTests.fluidR3, "--timbres", "per-track", "--seed", "3"])
        let picks = try Self.picks(entry)
        #expect(!picks.isEmpty && picks.allSatisfy { ["TimGM6mb.sf2", "FluidR3_GM.sf2"].contains($0["soundfont"] as? String) }, "\(picks)")
        let home = try #require(entry["soundfont"] as? String)
        #expect(picks.filter { $0["class"] as? String == "Drums" }.allSatisfy { ($0["soundfont"] as? String).map { home.hasSuffix($0) } == true }, "\(picks)")
        let output = try #require(entry["output"] as? String)
        let rows = try Self.csvRows(output.replacingOccurrences(of: ".wav", with: ".notes.csv"))
        let drawn = Set(picks.map { "\($0["track"]!) \($0["soundfont"]!) \($0["bank"]!):\($0["program"]!)" })
        for row in rows { #expect(drawn.contains("\(row["track"]!) \(row["soundfont"]!) \(row["bank"]!):\(row["program"]!)"), "\(row)") }
    }

    @Test func missingPool_saysSo() throws {
        let r = try CLI.carillon(["render", Self.song, "-o", "/tmp/never.wav", "--timbres", "/nonexistent/pool.yaml"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("/nonexistent/pool.yaml: error: cannot read the timbre pool (No such file or directory)"), "\(r.stderr)")
    }
}
