import AudioCompare
import Testing
import Foundation
import OfflineRender
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
        let summary = try job.render(input: input, to: .file(ours, format: .wav, encoding: .float32))
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

    /// Strings with chorus, in phrases with rests between them: the chorus's
    /// LFO runs through the rests as in FluidSynth's own player (a render that
    /// skipped the rests brought the chorus back out of phase), and a split
    /// render sounds like one synth.
    static func phrasesWithRests(_ path: String) {
        func vlq(_ n: Int) -> [UInt8] {
            var out = [UInt8(n & 0x7F)], n = n >> 7
            while n > 0 { out.insert(UInt8(n & 0x7F) | 0x80, at: 0); n >>= 7 }
            return out
        }
        var t: [UInt8] = vlq(0) + [0xC0, 48] + vlq(0) + [0xB0, 93, 127] + vlq(0) + [0xB0, 91, 30]
        for phrase in 0..<6 {
            let root = UInt8(48 + 2 * phrase)
            t += vlq(0) + [0x90, root, 90] + vlq(0) + [0x90, root + 7, 80] + vlq(0) + [0x90, root + 16, 85]
            t += vlq(1920) + [0x80, root, 0] + vlq(0) + [0x80, root + 7, 0] + vlq(0) + [0x80, root + 16, 0]
            t += vlq(0) + [0x90, root + 12, 70] + vlq(960) + [0x80, root + 12, 0]
            t += vlq(480 * 7)   // a rest of 3.5 s at 120 bpm: reverb and chorus tails die away
            t += [0xB0, 1, UInt8(phrase * 10)]
        }
        t += vlq(0) + [0xFF, 0x2F, 0]
        func be(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8((v >> (8 * (n - 1 - $0))) & 0xFF) } }
        FileManager.default.createFile(atPath: path, contents: Data(
            Array("MThd".utf8) + be(6, 4) + be(0, 2) + be(1, 2) + be(480, 2) + Array("MTrk".utf8) + be(t.count, 4) + t))
    }

    @Test func restsWithChorus_renderAsFluidSynthDoes_andAlikeOnOneOrTwoSynths() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = "\(dir)/phrases.mid"
        Self.phrasesWithRests(input)
        var renders: [AudioFileReader] = []
        for threads in [1, 2] {
            var options = RenderJob.Options()
            options.threads = threads
            let job = try RenderJob(soundFont: fluidR3, options: options)
            _ = try job.render(input: input, to: .file("\(dir)/t\(threads).wav", format: .wav, encoding: .float32))
            renders.append(try AudioFileReader(path: "\(dir)/t\(threads).wav"))
        }
        let theirs = "\(dir)/theirs.wav"
        #expect(try run("/usr/bin/fluidsynth", ["-ni", "-g", "0.2", "-r", "44100", "-o", "audio.file.format=float",
                                                "-F", theirs, fluidR3, input]) == 0)
        let b = try AudioFileReader(path: theirs)
        let windows = 6 * 6 * 100 - 10
        let reference = Array(envelope(renders[0], window: 441).prefix(windows))
        var best = -1.0
        for lag in stride(from: 0, through: 192, by: 32) {
            best = max(best, correlation(reference, Array(envelope(b, window: 441, skip: lag).prefix(windows))))
        }
        let split = correlation(reference, Array(envelope(renders[1], window: 441).prefix(windows)))
        let residual = SamplerPoolTests.residualDB(renders[0].samples, renders[1].samples)
        print("rests with chorus: envelope correlation with fluidsynth \(best), one vs two synths \(split), residual \(residual) dB")
        #expect(best > 0.99)
        #expect(split > 0.9999)
        // What remains is FluidSynth's 64-frame onset ramp from a voice slot's last gain (see SamplerPoolTests).
        #expect(residual < -40)
    }
}
