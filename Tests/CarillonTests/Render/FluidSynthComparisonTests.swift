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

        // 10 ms RMS envelopes over the piece. fluidsynth's player sends each
        // event at the first 64-frame block after its time, to sound in the
        // block after that (1-3 ms late); Carillon applies it at the nearest
        // block edge (onset test). So the best of lags 0...192 frames counts.
        let window = 441
        let pieceWindows = Int(summary.pieceDuration * 100) - 1
        let ea = Array(envelope(a, window: window).prefix(pieceWindows))
        var best = (r: -1.0, lag: 0)
        for lag in stride(from: 0, through: 192, by: 32) {
            let r = correlation(ea, Array(envelope(b, window: window, skip: lag).prefix(pieceWindows)))
            if r > best.r { best = (r, lag) }
        }
        let r = best.r
        let peakA = a.samples.map(abs).max() ?? 0, peakB = b.samples.map(abs).max() ?? 0
        print("comparison \(file): piece \(summary.pieceDuration) s, carillon \(a.duration) s, fluidsynth \(b.duration) s, "
              + "10 ms RMS envelope correlation \(r) (fluidsynth \(best.lag) frames later), peak \(peakA) vs \(peakB)")
        #expect(r > 0.95)
        #expect(abs(peakA - peakB) / peakB < 0.2)
    }
}
