import OfflineRender
import RenderBatch
import Foundation
import Testing

@Suite struct BatchPlanTests {
    /// The batch's workers start with the largest inputs (the longest renders),
    /// ties and missing files keeping their place in the list.
    @Test func batchOrder_largestFileFirst_tiesInListOrder() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let sizes = [10, 300, 20, 300, 5000]
        var items: [BatchItem] = []
        for (i, size) in sizes.enumerated() {
            let path = "\(dir)/\(i).mid"
            try Data(repeating: 0, count: size).write(to: URL(fileURLWithPath: path))
            items.append(BatchItem(input: path, key: "\(i).mid", output: "\(dir)/\(i).wav"))
        }
        items.insert(BatchItem(input: "\(dir)/missing.mid", key: "missing.mid", output: "\(dir)/m.wav"), at: 2)
        #expect(BatchRenderer.largestFirst(items) == [5, 1, 4, 3, 0, 2])
    }

    @Test func fnv1a64_matchesTheReferenceValues() {
        // From the FNV reference test vectors.
        #expect(Shard.fnv1a64("") == 0xcbf2_9ce4_8422_2325)
        #expect(Shard.fnv1a64("a") == 0xaf63_dc4c_8601_ec8c)
        #expect(Shard.fnv1a64("foobar") == 0x8594_4171_f739_67e8)
    }

    @Test func shards_partitionTheKeys_whateverTheirOrder() {
        let keys = (0..<500).map { "corpus/\($0 % 7)/song\($0).mid" }
        let count = 4
        let shards = (0..<count).map { Shard(index: $0, count: count)! }
        for key in keys { #expect(shards.filter { $0.contains(key: key) }.count == 1) }
        let sizes = shards.map { s in keys.filter { s.contains(key: $0) }.count }
        #expect(sizes.allSatisfy { $0 > 80 })   // roughly even: 125 each
        let reordered = keys.shuffled()
        for s in shards { #expect(Set(keys.filter { s.contains(key: $0) }) == Set(reordered.filter { s.contains(key: $0) })) }
    }

    @Test func shardParsing_acceptsKOfN_only() {
        #expect(Shard(parsing: "0/4") == Shard(index: 0, count: 4))
        #expect(Shard(parsing: "3/4") != nil)
        for bad in ["4/4", "-1/4", "1/0", "1", "a/b", "1/2/3", ""] { #expect(Shard(parsing: bad) == nil, "\(bad)") }
    }

    @Test func items_mirrorTheKey_replaceTheExtension_andRefuseTwoInputsForOneOutput() throws {
        let items = try BatchPlan.items([("/c/a.mid", "a.mid"), ("/c/sub/b.MIDI", "sub/b.MIDI"), ("/d/v1.2/x", "v1.2/x")],
                                        directory: "out", fileExtension: "flac")
        #expect(items.map(\.output) == ["out/a.flac", "out/sub/b.flac", "out/v1.2/x.flac"])
        #expect(throws: BatchPlanError.sameOutput(output: "out/a.flac", first: "/c/a.mid", second: "/e/a.kar")) {
            _ = try BatchPlan.items([("/c/a.mid", "a.mid"), ("/e/a.kar", "a.kar")], directory: "out", fileExtension: "flac")
        }
    }

    @Test func gather_walksAFolder_forMIDINamesInAnyCase_inSortedOrder() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeFiles(dir, ["b.MID", "a.midi", "sub/c.Kar", "sub/deep/d.rmi", "e.txt", "sub/.hidden/f.wav"])
        let found = try BatchPlan.gather([dir + "/"])
        #expect(found.map(\.key) == ["a.midi", "b.MID", "sub/c.Kar", "sub/deep/d.rmi"])
        #expect(found.map(\.input).first == "\(dir)/a.midi")
        #expect(try BatchPlan.gather(["\(dir)/e.txt"]).map(\.key) == ["e.txt"])   // a file named directly is taken as is
        #expect(throws: BatchPlanError.self) { _ = try BatchPlan.gather(["\(dir)/missing"]) }
    }

    /// The shard key and the output layout come from one root: a folder walked
    /// and its files listed (in any order, relative or absolute) key alike.
    @Test func gather_aFolderWalkedAndItsFilesListed_haveTheSameKeys() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeFiles(dir, ["corpus/a.mid", "corpus/x/song.mid", "corpus/y/song.mid", "corpus/y/z/b.kar"])
        let walked = try BatchPlan.gather(["\(dir)/corpus"])
        #expect(walked.map(\.key) == ["a.mid", "x/song.mid", "y/song.mid", "y/z/b.kar"])
        let listed = walked.map(\.input).reversed().map { $0 }
        // No --input-root: the files' common folder is the corpus (a.mid is in it).
        #expect(Set(try BatchPlan.gather(listed).map(\.key)) == Set(walked.map(\.key)))
        #expect(Set(try BatchPlan.gather(listed, root: "\(dir)/corpus/").map(\.key)) == Set(walked.map(\.key)))
        // The same files named relative to the current folder, through `..` and `.`.
        let up = String(repeating: "../", count: FileManager.default.currentDirectoryPath.split(separator: "/").count)
        let relative = listed.map { up + "./" + $0.dropFirst() }
        let keyed = try BatchPlan.gather(relative, root: "\(dir)//corpus/.")
        #expect(Set(keyed.map(\.key)) == Set(walked.map(\.key)))
        #expect(keyed.map(\.input) == relative)   // read from the paths as given
        // Walking the root from a folder within: the same keys again.
        #expect(try BatchPlan.gather(["\(dir)/corpus/y"], root: "\(dir)/corpus").map(\.key) == ["y/song.mid", "y/z/b.kar"])
    }

    /// Without --input-root the root is the deepest folder holding every name:
    /// a folder name counts as itself, a file name as its folder.
    @Test func gather_withoutARoot_keysFromTheDeepestFolderHoldingEveryName() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeFiles(dir, ["c/a.mid", "c/x/song.mid", "c/y/song.mid", "c/y/z/b.kar"])
        // Files only: their common parent folder (all in c/y/: keys below it).
        #expect(try BatchPlan.gather(["\(dir)/c/y/song.mid", "\(dir)/c/y/z/b.kar"]).map(\.key) == ["song.mid", "z/b.kar"])
        // A folder and a file beside it: their common folder c, as if c were walked.
        #expect(try BatchPlan.gather(["\(dir)/c/y", "\(dir)/c/a.mid"]).map(\.key) == ["y/song.mid", "y/z/b.kar", "a.mid"])
        // Two folders: their parent, so equal names in them stay apart.
        #expect(try BatchPlan.gather(["\(dir)/c/x", "\(dir)/c/y/"]).map(\.key) == ["x/song.mid", "y/song.mid", "y/z/b.kar"])
        // A file reached twice (walked and named) is taken once.
        #expect(try BatchPlan.gather(["\(dir)/c/x", "\(dir)/c/x/song.mid"]).map(\.key) == ["song.mid"])
    }

    @Test func gather_aNameOutsideTheInputRoot_isAnError() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeFiles(dir, ["c/a.mid", "d/b.mid"])
        #expect(throws: BatchPlanError.outsideRoot(path: "\(dir)/d/b.mid", root: "\(dir)/c")) {
            _ = try BatchPlan.gather(["\(dir)/c/a.mid", "\(dir)/d/b.mid"], root: "\(dir)/c")
        }
        #expect(throws: BatchPlanError.outsideRoot(path: "\(dir)/d", root: "\(dir)/c")) {
            _ = try BatchPlan.gather(["\(dir)/d"], root: "\(dir)/c")
        }
        #expect(throws: BatchPlanError.rootIsNotAFolder(path: "\(dir)/c/a.mid")) {
            _ = try BatchPlan.gather(["\(dir)/c/a.mid"], root: "\(dir)/c/a.mid")
        }
    }

    /// Listed files are laid out as walked ones: their folders mirrored, for
    /// the mixdown and the stems, so equal names in different folders coexist.
    @Test func items_ofAList_mirrorItsFolders_forOutputsAndStems() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeFiles(dir, ["c/x/song.mid", "c/y/song.mid", "c/a.mid"])
        let found = try BatchPlan.gather(["\(dir)/c/x/song.mid", "\(dir)/c/y/song.mid", "\(dir)/c/a.mid"])
        let items = try BatchPlan.items(found, directory: "out", fileExtension: "wav", stems: "st")
        #expect(items.map(\.output) == ["out/x/song.wav", "out/y/song.wav", "out/a.wav"])
        #expect(items.map(\.stems) == ["st/x/song", "st/y/song", "st/a"])
        let walked = try BatchPlan.items(try BatchPlan.gather(["\(dir)/c"]), directory: "out", fileExtension: "wav", stems: "st")
        #expect(Set(walked.map(\.output)) == Set(items.map(\.output)) && Set(walked.map(\.stems)) == Set(items.map(\.stems)))
    }

    func makeFiles(_ dir: String, _ names: [String]) throws {
        for name in names {
            let path = "\(dir)/\(name)"
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: path, contents: Data())
        }
    }

    @Test func listLines_skipBlanksCommentsAndCarriageReturns() {
        #expect(BatchPlan.listLines("a.mid\r\n\n  # note\n b c.mid \n#x\nd.mid") == ["a.mid", "b c.mid", "d.mid"])
    }

    @Test func manifestLine_escapesText_andWritesNullForMissingOrInfiniteValues() {
        var e = ManifestEntry(input: "in \"q\".mid", output: "o\\x.wav", status: .failed, carillonVersion: "1",
                              soundFont: "f.sf2", soundFontBytes: 3)
        e.error = "bad\nline"
        e.loudness = -.infinity
        e.duration = 1.5
        let line = e.jsonLine
        // Every field, keys sorted; absent and infinite numbers null.
        #expect(line == #"{"carillon_version":"1","clipped_samples":null,"dead_air_seconds":null,"error":"bad\nline","gain_db":null,"#
                + #""gaps_cut":null,"input":"in \"q\".mid","limit_seconds_cut":null,"limits":null,"loudness_lufs":null,"#
                + #""normalized_lufs":null,"output":"o\\x.wav","peak_dbfs":null,"#
                + #""piece_seconds":null,"render_seconds":null,"rendered_seconds":1.5,"seconds_cut":null,"soundfont":"f.sf2","#
                + #""soundfont_bytes":3,"status":"failed","true_peak_dbtp":null,"truncated":false,"warnings":null}"#)
        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object?["soundfont_bytes"] as? Int == 3)
    }
}
