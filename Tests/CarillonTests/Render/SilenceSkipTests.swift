import Carillon
import Foundation
import SoundFile
import Testing

/// Long silent gaps are written as zeros without running the synth, and the
/// file sounds the same as one rendered block by block.
@Suite struct SilenceSkipTests {
    /// A note, `gap` seconds of nothing, another note (480 PPQN at 120 bpm).
    static func gapFile(_ path: String, gap: Double) {
        func vlq(_ n: Int) -> [UInt8] {
            var out = [UInt8(n & 0x7F)], n = n >> 7
            while n > 0 { out.insert(UInt8(n & 0x7F) | 0x80, at: 0); n >>= 7 }
            return out
        }
        var t: [UInt8] = vlq(0) + [0xC0, 0] + vlq(0) + [0x90, 60, 100] + vlq(480) + [0x80, 60, 0]
        t += vlq(Int(gap * 960)) + [0x90, 67, 100] + vlq(480) + [0x80, 67, 0] + vlq(0) + [0xFF, 0x2F, 0]
        func be(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8((v >> (8 * (n - 1 - $0))) & 0xFF) } }
        FileManager.default.createFile(atPath: path, contents: Data(
            Array("MThd".utf8) + be(6, 4) + be(0, 2) + be(1, 2) + be(480, 2) + Array("MTrk".utf8) + be(t.count, 4) + t))
    }

    static func render(_ input: String, _ output: String, skipping: Bool, maxDuration: Double? = nil) throws -> (RenderJob.Summary, [Float]) {
        var options = RenderJob.Options()
        options.skipsSilence = skipping
        options.maxDuration = maxDuration
        // Chorus and reverb have their own LFOs (FluidSynth's reverb modulates its
        // delay lines), which do not advance through a skipped gap: off here, so
        // the two renders can be compared sample by sample.
        options.sampler.chorus = false
        options.sampler.reverb = false
        let job = try RenderJob(soundFont: timGM, options: options)
        let summary = try job.render(input: input, output: output, format: .wav, encoding: .float32)
        return (summary, try AudioFileReader(path: output).samples)
    }

    @Test func gap_isSkipped_andTheFileMatchesABlockByBlockRender() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.gapFile("\(dir)/gap.mid", gap: 60)
        let (fast, a) = try Self.render("\(dir)/gap.mid", "\(dir)/fast.wav", skipping: true)
        let (slow, b) = try Self.render("\(dir)/gap.mid", "\(dir)/slow.wav", skipping: false)
        #expect(fast.skippedSilence > 55 && fast.skippedSilence < 60)
        #expect(slow.skippedSilence == 0)
        // The tail's end is found block by block, and the blocks after a skip are aligned differently.
        #expect(abs(a.count - b.count) <= 2 * 512)
        // The second note starts on the same frame and sounds the same: the residual is far below the signal.
        var signal = 0.0, residual = 0.0
        for i in 0..<min(a.count, b.count) {
            signal += Double(b[i]) * Double(b[i])
            residual += Double(a[i] - b[i]) * Double(a[i] - b[i])
        }
        #expect(signal > 0)
        #expect(10 * log10(residual / signal) < -60, "residual \(10 * log10(residual / signal)) dB")
    }

    @Test func maxDuration_cutsTheRender_andSaysSo() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.gapFile("\(dir)/gap.mid", gap: 3600)
        let (s, samples) = try Self.render("\(dir)/gap.mid", "\(dir)/cut.wav", skipping: true, maxDuration: 12.5)
        #expect(s.truncated)
        #expect(samples.count == 2 * 551_250)   // 12.5 s at 44.1 kHz, to the frame
        Self.gapFile("\(dir)/short.mid", gap: 2)
        let (whole, _) = try Self.render("\(dir)/short.mid", "\(dir)/whole.wav", skipping: true, maxDuration: 60)
        #expect(!whole.truncated)
    }
}
