import Engine
import Foundation
import OfflineRender
import Parameters
import SoundFile
import Testing
import Threads

/// `RenderJob` stems: a file per strip that sounds, each with its own reverb
/// and chorus, adding up to the mixdown; nothing left when interrupted.
@Suite(.serialized) struct StemsTests {
    func job(threads: Int) throws -> RenderJob {
        var options = RenderJob.Options()
        options.stems = true
        options.threads = threads
        options.maxDuration = 30
        return try RenderJob(soundFont: timGM, options: options)
    }

    /// The MIDI channels (0-based) with a note-on in the first 30 s of `file` (the renders' cut).
    func channelsPlayed(_ file: String) throws -> Set<Int> {
        let score = try Score(contentsOf: file)
        return Set(score.events.filter { $0.seconds < 30 && $0.message.isNoteOn }.map { $0.message.channel })
    }

    /// A real General MIDI file, reverb and chorus on, 32-bit float files:
    /// the stems' sum differs from the mixdown by float rounding only (each
    /// output sample is a sum of at most 18 strips below full scale: the bound
    /// 1e-6 is a few units in the last place).
    @Test(arguments: [1, 2])
    func stems_addUpToTheMixdown(threads: Int) throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = "\(openmsx)/train_filled_with_cash.mid"
        let summary = try job(threads: threads).render(input: input, to: .file("\(dir)/mix.wav", format: .wav, encoding: .float32, stems: RenderJob.StemFolder("\(dir)/stems")))
        let names = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/stems").sorted()
        let expected = try channelsPlayed(input).sorted().map { ParameterAddress.StripID.channel($0).fileStem() + ".wav" }
        #expect(names == expected)
        #expect(summary.stems.map { ($0 as NSString).lastPathComponent }.sorted() == expected)

        let mix = try AudioFileReader(path: "\(dir)/mix.wav")
        var sum = [Double](repeating: 0, count: mix.samples.count)
        for name in names {
            let stem = try AudioFileReader(path: "\(dir)/stems/\(name)")
            #expect(stem.frames == mix.frames && stem.sampleRate == mix.sampleRate, "\(name)")
            #expect(stem.samples.contains { $0 != 0 }, "\(name) sounds")
            for i in 0..<min(sum.count, stem.samples.count) { sum[i] += Double(stem.samples[i]) }
        }
        var worst = 0.0, peak: Float = 0
        for i in sum.indices {
            worst = max(worst, abs(sum[i] - Double(mix.samples[i])))
            peak = max(peak, abs(mix.samples[i]))
        }
        print("stems (\(names.count), threads \(threads)) vs mixdown: largest difference \(worst), mix peak \(peak)")
        #expect(peak > 0.1)
        #expect(worst < 1e-6)
    }

    /// A render cancelled part-way leaves no stem, no mixdown, no temporary file.
    @Test func interruptedRender_leavesNoStem() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cancel = CancellationFlag()
        #expect(throws: RenderJob.Failure.self) {
            _ = try job(threads: 1).render(input: "\(openmsx)/train_filled_with_cash.mid", to: .file("\(dir)/mix.wav", format: .flac, encoding: nil, stems: RenderJob.StemFolder("\(dir)/stems")),
                                           cancel: cancel, progress: { p in if p.rendered > 5 { cancel.set() } })
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/stems") == [])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["stems"])
    }
}
