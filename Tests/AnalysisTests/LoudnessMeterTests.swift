import Analysis
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct LoudnessMeterTests {
    /// Interleaved stereo: a sine of `amplitude` in both channels.
    static func sine(amplitude: Float, hertz: Double, seconds: Double, rate: Int) -> [Float] {
        let frames = Int(seconds * Double(rate))
        var out = [Float](repeating: 0, count: 2 * frames)
        for i in 0..<frames {
            let v = amplitude * Float(sin(2 * Double.pi * hertz * Double(i) / Double(rate)))
            out[2 * i] = v; out[2 * i + 1] = v
        }
        return out
    }

    @Test func sineAt997Hz_readsItsLevelInLUFS() throws {
        // BS.1770 is calibrated so that a 997 Hz sine at 0 dBFS in two channels reads 0 LUFS (±0.1).
        let meter = try LoudnessMeter(channels: 2, sampleRate: 48_000)
        let s = Self.sine(amplitude: 0.1, hertz: 997, seconds: 5, rate: 48_000)
        try s.withUnsafeBufferPointer { try meter.add($0, frames: s.count / 2) }
        #expect(abs(try meter.integratedLoudness() - -20) < 0.1)
        #expect(abs(decibels(try meter.samplePeak()) - -20) < 0.01)
        #expect(try meter.truePeak() >= meter.samplePeak())
    }

    @Test func silence_isMinusInfinity() throws {
        let meter = try LoudnessMeter(channels: 2, sampleRate: 44_100, truePeak: false)
        let s = [Float](repeating: 0, count: 2 * 44_100)
        try s.withUnsafeBufferPointer { try meter.add($0, frames: 44_100) }
        #expect(try meter.integratedLoudness() == -.infinity)
    }

    @Test func truePeakWithoutTheMode_isATypedError() throws {
        let meter = try LoudnessMeter(channels: 2, sampleRate: 44_100, truePeak: false)
        #expect(throws: LoudnessError.self) { _ = try meter.truePeak() }
    }

    @Test func gain_reachesTheTarget_orStopsAtTheCeiling() {
        let target = LoudnessTarget(integrated: -23, truePeakCeiling: -1)
        #expect(target.gain(loudness: -30, truePeak: 0.1) == 7)          // peak −20 + 7 = −13 dBTP: fine
        #expect(abs(target.gain(loudness: -30, truePeak: 0.5) - (-1 - decibels(0.5))) < 1e-9)  // ceiling wins
        #expect(target.gain(loudness: -.infinity, truePeak: 0) == 0)
    }
}
