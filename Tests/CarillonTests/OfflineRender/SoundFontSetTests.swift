import OfflineRender
import RenderBatch
import Foundation
import Testing

/// `--soundfont` repeated and `--soundfont-pick`: which font renders which
/// input, and what each rendering is called.
@Suite struct SoundFontSetTests {
    static let fonts = ["/f/FluidR3_GM.sf2", "/f/TimGM6mb.sf2"]

    /// Keys as a corpus has them: the Lakh MIDI dataset's layout (a folder per
    /// first hex digit of the file's MD5, the MD5 as its name), from a fixed
    /// generator so every run draws the same.
    static func lakhKeys(_ count: Int) -> [String] {
        var state: UInt64 = 0x9e37_79b9_7f4a_7c15
        func next() -> UInt64 { state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407; return state }
        return (0..<count).map { _ in
            let hex = String(format: "%016llx%016llx", next(), next())
            return "\(hex.first!)/\(hex).mid"
        }
    }

    /// The openmsx package's file names: real keys no one here chose.
    static func openmsxKeys() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/usr/share/games/openttd/baseset/openmsx")
            .filter { $0.hasSuffix(".mid") }.sorted()
    }

    static func items(_ keys: [String]) -> [BatchItem] {
        keys.map { BatchItem(input: "/corpus/\($0)", key: $0, output: "/out/\($0.dropLast(4)).wav") }
    }

    /// Font by input, as the renderings say.
    static func fontByInput(_ renderings: [BatchItem]) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: renderings.map { ($0.input, $0.soundFont) })
    }

    @Test func hashPick_isTheSameForAFile_whateverTheListsOrder() throws {
        let set = try SoundFontSet(paths: Self.fonts + ["/g/Other.sf2"])
        let items = Self.items(Self.lakhKeys(300) + (try Self.openmsxKeys()))
        let forward = try set.renderings(of: items)
        #expect(forward.map(\.output) == items.map(\.output))   // names as with one font
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3 {
            #expect(Self.fontByInput(try set.renderings(of: items.shuffled(using: &generator))) == Self.fontByInput(forward))
        }
        #expect(Self.fontByInput(try set.renderings(of: Array(items.reversed()))) == Self.fontByInput(forward))
    }

    /// The shards' renderings together are the unsharded batch's, each file
    /// with the same font.
    @Test(arguments: [2, 3, 4])
    func hashPick_unionOfShards_isTheUnshardedBatch_fontForFont(shards: Int) throws {
        let set = try SoundFontSet(paths: Self.fonts)
        let items = Self.items(Self.lakhKeys(200))
        let whole = Self.fontByInput(try set.renderings(of: items))
        var union: [String: Int] = [:]
        for k in 0..<shards {
            let shard = try #require(Shard(index: k, count: shards))
            // A shard's list in another order.
            for r in try set.renderings(of: items.filter { shard.contains(key: $0.key) }.reversed()) {
                #expect(union.updateValue(r.soundFont, forKey: r.input) == nil, "\(r.input) in two shards")
            }
        }
        #expect(union == whole)
    }

    /// The font is drawn independently of the shard: with N shards and M
    /// fonts, each (shard, font) pair holds about 1/(N·M) of the files. (A
    /// plain salt on FNV-1a would not do: its low bits follow the key's bytes'
    /// low bits alike for any salt, and 2 shards × 2 fonts would give each
    /// shard one font only.)
    @Test(arguments: [(2, 2), (4, 2), (2, 4), (3, 3), (4, 4)])
    func hashPick_isIndependentOfTheShard(shards: Int, fonts: Int) throws {
        let keys = Self.lakhKeys(2000)
        var cells = [[Int]](repeating: [Int](repeating: 0, count: fonts), count: shards)
        for key in keys {
            let shard = try #require((0..<shards).first { Shard(index: $0, count: shards)!.contains(key: key) })
            cells[shard][SoundFontSet.pickIndex(key: key, count: fonts)] += 1
        }
        let expected = Double(keys.count) / Double(shards * fonts)
        for (s, row) in cells.enumerated() {
            for (f, n) in row.enumerated() {
                #expect(abs(Double(n) - expected) < 0.3 * expected, "shard \(s), font \(f): \(n) files, about \(Int(expected)) expected; \(cells)")
            }
        }
    }

    /// Real file names spread over the fonts, not all to one.
    @Test func hashPick_spreadsRealFileNamesOverTheFonts() throws {
        let keys = try Self.openmsxKeys()
        #expect(keys.count >= 30)
        for count in [2, 3] {
            var counts = [Int](repeating: 0, count: count)
            for key in keys { counts[SoundFontSet.pickIndex(key: key, count: count)] += 1 }
            #expect(counts.allSatisfy { $0 >= keys.count / (2 * count) }, "\(count) fonts: \(counts) of \(keys.count)")
        }
        var lakh = [0, 0]
        for key in Self.lakhKeys(1000) { lakh[SoundFontSet.pickIndex(key: key, count: 2)] += 1 }
        #expect(lakh.allSatisfy { $0 > 450 }, "\(lakh)")
    }

    /// The draw is pinned: a change would give a corpus rendered before
    /// other fonts on a rerun (and its shards other fonts than the rest).
    @Test func hashPick_isTheSameFromReleaseToRelease() {
        let keys = ["a.mid", "sub/b.mid", "0/0a1b2c3d.mid", "coconut_run2.mid", "rock/song1.mid", "é/ü.kar"]
        // Worked out apart from this code, in Python, from FNV-1a and MurmurHash3's fmix64 as published.
        #expect(keys.map { SoundFontSet.pickIndex(key: $0, count: 2) } == [0, 1, 1, 1, 1, 1])
        #expect(keys.map { SoundFontSet.pickIndex(key: $0, count: 5) } == [2, 3, 2, 1, 1, 1])
    }

    @Test func oneFont_changesNothing() throws {
        let items = Self.items(["a.mid", "sub/b.mid"]).map { var i = $0; i.stems = "/stems/\($0.key.dropLast(4))"; return i }
        #expect(try SoundFontSet(paths: ["/f/TimGM6mb.sf2"]).renderings(of: items) == items)
    }

    @Test func allPick_namesEveryRenderingAfterItsFont() throws {
        let set = try SoundFontSet(paths: Self.fonts + ["/g/My Font (v2).sf3"], pick: .all)
        let items = [BatchItem(input: "/c/sub/b.mid", key: "sub/b.mid", output: "/out/sub/b.flac", stems: "/stems/sub/b"),
                     BatchItem(input: "/c/v1.2/x", key: "v1.2/x", output: "/out/v1.2/x.flac")]
        let r = try set.renderings(of: items)
        #expect(r.map(\.output) == ["/out/sub/b.FluidR3_GM.flac", "/out/sub/b.TimGM6mb.flac", "/out/sub/b.My_Font__v2_.flac",
                                    "/out/v1.2/x.FluidR3_GM.flac", "/out/v1.2/x.TimGM6mb.flac", "/out/v1.2/x.My_Font__v2_.flac"])
        #expect(r.map(\.soundFont) == [0, 1, 2, 0, 1, 2])
        #expect(r.map(\.stems) == ["/stems/sub/b.FluidR3_GM", "/stems/sub/b.TimGM6mb", "/stems/sub/b.My_Font__v2_", nil, nil, nil])
        #expect(Set(r.map(\.key)) == ["sub/b.mid", "v1.2/x"])   // a rendering keeps its input's key (and shard)
        // One file named (-o, or one MIDI file): its stems go into the --stems folder, a folder per font.
        let one = try set.renderings(of: [BatchItem(input: "s.mid", key: "s.mid", output: "song", stems: "st/")],
                                     stemsInTheirOwnFolder: true)
        #expect(one.map(\.output) == ["song.FluidR3_GM", "song.TimGM6mb", "song.My_Font__v2_"])
        #expect(one.map(\.stems) == ["st/FluidR3_GM", "st/TimGM6mb", "st/My_Font__v2_"])
    }

    /// Names with dots can meet: `a.x` with font `y` and `a` with font `x.y`.
    @Test func allPick_twoRenderingsWithOneOutput_areRefused() throws {
        let set = try SoundFontSet(paths: ["/f/y.sf2", "/f/x.y.sf2"], pick: .all)
        let items = [BatchItem(input: "/c/a.x.mid", key: "a.x.mid", output: "o/a.x.wav"), BatchItem(input: "/c/a.mid", key: "a.mid", output: "o/a.wav")]
        #expect(throws: BatchPlanError.sameOutput(output: "o/a.x.y.wav", first: "/c/a.x.mid", second: "/c/a.mid")) {
            _ = try set.renderings(of: items)
        }
    }

    @Test func fontsWithOneName_areRefused_whateverThePick() {
        for pick in SoundFontSet.Pick.allCases {
            #expect(throws: SoundFontSetError.givenTwice(path: "/f/a.sf2")) { _ = try SoundFontSet(paths: ["/f/a.sf2", "/f/a.sf2"], pick: pick) }
            #expect(throws: SoundFontSetError.sameName(name: "A", first: "/f/a.sf2", second: "/g/A.sf3")) {
                _ = try SoundFontSet(paths: ["/f/a.sf2", "/g/A.sf3"], pick: pick)
            }
        }
        let message = SoundFontSetError.sameName(name: "a", first: "/f/a.sf2", second: "/g/a.sf2").description
        #expect(message.contains("/f/a.sf2") && message.contains("/g/a.sf2") && !message.contains("\n"))
    }

    @Test func fontName_isTheFileNameWithoutExtension_madeSafe() {
        #expect(SoundFontSet.Font(path: "/usr/share/sounds/sf2/FluidR3_GM.sf2").name == "FluidR3_GM")
        #expect(SoundFontSet.Font(path: "fonts/Arachno SoundFont - Version 1.0.sf2").name == "Arachno_SoundFont_-_Version_1.0")
        #expect(SoundFontSet.Font(path: "a/b/Grand+Piano.v2.SF2").name == "Grand+Piano.v2")
        #expect(SoundFontSet.Font(path: "x/Orgue_Éolien.sf3").name == "Orgue_Éolien")
        #expect(SoundFontSet.Font(path: "x/noext").name == "noext")
        #expect(SoundFontSet.Font(path: "x/a;rm -rf.sf2").name == "a_rm_-rf")
        #expect(SoundFontSet.Font(path: "/f/TimGM6mb.sf2").fileName == "TimGM6mb.sf2")
    }
}
