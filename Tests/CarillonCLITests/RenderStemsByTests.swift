import Testing
import Foundation

/// `carillon render --stems DIR --stems-by channel|track|program`: whole command lines.
@Suite(.serialized) struct RenderStemsByTests {
    typealias R = RenderCommandTests

    @Test func stemsByWithoutStems_isOneClearError() throws {
        let r = try R.carillon(["render", "a.mid", "-o", "x.wav", "--stems-by", "track"])
        #expect(r.status != 0)
        #expect(r.stderr.split(separator: "\n").first?.contains("--stems-by needs --stems DIR") == true, "\(r.stderr)")
    }

    @Test func unknownStemsBy_isOneClearError() throws {
        let r = try R.carillon(["render", "a.mid", "-o", "x.wav", "--stems", "s", "--stems-by", "instrument"])
        #expect(r.status != 0)
        let first = r.stderr.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.contains("instrument") && first.contains("channel") && first.contains("track") && first.contains("program"), "\(r.stderr)")
    }

    @Test func stemsByToStandardOutput_isOneClearError() throws {
        let r = try R.carillon(["render", "a.mid", "-o", "-", "--stems", "s", "--stems-by", "program"])
        #expect(r.status != 0 && r.stderr.contains("--stems-by writes NAME.stems.json beside the output"), "\(r.stderr)")
    }

    /// A batch by program: each output has NAME.stems.json beside it (loadable, its note counts the
    /// labels' own), its stems in DIR/NAME/, and its manifest line names both.
    @Test func batchByProgram_writesTheReportBesideEachOutput_andTheManifestNamesIt() throws {
        let dir = R.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try R.carillon(["render", "\(R.openmsx)/tttheme2.mid", "\(R.openmsx)/no_work_song_redfarn.mid",
                                "--output-dir", "\(dir)/out", "--stems", "\(dir)/stems", "--stems-by", "program", "--labels-format", "jsonl",
                                "--manifest", "\(dir)/m.jsonl", "--soundfont", R.timGM, "--max-duration", "8", "--jobs", "2", "-q"])
        #expect(r.status == 0, "\(r.stderr)")
        for name in ["tttheme2", "no_work_song_redfarn"] {
            let data = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/out/\(name).stems.json"))
            let report = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(report["grouping"] as? String == "program")
            let stems = try #require(report["stems"] as? [[String: Any]])
            let files = R.contents("\(dir)/stems/\(name)")
            #expect(Set(stems.compactMap { ($0["file"] as? String).map { ($0 as NSString).lastPathComponent } }) == Set(files))
            // The labels' stem column against the report.
            let rows = try String(contentsOfFile: "\(dir)/out/\(name).notes.jsonl", encoding: .utf8).split(separator: "\n")
            var counts: [String: Int] = [:]
            for row in rows {
                let note = try #require(try JSONSerialization.jsonObject(with: Data(row.utf8)) as? [String: Any])
                counts[note["stem"] as? String ?? "?", default: 0] += 1
            }
            #expect(rows.count > 10)
            for stem in stems {
                let n = stem["name"] as? String ?? ""
                #expect(stem["notes"] as? Int == counts[n] ?? 0, "\(name) \(n)")
            }
            #expect(counts.keys.allSatisfy { k in stems.contains { $0["name"] as? String == k } }, "\(counts.keys.sorted())")
            // By program, a note's stem is its program's or the drums' (channel names would be --stems-by channel).
            #expect(counts.keys.allSatisfy { $0 == "drums" || $0.hasPrefix("prog") }, "\(counts.keys.sorted())")
        }
        let lines = try String(contentsOfFile: "\(dir)/m.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        for line in lines {
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let report = try #require(entry["stems_json"] as? String)
            #expect(report.hasSuffix(".stems.json") && FileManager.default.fileExists(atPath: report))
            let stems = try #require(entry["stems"] as? [String])
            #expect(!stems.isEmpty && stems.allSatisfy { FileManager.default.fileExists(atPath: $0) })
        }
    }

    /// Without --stems-by: today's stems, no report, manifest lines without the new fields.
    @Test func stemsAlone_writeNoReport() throws {
        let dir = R.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try R.carillon(["render", "\(R.openmsx)/tttheme2.mid", "-o", "\(dir)/mix.wav", "--stems", "\(dir)/stems",
                                "--manifest", "\(dir)/m.jsonl", "--soundfont", R.timGM, "--max-duration", "3", "-q"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(R.contents(dir) == ["m.jsonl", "mix.manifest.json", "mix.wav", "stems"])
        let line = try String(contentsOfFile: "\(dir)/m.jsonl", encoding: .utf8)
        #expect(!line.contains("stems_json"))
    }
}
