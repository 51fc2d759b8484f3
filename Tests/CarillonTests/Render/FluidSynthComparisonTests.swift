import Testing
import Foundation
import Carillon
import Engine
import SoundFile

/// Renders real General MIDI files (openttd-openmsx) with Carillon and with the
/// `fluidsynth` command line, same font and settings, and compares the audio.
@Suite(.serialized) struct FluidSynthComparisonTests {
    static let files = ["train_filled_with_cash.mid", "ultimate_run.mid"]

    @Test(arguments: files)
    func render_matchesFluidSynthCommandLine(file: String) throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = "\(openmsx)/\(file)"
        let ours = "\(dir)/ours.wav", theirs = "\(dir)/theirs.wav"

        let job = try RenderJob(soundFont: timGM)   // gain 0.2, reverb and chorus on: fluidsynth's defaults
        let summary = try job.render(input: input, output: ours, format: .wav, encoding: .float32)
        let status = try run("/usr/bin/fluidsynth", ["-ni", "-g", "0.2", "-r", "44100", "-o", "audio.file.format=float",
                                                     "-F", theirs, timGM, input])
        #expect(status == 0)

        let a = try AudioFileReader(path: ours), b = try AudioFileReader(path: theirs)
        #expect(a.sampleRate == b.sampleRate && a.channels == b.channels)
        // Both cover the whole piece; beyond it, each has its own tail policy.
        #expect(a.duration >= summary.pieceDuration)
        #expect(b.duration >= summary.pieceDuration - 0.1)
        #expect(a.duration <= summary.pieceDuration + TailPolicy.default.maxTail + 0.05)

        let window = 441   // 10 ms
        let ea = envelope(a, window: window), eb = envelope(b, window: window)
        let pieceWindows = Int(summary.pieceDuration * 100)
        let r = correlation(Array(ea.prefix(pieceWindows)), Array(eb.prefix(pieceWindows)))
        let peakA = a.samples.map(abs).max() ?? 0, peakB = b.samples.map(abs).max() ?? 0
        print("comparison \(file): piece \(summary.pieceDuration) s, carillon \(a.duration) s, fluidsynth \(b.duration) s, "
              + "10 ms RMS envelope correlation \(r), peak \(peakA) vs \(peakB)")
        #expect(r > 0.95)
        #expect(abs(peakA - peakB) / peakB < 0.2)
    }
}
