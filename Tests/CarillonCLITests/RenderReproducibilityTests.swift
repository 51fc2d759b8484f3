import Foundation
import Testing

/// A batch gives each file the bytes it has rendered alone: whatever `--jobs`,
/// the order of the inputs, or the shard it fell in. `--threads` is given:
/// it is one of the render's options (its default is the cores for one
/// file and 1 in a batch), and a split render differs from one synth's by
/// FluidSynth's onset ramp (see `SamplerPool`).
@Suite(.serialized) struct RenderReproducibilityTests {
    typealias CLI = RenderCommandTests
    static let files = ["ultimate_run.mid", "harp_harmony.mid", "careless_perc_redfarn.mid", "tttheme2.mid",
                        "city_blues_redfarn.mid", "wood_whistles.mid"]

    static func render(_ inputs: [String], into dir: String, _ extra: [String] = []) throws {
        let r = try CLI.carillon(["render"] + inputs.map { "\(CLI.openmsx)/\($0)" }
                                 + ["--output-dir", dir, "--soundfont", CLI.timGM, "--max-duration", "8", "--threads", "2", "-q"] + extra)
        #expect(r.status == 0, "\(r.stderr)")
    }

    static func outputs(_ dir: String) -> [String: Data] {
        var out: [String: Data] = [:]
        for name in CLI.contents(dir) { out[name] = FileManager.default.contents(atPath: "\(dir)/\(name)") }
        return out
    }

    @Test func batch_givesEachFileItsAloneBytes_whateverJobsOrderOrShard() throws {
        let dir = CLI.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for file in Self.files { try Self.render([file], into: "\(dir)/alone") }
        try Self.render(Self.files, into: "\(dir)/jobs1", ["--jobs", "1"])
        try Self.render(Self.files, into: "\(dir)/jobs2", ["--jobs", "2"])
        try Self.render(Self.files.reversed(), into: "\(dir)/reversed", ["--jobs", "2"])
        for k in 0..<3 { try Self.render(Self.files, into: "\(dir)/shards", ["--jobs", "2", "--shard", "\(k)/3"]) }
        let alone = Self.outputs("\(dir)/alone")
        #expect(alone.count == Self.files.count)
        #expect(alone.values.allSatisfy { $0.count > 8 * 44_100 * 4 })
        for run in ["jobs1", "jobs2", "reversed", "shards"] {
            let got = Self.outputs("\(dir)/\(run)")
            #expect(got.keys.sorted() == alone.keys.sorted(), "\(run)")
            for (name, data) in alone { #expect(got[name] == data, "\(run)/\(name) differs from its render alone") }
        }
    }
}
