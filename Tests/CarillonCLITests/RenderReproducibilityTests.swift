import AudioCompare
import Foundation
import SoundFile
import Testing

/// A batch gives each file the bytes it has rendered alone: whatever `--jobs`,
/// the order of the inputs, or the shard it fell in. `--threads` is given:
/// it is one of the render's options (its default is the cores for one
/// file and 1 in a batch), and a split render differs from one synth's by
/// FluidSynth's onset ramp (see `SamplerPool`). Bytes equal between runs
/// would pass if every run were equally wrong, so each file alone is also
/// compared with an independent render of it: the `fluidsynth` command line's.
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
        for file in Self.files {
            try Self.expectSoundsAsFluidSynth(file, ours: "\(dir)/alone/\(file.dropLast(4)).wav", dir: dir)
        }
        for run in ["jobs1", "jobs2", "reversed", "shards"] {
            let got = Self.outputs("\(dir)/\(run)")
            #expect(got.keys.sorted() == alone.keys.sorted(), "\(run)")
            for (name, data) in alone { #expect(got[name] == data, "\(run)/\(name) differs from its render alone") }
        }
    }

    /// `ours` (the first 8 s of `file`, rendered by Carillon) against `fluidsynth
    /// -F` of the whole file with the same font, gain and rate (reverb and chorus
    /// on in both): their 10 ms RMS envelopes over the 8 s correlate above 0.95
    /// at the best lag of 0…192 frames (fluidsynth's player sends each event
    /// at the first 64-frame block after its time, to sound in the next; Carillon
    /// applies it at the nearest block edge), and their peaks are within 20 %.
    static func expectSoundsAsFluidSynth(_ file: String, ours: String, dir: String) throws {
        let theirs = "\(dir)/fluidsynth-\(file).wav"
        let fluidsynth = Process()
        fluidsynth.executableURL = URL(fileURLWithPath: "/usr/bin/fluidsynth")
        fluidsynth.arguments = ["-ni", "-q", "-g", "0.2", "-r", "44100", "-F", theirs, CLI.timGM, "\(CLI.openmsx)/\(file)"]
        fluidsynth.standardOutput = FileHandle.nullDevice
        fluidsynth.standardError = FileHandle.nullDevice
        try fluidsynth.run()
        fluidsynth.waitUntilExit()
        #expect(fluidsynth.terminationStatus == 0, "fluidsynth on \(file)")
        let a = try AudioFileReader(path: ours), b = try AudioFileReader(path: theirs)
        #expect(a.sampleRate == 44_100 && b.sampleRate == 44_100 && a.channels == 2 && b.channels == 2)
        let window = 441, windows = 8 * 100 - 1
        let ea = Array(envelope(a, window: window).prefix(windows))
        #expect(ea.count == windows, "\(file): \(ea.count) windows")
        var best = -1.0
        for lag in stride(from: 0, through: 192, by: 32) {
            best = max(best, correlation(ea, Array(envelope(b, window: window, skip: lag).prefix(windows))))
        }
        let peak = { (f: AudioFileReader) in f.samples.prefix(2 * 8 * 44_100).map(abs).max() ?? 0 }
        let (peakA, peakB) = (peak(a), peak(b))
        #expect(best > 0.95, "\(file): envelope correlation with fluidsynth \(best)")
        #expect(peakB > 0 && abs(peakA - peakB) / peakB < 0.2, "\(file): peak \(peakA), fluidsynth's \(peakB)")
    }
}
