import OfflineRender
import Foundation
import SoundFile
import Testing

/// Damaged timing: a stretch with no event longer than `maxGap` (a corrupt
/// delta time) is cut to it, held notes included, so such files render in
/// seconds; `maxDuration` cuts a render outright.
@Suite struct DamagedTimingTests {
    /// A note, `gap` seconds of nothing, another note (480 PPQN at 120 bpm).
    /// With `held`, a pad note on channel 2 sounds from the start across the gap.
    static func gapFile(_ path: String, gap: Double, held: Bool = false) {
        func vlq(_ n: Int) -> [UInt8] {
            var out = [UInt8(n & 0x7F)], n = n >> 7
            while n > 0 { out.insert(UInt8(n & 0x7F) | 0x80, at: 0); n >>= 7 }
            return out
        }
        var t: [UInt8] = vlq(0) + [0xC0, 0] + vlq(0) + [0xC1, 89]
        if held { t += vlq(0) + [0x91, 48, 90] }
        t += vlq(0) + [0x90, 60, 100] + vlq(480) + [0x80, 60, 0]
        t += vlq(Int(gap * 960)) + [0x90, 67, 100] + vlq(480) + [0x80, 67, 0]
        if held { t += vlq(0) + [0x81, 48, 0] }
        t += vlq(0) + [0xFF, 0x2F, 0]
        func be(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8((v >> (8 * (n - 1 - $0))) & 0xFF) } }
        FileManager.default.createFile(atPath: path, contents: Data(
            Array("MThd".utf8) + be(6, 4) + be(0, 2) + be(1, 2) + be(480, 2) + Array("MTrk".utf8) + be(t.count, 4) + t))
    }

    /// The damage rules (`PieceLimits`) are off unless `limits` says: these tests are about
    /// `--max-gap` and `--max-duration` alone, on files the rules would end early.
    static func render(_ input: String, _ output: String, maxGap: Double?, maxDuration: Double? = nil,
                       limits: PieceLimits? = nil) throws -> (RenderJob.Summary, [Float]) {
        var options = RenderJob.Options()
        options.maxGap = maxGap
        options.maxDuration = maxDuration
        options.limits = limits
        options.sampleRate = 22_050
        let job = try RenderJob(soundFont: timGM, options: options)
        let summary = try job.render(input: input, to: .file(output, format: .wav, encoding: .float32))
        return (summary, try AudioFileReader(path: output).samples)
    }

    /// RMS of interleaved stereo `samples` between `from` and `to` seconds at 22,050 Hz.
    static func rms(_ samples: [Float], from: Double, to: Double) -> Double {
        let a = 2 * Int(from * 22_050), b = min(samples.count, 2 * Int(to * 22_050))
        guard b > a else { return 0 }
        return (samples[a..<b].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(b - a)).squareRoot()
    }

    @Test func heldNotesAcrossA26HourGap_areReleasedAtMaxGap_andTheRestPlays() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.gapFile("\(dir)/held.mid", gap: 26 * 3600, held: true)
        let (s, samples) = try Self.render("\(dir)/held.mid", "\(dir)/held.wav", maxGap: 60)
        #expect(s.shortenedGaps.count == 1)
        #expect(s.shortenedGaps.first.map { abs($0.length - 26 * 3600) < 1 && $0.start == 0.5 && !$0.trailing } == true)
        #expect(abs(s.secondsCut - (26 * 3600 - 60)) < 1)
        // The pad sounds through the (shortened) gap, the second note at 0.5 + 60 s, then the tail.
        #expect(abs(s.pieceDuration - 61) < 0.01)
        #expect(s.duration > 61 && s.duration < 61 + 15)
        #expect(Self.rms(samples, from: 30, to: 31) > 1e-3, "the held pad sounds in the gap")
        #expect(Self.rms(samples, from: 60.6, to: 61) > Self.rms(samples, from: 59.5, to: 60.4), "the second note plays")
    }

    @Test func silentGap_isCut_andNothingElseMoves() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.gapFile("\(dir)/gap.mid", gap: 70 * 3600)   // a delta of 241,920,000 ticks: near the 28-bit limit
        let (s, samples) = try Self.render("\(dir)/gap.mid", "\(dir)/gap.wav", maxGap: 20)
        #expect(abs(s.pieceDuration - 21) < 0.01)
        // The gap itself is silence (the first note's tail aside), the second note at 20.5 s.
        #expect(Self.rms(samples, from: 10, to: 20) < 1e-5)
        #expect(Self.rms(samples, from: 20.5, to: 21) > 1e-3)
        // A gap under the limit is left alone.
        Self.gapFile("\(dir)/short.mid", gap: 19)
        let (whole, _) = try Self.render("\(dir)/short.mid", "\(dir)/short.wav", maxGap: 20)
        #expect(whole.shortenedGaps.isEmpty && whole.secondsCut == 0)
        #expect(abs(whole.pieceDuration - 20) < 0.01)
    }

    @Test func maxDuration_cutsTheRender_andSaysSo() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.gapFile("\(dir)/gap.mid", gap: 3600)
        let (s, samples) = try Self.render("\(dir)/gap.mid", "\(dir)/cut.wav", maxGap: nil, maxDuration: 12.5)
        #expect(s.truncated)
        #expect(samples.count == 2 * 275_625)   // 12.5 s at 22.05 kHz, to the frame
        Self.gapFile("\(dir)/short.mid", gap: 2)
        let (whole, _) = try Self.render("\(dir)/short.mid", "\(dir)/whole.wav", maxGap: nil, maxDuration: 60)
        #expect(!whole.truncated)
    }
}
