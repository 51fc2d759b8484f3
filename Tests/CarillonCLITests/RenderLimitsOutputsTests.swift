import Foundation
import Testing

/// A piece a damage limit cuts: the manifest, the labels and the stems all
/// describe the render as it was played (issue 38).
@Suite struct RenderLimitsOutputsTests {
    typealias CLI = RenderCommandTests

    /// 480 PPQN: an eighth-note beat for 40 bars at 120 BPM, bars 10–21 crawling at 10 BPM (6 s a quarter).
    static func crawl() -> Data {
        func vlq(_ n: Int) -> [UInt8] {
            var out = [UInt8(n & 0x7F)], n = n >> 7
            while n > 0 { out.insert(UInt8(n & 0x7F) | 0x80, at: 0); n >>= 7 }
            return out
        }
        func tempo(_ us: Int) -> [UInt8] { [0xFF, 0x51, 3, UInt8(us >> 16), UInt8((us >> 8) & 0xFF), UInt8(us & 0xFF)] }
        var track: [UInt8] = vlq(0) + tempo(500_000) + vlq(0) + [0xC0, 0]
        for k in 0..<320 {
            if k == 80 { track += vlq(0) + tempo(6_000_000) }
            if k == 176 { track += vlq(0) + tempo(500_000) }
            let key: UInt8 = k % 2 == 0 ? 60 : 64
            track += vlq(0) + [0x90, key, 100] + vlq(120) + [0x80, key, 0] + vlq(120) + [0xB0, 1, 0]
        }
        track += vlq(0) + [0xFF, 0x2F, 0]
        func be(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8((v >> (8 * (n - 1 - $0))) & 0xFF) } }
        return Data(Array("MThd".utf8) + be(6, 4) + be(0, 2) + be(1, 2) + be(480, 2) + Array("MTrk".utf8) + be(track.count, 4) + track)
    }

    @Test func aCrawlPlayedAtTheTempoAround_manifestLabelsAndStemsAgree() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        RenderBatchTests.write(Self.crawl(), "\(dir)/in/crawl.mid")
        let r = try CLI.carillon(["render", "\(dir)/in", "--output-dir", "\(dir)/out", "--labels", "--stems", "\(dir)/stems",
                                  "--manifest", "\(dir)/m.jsonl", "--soundfont", CLI.timGM, "-r", "8000", "-q"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("crawl.mid: 1 tempo that stretches the music out of shape (10.00 BPM at 20.0 s) played at the tempo around it"),
                "\(r.stderr)")
        let line = try #require(try RenderBatchTests.manifest("\(dir)/m.jsonl").first)
        // 160 quarters at 120 BPM, to the last event (a controller an eighth after the last note-on).
        let piece = try #require(line["piece_seconds"] as? Double), rendered = try #require(line["rendered_seconds"] as? Double)
        #expect(abs(piece - 80) < 1e-3, "\(piece)")
        #expect((line["limit_seconds_cut"] as? Double).map { abs($0 - 48 * 5.5) < 1e-3 } == true, "\(line)")
        #expect((line["limits"] as? [String])?.count == 1)
        // The labels: every note where it sounded, the tempo map as played.
        let notes = try String(contentsOfFile: "\(dir)/out/crawl.notes.csv", encoding: .utf8).split(separator: "\n").dropFirst()
        let onsets = notes.map { Double($0.split(separator: ",")[0])! }
        // (On the render's 64-frame grid: within half a block, 4 ms at 8 kHz, of the file's time.)
        #expect(onsets.count == 320 && onsets.enumerated().allSatisfy { abs($0.element - Double($0.offset) * 0.25) <= 0.0041 })
        let tempo = try String(contentsOfFile: "\(dir)/out/crawl.tempo.csv", encoding: .utf8).split(separator: "\n")
        #expect(tempo.count == 2 && tempo[1].hasSuffix(",120.0"), "\(tempo)")
        // The stems: as long as the mixdown.
        let mix = try FileManager.default.attributesOfItem(atPath: "\(dir)/out/crawl.wav")[.size] as? Int
        let stems = RenderBatchTests.tree("\(dir)/stems")
        #expect(!stems.isEmpty)
        for stem in stems { #expect(try FileManager.default.attributesOfItem(atPath: "\(dir)/stems/\(stem)")[.size] as? Int == mix, "\(stem)") }
        #expect(rendered >= piece)
    }
}
