import Carillon
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

    @Test func expand_walksAFolder_forMIDINamesInAnyCase_inSortedOrder() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["b.MID", "a.midi", "sub/c.Kar", "sub/deep/d.rmi", "e.txt", "sub/.hidden/f.wav"] {
            let path = "\(dir)/\(name)"
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: path, contents: Data())
        }
        let found = try BatchPlan.expand(dir + "/")
        #expect(found.map(\.key) == ["a.midi", "b.MID", "sub/c.Kar", "sub/deep/d.rmi"])
        #expect(found.map(\.input).first == "\(dir)/a.midi")
        #expect(try BatchPlan.expand("\(dir)/e.txt").map(\.key) == ["e.txt"])   // a file named directly is taken as is
        #expect(throws: BatchPlanError.self) { _ = try BatchPlan.expand("\(dir)/missing") }
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
        #expect(line.hasPrefix(#"{"input":"in \"q\".mid","output":"o\\x.wav","status":"failed","error":"bad\nline","#))
        #expect(line.contains(#""loudness_lufs":null"#) && line.contains(#""rendered_seconds":1.5"#))
        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        #expect(object?["soundfont_bytes"] as? Int == 3)
    }
}
