import Foundation
import Testing

/// `carillon render` on batches: folders, lists, the worker pool, manifests,
/// resuming, shards, loudness, damaged timing and interruption.
@Suite(.serialized) struct RenderBatchTests {
    typealias CLI = RenderCommandTests
    static let timGM = RenderCommandTests.timGM
    static let openmsx = RenderCommandTests.openmsx

    /// A format-0 SMF (480 PPQN, 120 bpm: 960 ticks a second): program 0,
    /// a note of half a second, `gap` seconds of nothing, another note.
    static func smf(gap: Double, key: UInt8 = 60) -> Data {
        func vlq(_ n: Int) -> [UInt8] {
            var out = [UInt8(n & 0x7F)], n = n >> 7
            while n > 0 { out.insert(UInt8(n & 0x7F) | 0x80, at: 0); n >>= 7 }
            return out
        }
        var track: [UInt8] = vlq(0) + [0xC0, 0] + vlq(0) + [0x90, key, 100] + vlq(480) + [0x80, key, 0]
        track += vlq(Int(gap * 960)) + [0x90, key + 4, 100] + vlq(480) + [0x80, key + 4, 0] + vlq(0) + [0xFF, 0x2F, 0]
        func be(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8((v >> (8 * (n - 1 - $0))) & 0xFF) } }
        return Data(Array("MThd".utf8) + be(6, 4) + be(0, 2) + be(1, 2) + be(480, 2) + Array("MTrk".utf8) + be(track.count, 4) + track)
    }

    static func write(_ data: Data, _ path: String) {
        try? FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: path, contents: data)
    }

    /// Every file under `dir`, relative, sorted (hidden files included).
    static func tree(_ dir: String) -> [String] {
        (FileManager.default.enumerator(atPath: dir)?.allObjects as? [String] ?? []).filter {
            var isDir: ObjCBool = false
            return FileManager.default.fileExists(atPath: "\(dir)/\($0)", isDirectory: &isDir) && !isDir.boolValue
        }.sorted()
    }

    static func manifest(_ path: String) throws -> [[String: Any]] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    static let manifestKeys: Set<String> = [
        "input", "output", "status", "error", "piece_seconds", "rendered_seconds", "peak_dbfs", "clipped_samples",
        "loudness_lufs", "true_peak_dbtp", "gain_db", "normalized_lufs", "truncated", "gaps_cut", "seconds_cut",
        "dead_air_seconds", "limits", "limit_seconds_cut", "warnings",
        "render_seconds", "carillon_version", "soundfont", "soundfont_bytes",
    ]

    @Test func folder_isWalked_subfoldersMirrored_aFailingFileCounted_andTheManifestComplete() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.write(Self.smf(gap: 0.5), "\(dir)/in/a.mid")
        Self.write(Data("MThd broken".utf8), "\(dir)/in/sub/b.MIDI")          // fails, in the middle
        Self.write(Self.smf(gap: 0.5, key: 70), "\(dir)/in/sub/deeper/c.kar")
        Self.write(Data("not midi".utf8), "\(dir)/in/notes.txt")              // not a MIDI name: ignored
        let r = try CLI.carillon(["render", "\(dir)/in", "--output-dir", "\(dir)/out", "--jobs", "2",
                                  "--manifest", "\(dir)/m.jsonl", "--soundfont", Self.timGM, "--tail", "1"])
        #expect(r.status == 1)
        #expect(r.stderr.contains("b.MIDI") && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        // Each finished input's manifest line also beside its audio; the failed one has neither.
        #expect(Self.tree("\(dir)/out") == ["a.manifest.json", "a.wav", "sub/deeper/c.manifest.json", "sub/deeper/c.wav"])
        #expect(r.stdout.contains("2 rendered, 0 skipped, 1 failed"))
        let lines = try Self.manifest("\(dir)/m.jsonl")
        #expect(lines.count == 3)
        for line in lines { #expect(Set(line.keys) == Self.manifestKeys) }
        let byInput = Dictionary(uniqueKeysWithValues: lines.map { ($0["input"] as! String, $0) })
        let ok = try #require(byInput["\(dir)/in/a.mid"])
        #expect(ok["status"] as? String == "ok" && ok["output"] as? String == "\(dir)/out/a.wav")
        #expect((ok["loudness_lufs"] as? Double).map { $0 < 0 && $0 > -70 } == true)
        #expect((ok["rendered_seconds"] as? Double).map { $0 > 1 } == true)
        #expect(ok["soundfont_bytes"] as? Int == 5_969_788 && ok["carillon_version"] as? String == "0.1.0")
        let bad = try #require(byInput["\(dir)/in/sub/b.MIDI"])
        #expect(bad["status"] as? String == "failed" && (bad["error"] as? String)?.contains("MIDI") == true)
    }

    @Test func onATerminal_oneBarForTheBatch_withFilesSpeedAndETA() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for i in 0..<4 { Self.write(Self.smf(gap: 2, key: UInt8(50 + i)), "\(dir)/in/f\(i).mid") }
        let (text, status) = try runOnPseudoTerminal(
            "\(RenderCommandTests.carillon) render \(dir)/in --output-dir \(dir)/out --jobs 2 --soundfont \(Self.timGM)")
        #expect(status == 0)
        #expect(text.contains("/4 files") && text.contains("× real time ETA"), "\(text)")
        #expect(text.contains("4 rendered, 0 skipped, 0 failed"))
    }

    @Test func twoInputsWithOneOutputName_isAnErrorBeforeAnythingRenders() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.write(Self.smf(gap: 0.5), "\(dir)/x/song.mid")
        Self.write(Self.smf(gap: 0.5), "\(dir)/x/song.midi")
        let r = try CLI.carillon(["render", "\(dir)/x/song.mid", "\(dir)/x/song.midi", "--output-dir", "\(dir)/out",
                                  "--soundfont", Self.timGM])
        #expect(r.status == 1)
        #expect(r.stderr == "carillon: error: \(dir)/x/song.mid and \(dir)/x/song.midi would both write \(dir)/out/song.wav\n")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/out"))
    }

    /// Listed files are keyed and laid out from their common folder (or
    /// --input-root), as a walked folder is: equal names in different folders
    /// go in one list, and a file outside --input-root is refused.
    @Test func aList_withEqualNamesInDifferentFolders_mirrorsTheFolders() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (i, name) in ["c/x/song.mid", "c/y/song.mid", "c/y/z/song.kar"].enumerated() {
            Self.write(Self.smf(gap: 0.05, key: UInt8(50 + i)), "\(dir)/\(name)")
        }
        try ["c/x/song.mid", "c/y/song.mid", "c/y/z/song.kar"].map { "\(dir)/\($0)" }.joined(separator: "\n")
            .write(toFile: "\(dir)/list", atomically: true, encoding: .utf8)
        let common = ["--output-dir", "\(dir)/out", "--soundfont", Self.timGM, "--tail", "0.2", "-q", "-r", "8000"]
        let r = try CLI.carillon(["render", "--from-list", "\(dir)/list", "--stems", "\(dir)/stems"] + common)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.tree("\(dir)/out") == ["x/song.wav", "y/song.wav", "y/z/song.wav"])
        #expect(Self.tree("\(dir)/stems").map { ($0 as NSString).deletingLastPathComponent }.uniqued()
                == ["x/song", "y/song", "y/z/song"])
        // --input-root one folder up: the keys, and so the outputs, start with c/.
        let rooted = try CLI.carillon(["render", "--from-list", "\(dir)/list", "--input-root", dir, "--output-dir", "\(dir)/out2"]
                                      + common.dropFirst(2))
        #expect(rooted.status == 0, "\(rooted.stderr)")
        #expect(Self.tree("\(dir)/out2") == ["c/x/song.wav", "c/y/song.wav", "c/y/z/song.wav"])
        let outside = try CLI.carillon(["render", "--from-list", "\(dir)/list", "--input-root", "\(dir)/c/y"] + common)
        #expect(outside.status == 1)
        #expect(outside.stderr == "carillon: error: \(dir)/c/x/song.mid is not under the input root \(dir)/c/y (--input-root)\n")
    }

    @Test func skipExisting_rendersOnlyWhatIsMissing() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for i in 0..<3 { Self.write(Self.smf(gap: 0.3, key: UInt8(50 + i)), "\(dir)/in/f\(i).mid") }
        let args = ["render", "\(dir)/in", "--output-dir", "\(dir)/out", "--manifest", "\(dir)/m.jsonl",
                    "--soundfont", Self.timGM, "--tail", "1", "-q"]
        #expect(try CLI.carillon(args).status == 0)
        try FileManager.default.removeItem(atPath: "\(dir)/out/f1.wav")
        let before = try FileManager.default.attributesOfItem(atPath: "\(dir)/out/f0.wav")[.modificationDate] as? Date
        usleep(20_000)
        let r = try CLI.carillon(args + ["--skip-existing"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.tree("\(dir)/out") == (0..<3).flatMap { ["f\($0).manifest.json", "f\($0).wav"] })
        #expect(try FileManager.default.attributesOfItem(atPath: "\(dir)/out/f0.wav")[.modificationDate] as? Date == before)
        // One line per input: the skipped files keep their first run's lines, f1 has its new one.
        // (The first run's two workers finish f0 and f2 in either order.)
        let rerun = try Self.manifest("\(dir)/m.jsonl").map { "\($0["output"]!) \($0["status"]!)" }
        #expect(rerun.count == 3)
        #expect(rerun.prefix(2).sorted() == ["\(dir)/out/f0.wav ok", "\(dir)/out/f2.wav ok"])
        #expect(rerun.last == "\(dir)/out/f1.wav ok")
        // Run again without --skip-existing: every line replaced, still one each.
        #expect(try CLI.carillon(args).status == 0)
        #expect(try Self.manifest("\(dir)/m.jsonl").map { $0["input"] as! String }.sorted()
                == (0..<3).map { "\(dir)/in/f\($0).mid" })
    }

    /// A run killed after an input's files were moved into place and before its
    /// manifest line was appended (here: f1's line lost, f2's cut short) resumes
    /// with `--skip-existing` to the first run's lines, figures and all,
    /// rendering nothing: each input's line is part of its output set
    /// (`NAME.manifest.json`).
    @Test func skipExisting_aLineTheManifestLost_comesBackFromTheOutputSet() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for i in 0..<3 { Self.write(Self.smf(gap: 0.3, key: UInt8(50 + i)), "\(dir)/in/f\(i).mid") }
        let args = ["render", "\(dir)/in", "--output-dir", "\(dir)/out", "--manifest", "\(dir)/m.jsonl",
                    "--soundfont", Self.timGM, "--tail", "1"]
        #expect(try CLI.carillon(args).status == 0)
        let first = try Self.manifest("\(dir)/m.jsonl")
        let kept = try String(contentsOfFile: "\(dir)/m.jsonl", encoding: .utf8).split(separator: "\n")
            .filter { !$0.contains("f1.mid") }.map { $0.contains("f2.mid") ? String($0.prefix(40)) : String($0) }
        try kept.joined(separator: "\n").write(toFile: "\(dir)/m.jsonl", atomically: true, encoding: .utf8)
        let r = try CLI.carillon(args + ["--skip-existing"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("0 rendered, 3 skipped, 0 failed"), "\(r.stdout)")
        #expect(r.stderr.contains("1 unreadable line(s) dropped"), "\(r.stderr)")
        let resumed = try Self.manifest("\(dir)/m.jsonl")
        func byInput(_ lines: [[String: Any]]) -> [String: NSDictionary] {
            Dictionary(uniqueKeysWithValues: lines.map { ($0["input"] as! String, $0 as NSDictionary) })
        }
        #expect(resumed.count == 3)
        #expect(byInput(resumed) == byInput(first))
        for line in resumed { #expect(line["status"] as? String == "ok" && line["piece_seconds"] is Double) }
    }

    /// A font Carillon's SF2 reader refuses but FluidSynth loads (4 stray bytes
    /// at the end of its pdta list): the batch renders by preset and says so, once.
    @Test func aFontReadOnlyByPreset_isAWarning_onceForTheBatch() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.timGM)))
        func word32(_ at: Int) -> Int { (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) } }
        func put32(_ at: Int, _ v: Int) { for i in 0..<4 { bytes[at + i] = UInt8(v >> (8 * i) & 0xFF) } }
        var at = 12   // the pdta list is the font's last chunk
        while at + 8 + word32(at + 4) < bytes.count { at += 8 + word32(at + 4) }
        #expect(Array(bytes[at + 8..<at + 12]) == Array("pdta".utf8))
        bytes += [0, 0, 0, 0]
        put32(at + 4, word32(at + 4) + 4)
        put32(4, bytes.count - 8)
        let font = "\(dir)/odd.sf2"
        Self.write(Data(bytes), font)
        for i in 0..<3 { Self.write(Self.smf(gap: 0.2, key: UInt8(50 + i)), "\(dir)/in/f\(i).mid") }
        func args(_ font: String, _ out: String) -> [String] {
            ["render", "\(dir)/in", "--output-dir", "\(dir)/\(out)", "--jobs", "2", "--tail", "0.5", "-q", "--soundfont", font]
        }
        let r = try CLI.carillon(args(font, "out"))
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.tree("\(dir)/out") == ["f0.wav", "f1.wav", "f2.wav"])
        #expect(r.stderr.hasPrefix("carillon: warning: \(font): samples loaded by preset, not by note ("), "\(r.stderr)")
        #expect(r.stderr.components(separatedBy: "not by note").count == 2, "\(r.stderr)")
        let plain = try CLI.carillon(args(Self.timGM, "out2"))
        #expect(plain.status == 0 && plain.stderr.isEmpty, "\(plain.stderr)")
    }

    /// The shards of a list, in either order, and of the folder it lists are
    /// the same: one key per file (its path below the corpus), so every file
    /// lands in the same shard at the same output, duplicate names included.
    @Test func shards_renderEveryFileExactlyOnce_alikeForAListInAnyOrderAndTheFolder() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var paths: [String] = []
        for i in 0..<12 {
            let p = "\(dir)/in/\(i % 3 == 0 ? "sub/" : "")n\(i).mid"
            Self.write(Self.smf(gap: 0.05, key: UInt8(40 + i)), p)
            paths.append(p)
        }
        for i in [1, 2] {   // equal names in another folder
            Self.write(Self.smf(gap: 0.05, key: UInt8(60 + i)), "\(dir)/in/dup/n\(i).mid")
            paths.append("\(dir)/in/dup/n\(i).mid")
        }
        /// Per shard: (input, output below the output folder), sorted.
        func runShards(_ inputs: [String], tag: String) throws -> [[String]] {
            try (0..<3).map { k in
                let r = try CLI.carillon(["render"] + inputs + ["--output-dir", "\(dir)/out-\(tag)",
                                          "--shard", "\(k)/3", "--manifest", "\(dir)/m-\(tag)-\(k).jsonl",
                                          "--soundfont", Self.timGM, "--tail", "0.2", "-q", "-r", "8000"])
                #expect(r.status == 0, "\(r.stderr)")
                return try Self.manifest("\(dir)/m-\(tag)-\(k).jsonl").map {
                    "\($0["input"] as! String) \(($0["output"] as! String).replacingOccurrences(of: "\(dir)/out-\(tag)/", with: ""))"
                }.sorted()
            }
        }
        func list(_ paths: [String], _ tag: String) throws -> [String] {
            try paths.joined(separator: "\n").write(toFile: "\(dir)/list-\(tag)", atomically: true, encoding: .utf8)
            return ["--from-list", "\(dir)/list-\(tag)", "--input-root", "\(dir)/in"]
        }
        let forward = try runShards(try list(paths, "a"), tag: "a")
        // Every file exactly once over the shards, and every output written, sub-folders mirrored.
        #expect(forward.flatMap { $0 }.map { String($0.split(separator: " ")[0]) }.sorted() == paths.sorted())
        // Each with its manifest line beside it.
        #expect(Self.tree("\(dir)/out-a").count == 2 * 14 && Self.tree("\(dir)/out-a").contains("dup/n1.wav")
                && Self.tree("\(dir)/out-a").contains("dup/n1.manifest.json"))
        #expect(forward.filter(\.isEmpty).isEmpty)   // 14 files hash into all 3 shards
        #expect(try runShards(try list(paths.reversed(), "b"), tag: "b") == forward)
        #expect(try runShards(["\(dir)/in"], tag: "c") == forward)
    }

    /// `--shard slurm` reads the array task's environment: --array=1-3 is
    /// shards 0…2 of 3 (together: every file once); gaps in the IDs are a usage error.
    @Test func shardSlurm_numbersTheShardsFromTheArraysFirstTask() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for i in 0..<8 { Self.write(Self.smf(gap: 0.05, key: UInt8(40 + i)), "\(dir)/in/\(i % 2 == 0 ? "sub/" : "")n\(i).mid") }
        let args = ["render", "\(dir)/in", "--shard", "slurm", "--soundfont", Self.timGM, "--tail", "0.2", "-q", "-r", "8000"]
        var outputs: [[String]] = []
        for task in 1...3 {
            let env = ["SLURM_ARRAY_TASK_ID": "\(task)", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "3",
                       "SLURM_ARRAY_TASK_COUNT": "3"]
            let r = try CLI.carillon(args + ["--output-dir", "\(dir)/out-\(task)"], environment: env)
            #expect(r.status == 0, "\(r.stderr)")
            let explicit = try CLI.carillon(args.map { $0 == "slurm" ? "\(task - 1)/3" : $0 } + ["--output-dir", "\(dir)/k-\(task)"])
            #expect(explicit.status == 0)
            #expect(Self.tree("\(dir)/out-\(task)") == Self.tree("\(dir)/k-\(task)"))
            outputs.append(Self.tree("\(dir)/out-\(task)"))
        }
        #expect(outputs.flatMap { $0 }.sorted() == Self.tree("\(dir)/in").map { $0.replacingOccurrences(of: ".mid", with: ".wav") })
        let gaps = try CLI.carillon(args + ["--output-dir", "\(dir)/gaps"], environment: [
            "SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "7", "SLURM_ARRAY_TASK_COUNT": "3"])
        #expect(gaps.status == 64)
        #expect(gaps.stderr.contains("--array=0-2 or --array=1-3"), "\(gaps.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/gaps"))
    }

    @Test func lateEndOfTrack_isDeadAir_leftOutAndSaid_keepEndOfTrackKeepsIt() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Two notes (to 1.5 s), End of Track 10 minutes after the last.
        var bytes = [UInt8](Self.smf(gap: 0.5))
        let eot = bytes.count - 4
        #expect(Array(bytes[eot...]) == [0, 0xFF, 0x2F, 0])
        bytes.replaceSubrange(eot..<(eot + 1), with: [0xA3, 0x94, 0x00])   // delta 576,000 ticks: 600 s
        bytes[21] &+= 2                                                     // the track's length
        Self.write(Data(bytes), "\(dir)/late.mid")
        let r = try CLI.carillon(["render", "\(dir)/late.mid", "-o", "\(dir)/late.wav", "-r", "8000",
                                  "--soundfont", Self.timGM, "--manifest", "\(dir)/m.jsonl"])
        #expect(r.status == 0, "\(r.stderr)")
        let line = try #require(try Self.manifest("\(dir)/m.jsonl").first)
        let rendered = try #require(line["rendered_seconds"] as? Double)
        #expect(rendered > 1.5 && rendered < 11.5, "\(rendered)")
        #expect((line["dead_air_seconds"] as? Double).map { abs($0 - (601.5 - rendered)) < 0.01 } == true)
        #expect(line["gaps_cut"] as? Int == 0 && (line["limits"] as? [String]) == [])
        #expect(r.stderr.contains("the end of track comes long after the last sound") && r.stderr.contains("of dead air left out"),
                "\(r.stderr)")
        let kept = try CLI.carillon(["render", "\(dir)/late.mid", "-o", "\(dir)/kept.wav", "-r", "8000", "--keep-end-of-track",
                                     "--soundfont", Self.timGM, "--manifest", "\(dir)/m.jsonl"])
        #expect(kept.status == 0 && kept.stderr.isEmpty, "\(kept.stderr)")
        #expect(kept.stdout.contains("(piece 10:01.5)"), "\(kept.stdout)")
    }

    @Test func twoHourGap_isCutToMaxGap_rendersFiveMinutes_andSaysSo() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.write(Self.smf(gap: 7200), "\(dir)/gap.mid")
        let r = try CLI.carillon(["render", "\(dir)/gap.mid", "-o", "\(dir)/gap.flac", "-r", "8000",
                                  "--soundfont", Self.timGM, "--manifest", "\(dir)/m.jsonl"])
        #expect(r.status == 0, "\(r.stderr)")
        let line = try #require(try Self.manifest("\(dir)/m.jsonl").first)
        // The gap after the first note (at 0.5 s) is cut to the default 300 s: the second note at 300.5 s.
        let piece = try #require(line["piece_seconds"] as? Double)
        #expect(abs(piece - 301) < 0.01)
        let rendered = try #require(line["rendered_seconds"] as? Double)
        #expect(rendered > 301 && rendered < 315)
        #expect(line["gaps_cut"] as? Int == 1)
        #expect((line["seconds_cut"] as? Double).map { abs($0 - 6900) < 0.01 } == true)
        #expect(line["truncated"] as? Bool == false)
        #expect(r.stderr.contains("carillon: warning: \(dir)/gap.mid: 120:00.0 without an event at 0:00.5 "
                                  + "(a corrupt delta time?): cut to 5:00.0 (--max-gap)"), "\(r.stderr)")
        #expect(r.stdout.contains("1 gap cut (--max-gap)"))
        // --max-gap 0: nothing is cut (the piece keeps its two hours; --max-duration bounds the render).
        // (--no-limit too: two notes two hours apart are a piece that thins out.)
        let whole = try CLI.carillon(["render", "\(dir)/gap.mid", "-o", "\(dir)/whole.flac", "-r", "8000", "--max-gap", "0",
                                      "--no-limit", "--max-duration", "20", "--soundfont", Self.timGM])
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(whole.stdout.contains("piece 120:01.0"), "\(whole.stdout)")
        #expect(!whole.stderr.contains("--max-gap"))
    }

    @Test func twentyHourGap_withMaxDuration_isCut_andSaysSo() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.write(Self.smf(gap: 72_000), "\(dir)/gap.mid")
        let r = try CLI.carillon(["render", "\(dir)/gap.mid", "-o", "\(dir)/gap.wav", "--max-duration", "120", "--max-gap", "0",
                                  "--no-limit", "--soundfont", Self.timGM, "--manifest", "\(dir)/m.jsonl"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("carillon: warning: \(dir)/gap.mid: stopped at --max-duration 120.0 s, "), "\(r.stderr)")
        let line = try #require(try Self.manifest("\(dir)/m.jsonl").first)
        #expect(line["truncated"] as? Bool == true)
        #expect(line["rendered_seconds"] as? Double == 120)
        #expect((line["piece_seconds"] as? Double).map { $0 > 72_000 } == true)
        #expect((line["limits"] as? [String])?.first == "stopped at --max-duration 120.0 s")
        // Without --no-limit, two notes 20 hours apart are a piece that thins out: it ends after the first.
        let thin = try CLI.carillon(["render", "\(dir)/gap.mid", "-o", "\(dir)/thin.wav", "--max-gap", "0",
                                     "--soundfont", Self.timGM, "--manifest", "\(dir)/m.jsonl"])
        #expect(thin.status == 0, "\(thin.stderr)")
        #expect(thin.stderr.contains("gap.mid: the piece thins out after the note at 0.0 s (0 notes in the 600 s after it): "
                                     + "ended there as damage, 1200:00.5 left out (--no-limit renders it as the file says)"), "\(thin.stderr)")
        let thinLine = try #require(try Self.manifest("\(dir)/m.jsonl").last)
        #expect((thinLine["limit_seconds_cut"] as? Double).map { abs($0 - 72_000.5) < 0.01 } == true)
        #expect((thinLine["piece_seconds"] as? Double).map { abs($0 - 0.5) < 0.01 } == true)
    }

    /// Integrated loudness and true peak of a file by ffmpeg's own ebur128 filter.
    static func ffmpegLoudness(_ path: String) throws -> (integrated: Double, truePeak: Double) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        p.arguments = ["-hide_banner", "-nostats", "-i", path, "-af", "ebur128=peak=true", "-f", "null", "-"]
        let err = Pipe()
        p.standardError = err; p.standardOutput = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        let summary = try #require(text.range(of: "Summary:")).upperBound
        func value(after label: String) throws -> Double {
            let at = try #require(text[summary...].range(of: label)).upperBound
            let field = text[at...].drop(while: { $0 == " " }).prefix(while: { $0 != " " && $0 != "\n" })
            return try #require(Double(field))
        }
        return (try value(after: "I:"), try value(after: "Peak:"))
    }

    @Test(arguments: [-23.0, -14.0])
    func normalize_reachesTheTarget_asMeasuredByFFmpeg(target: Double) throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try CLI.carillon(["render", "\(Self.openmsx)/coconut_run2.mid", "\(Self.openmsx)/train_filled_with_cash.mid",
                                  "--output-dir", dir, "--normalize", "\(target)", "--true-peak", "-1", "--bits", "24",
                                  "--manifest", "\(dir)/m.jsonl", "--soundfont", Self.timGM, "-q"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(CLI.contents(dir) == ["coconut_run2.manifest.json", "coconut_run2.wav", "m.jsonl",
                                      "train_filled_with_cash.manifest.json", "train_filled_with_cash.wav"])   // no scratch left
        for line in try Self.manifest("\(dir)/m.jsonl") {
            let measured = try Self.ffmpegLoudness(line["output"] as! String)
            let before = try #require(line["loudness_lufs"] as? Double)
            let after = try #require(line["normalized_lufs"] as? Double)
            let gain = try #require(line["gain_db"] as? Double)
            #expect(abs(before + gain - after) < 0.5)
            #expect(abs(measured.integrated - after) < 0.5, "ffmpeg \(measured.integrated), manifest \(after)")
            #expect(measured.truePeak <= -1 + 0.5)
            if gain == target - before {   // the true-peak ceiling did not stop the gain
                #expect(abs(measured.integrated - target) < 0.5, "ffmpeg \(measured.integrated) LUFS")
            }
        }
        if target == -23 {   // these files reach −23 without touching the ceiling
            for line in try Self.manifest("\(dir)/m.jsonl") {
                #expect(abs(try Self.ffmpegLoudness(line["output"] as! String).integrated - -23) < 0.5)
            }
        }
    }

    /// The gap is cut to --max-gap before the render (the work is bounded by what is rendered,
    /// not by the file's half hour; speed itself is for the benchmarks), and the loudness is on target.
    @Test func normalize_withAHalfHourGap_rendersTheCutPiece_andOnTarget() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.write(Self.smf(gap: 1800), "\(dir)/gap.mid")
        let r = try CLI.carillon(["render", "\(dir)/gap.mid", "-o", "\(dir)/gap.flac", "-r", "8000", "--normalize", "-23",
                                  "--manifest", "\(dir)/m.jsonl", "--soundfont", Self.timGM, "-q"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(CLI.contents(dir) == ["gap.flac", "gap.manifest.json", "gap.mid", "m.jsonl"])   // the sparse scratch file is gone
        let rendered = try #require(try Self.manifest("\(dir)/m.jsonl").first?["rendered_seconds"] as? Double)
        #expect(rendered > 301 && rendered < 315, "\(rendered) s rendered")
        #expect(abs(try Self.ffmpegLoudness("\(dir)/gap.flac").integrated - -23) < 0.5)
    }

    @Test(arguments: [("SIGINT", SIGINT), ("SIGTERM", SIGTERM)])
    func interruptingABatch_leavesFinishedFilesComplete_andNoPartialFile(name: String, signal: Int32) throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // One long file and one short: workers take the largest file first, so with two jobs
        // the short file runs beside the long one instead of waiting for it.
        Self.write(Self.smf(gap: 0.2), "\(dir)/in/a-short.mid")
        try FileManager.default.copyItem(atPath: "\(Self.openmsx)/tttheme2.mid", toPath: "\(dir)/in/tttheme2.mid")
        let running = try CLI.start(["render", "\(dir)/in", "--output-dir", "\(dir)/out", "--jobs", "2",
                                     "--manifest", "\(dir)/m.jsonl", "--soundfont", Self.timGM, "--normalize", "-23"])
        // Wait until the short file is done and a long one is under way (its scratch file exists).
        var waited = 0
        while waited < 2400 {   // a minute at most, on a loaded machine
            let files = Self.tree("\(dir)/out")
            if files.contains("a-short.wav") && files.contains(where: { $0.hasPrefix(".") }) { break }
            usleep(25_000); waited += 1
        }
        kill(running.0.processIdentifier, signal)
        let r = CLI.finish(running)
        #expect(r.status == 128 + signal)
        #expect(r.stderr.contains("interrupted (\(name))"), "\(r.stderr)")
        #expect(r.stderr.contains("; not written: \(dir)/out/"), "\(r.stderr)")   // a long file was under way
        let files = Self.tree("\(dir)/out").filter { $0.hasSuffix(".wav") }
        #expect(files.contains("a-short.wav"))
        #expect(!Self.tree("\(dir)/out").contains(where: { $0.hasPrefix(".") }), "\(files)")   // no temporary or scratch file
        // Every output present is complete: it has a manifest line, and the manifest names nothing missing.
        let done = try Self.manifest("\(dir)/m.jsonl").map { ($0["output"] as! String).replacingOccurrences(of: "\(dir)/out/", with: "") }
        #expect(done.sorted() == files)
    }
}

extension Array where Element: Hashable {
    /// The elements in order, each once.
    func uniqued() -> [Element] {
        var seen: Set<Element> = []
        return filter { seen.insert($0).inserted }
    }
}
