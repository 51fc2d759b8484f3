import Testing
import Foundation
import CAllocationCounter
@testable import Engine

/// The oscillator instrument through the whole renderer: channel 1 routed to
/// it, the fake sampler silent. Pitch measured from the output, clicks,
/// aliasing of the band-limited sawtooth, no allocation.
@Suite struct OscillatorTests {
    static let rate = 48_000.0

    func makeRenderer(block: Int = 256, a4: Double = 440, waveform: Double = 0) -> Renderer {
        let fake = FakeInstrument()
        fake.recordsMessages = false
        let renderer = Renderer(instrument: fake)
        renderer.prepare(sampleRate: Self.rate, maxFrames: block)
        renderer.route(channel: 0, to: .oscillator)
        renderer.oscillator.a4 = a4
        renderer.parameters.set(.strip(.oscillator, .gain), 0)
        renderer.parameters.set(.osc(.waveform), waveform)
        renderer.parameters.set(.osc(.attack), 0.001)
        renderer.parameters.set(.osc(.sustain), 1)
        renderer.parameters.set(.osc(.release), 0.001)
        return renderer
    }

    func left(_ x: [Float]) -> [Float] { stride(from: 0, to: x.count, by: 2).map { x[$0] } }

    /// Rising zero crossings, interpolated: (count − 1) cycles between the first and the last.
    func measuredFrequency(_ x: ArraySlice<Float>) -> Double {
        var first = -1.0, last = -1.0, count = 0
        var i = x.startIndex + 1
        while i < x.endIndex {
            if x[i - 1] < 0 && x[i] >= 0 {
                let t = Double(i - 1) + Double(-x[i - 1]) / Double(x[i] - x[i - 1])
                if first < 0 { first = t }
                last = t; count += 1
            }
            i += 1
        }
        return count > 2 ? Double(count - 1) / (last - first) * Self.rate : 0
    }

    func largestStep(_ x: [Float]) -> Float {
        var best: Float = 0
        for i in 1..<x.count { best = max(best, abs(x[i] - x[i - 1])) }
        return best
    }

    @Test(arguments: [440.0, 442.0])
    func frequency_allNotesWithinATenthOfACent(a4: Double) {
        var worst = 0.0
        for note in 0...127 {
            let r = makeRenderer(block: 512, a4: a4)
            let hz = a4 * pow(2, (Double(note) - 69) / 12)
            r.events.push(.now(.noteOn(UInt8(note), velocity: 127, channel: 0)))
            // At least 4 whole cycles (low notes) and half a second.
            let frames = max(24_000, Int(5 * Self.rate / hz) + 2_000)
            let x = left(renderAll(r, frames: frames, block: 512))
            let f = measuredFrequency(x[480...])
            let cents = 1200 * log2(f / hz)
            worst = max(worst, abs(cents))
            #expect(abs(cents) < 0.1, "note \(note) at A4 = \(a4): \(f) Hz, wanted \(hz) Hz (\(cents) cents)")
        }
        print("oscillator pitch, A4 = \(a4) Hz, notes 0...127: largest error \(worst) cents")
    }

    /// The bound: a sine at f moves at most 2π·f/rate per sample, and the
    /// envelope (1 ms ramps at least) at most 1/(0.001·rate): 0.0784 for A4 at 48 kHz.
    @Test func noteStartAndEnd_stepBelowTheBound() {
        let r = makeRenderer(block: 256)
        r.events.push(TimedMessage(frame: 1_000, message: .noteOn(69, velocity: 127, channel: 0)))
        r.events.push(TimedMessage(frame: 1_000 + 4_811, message: .noteOff(69, channel: 0)))   // mid-cycle
        let x = left(renderAll(r, frames: 9_600, block: 256))
        let bound = Float(2 * Double.pi * 440 / Self.rate + 1 / (Oscillator.minimumTime * Self.rate)) * 1.001
        let step = largestStep(x)
        print("oscillator note start/end: largest step \(step), bound \(bound)")
        #expect(step <= bound)
        #expect(x.max()! > 0.99)                                 // it did sound at full level
        #expect(x[(1_000 + 4_811 + 100)...].allSatisfy { $0 == 0 })   // and ended within 1 ms
    }

    /// 33 notes on 32 voices: the oldest fades out over 1 ms before the 33rd starts.
    @Test func stealing_fadesAndKeepsThePool() {
        let r = makeRenderer(block: 256)
        for n in 0..<33 { r.events.push(.now(.noteOn(UInt8(30 + n), velocity: 4, channel: 0))) }
        let x = left(renderAll(r, frames: 4_800, block: 256))
        #expect(r.oscillator.activeVoices == 32)
        let gain = 4.0 / 127
        let bound = Float(gain * 32 * (2 * Double.pi * 440 * pow(2, (62.0 - 69) / 12) / Self.rate
                                       + 1 / (Oscillator.minimumTime * Self.rate)))
        #expect(largestStep(x) <= bound)
    }

    /// Energy at frequencies that are not harmonics of the note, relative to
    /// all energy, measured with a Blackman–Harris window and a plain DFT.
    func aliasLevel(_ x: ArraySlice<Float>, fundamental: Double) -> Double {
        let n = x.count
        var w = [Double](repeating: 0, count: n)
        for i in 0..<n {
            let t = 2 * Double.pi * Double(i) / Double(n)
            w[i] = Double(x[x.startIndex + i]) * (0.35875 - 0.48829 * cos(t) + 0.14128 * cos(2 * t) - 0.01168 * cos(3 * t))
        }
        var harmonic = 0.0, other = 0.0
        let binHz = Self.rate / Double(n)
        for k in 1..<(n / 2) {
            var re = 0.0, im = 0.0
            let step = 2 * Double.pi * Double(k) / Double(n)
            let c = cos(step), s = sin(step)
            var cr = 1.0, ci = 0.0
            for i in 0..<n {
                re += w[i] * cr; im -= w[i] * ci
                let nr = cr * c - ci * s; ci = cr * s + ci * c; cr = nr
            }
            let power = re * re + im * im
            let hz = Double(k) * binHz
            let nearest = (hz / fundamental).rounded()
            if nearest >= 1 && abs(hz - nearest * fundamental) <= 5 * binHz { harmonic += power } else { other += power }
        }
        return 10 * log10(other / (harmonic + other))
    }

    /// Note 100 (2637 Hz) at 48 kHz: the PolyBLEP sawtooth keeps non-harmonic
    /// energy below −25 dB (measured −28.5 dB); a naive one has −12 dB.
    @Test func sawtooth_highNote_aliasingBelowTheStatedLevel() {
        let r = makeRenderer(block: 512, waveform: 2)
        r.parameters.set(.osc(.attack), 0.001)
        r.events.push(.now(.noteOn(100, velocity: 127, channel: 0)))
        let x = left(renderAll(r, frames: 4_096 + 1_024, block: 512))
        let hz = 440 * pow(2, 31.0 / 12)
        let level = aliasLevel(x[1_024...], fundamental: hz)
        var naive = [Float](repeating: 0, count: 4_096)
        var p = 0.0
        for i in 0..<naive.count { naive[i] = Float(2 * p - 1); p += hz / Self.rate; if p >= 1 { p -= 1 } }
        let naiveLevel = aliasLevel(naive[...], fundamental: hz)
        print("sawtooth note 100 at 48 kHz: aliasing \(level) dB (naive: \(naiveLevel) dB)")
        #expect(level < -25)
        #expect(level < naiveLevel - 10)
    }

    /// The triangle's PolyBLAMP corners: below −50 dB (measured −53 dB; naive −38 dB).
    @Test func triangle_highNote_aliasingBelowNaive() {
        let r = makeRenderer(block: 512, waveform: 3)
        r.events.push(.now(.noteOn(100, velocity: 127, channel: 0)))
        let x = left(renderAll(r, frames: 4_096 + 1_024, block: 512))
        let hz = 440 * pow(2, 31.0 / 12)
        let level = aliasLevel(x[1_024...], fundamental: hz)
        var naive = [Float](repeating: 0, count: 4_096)
        var p = 0.0
        for i in 0..<naive.count { naive[i] = Float(4 * abs(p - 0.5) - 1); p += hz / Self.rate; if p >= 1 { p -= 1 } }
        let naiveLevel = aliasLevel(naive[...], fundamental: hz)
        print("triangle note 100 at 48 kHz: aliasing \(level) dB (naive: \(naiveLevel) dB)")
        #expect(level < -50)
        #expect(level < naiveLevel - 10)
    }

    @Test func pitchBend_andRPN0Range() {
        let r = makeRenderer(block: 512)
        r.events.push(.now(ChannelMessage(status: 0xE0, data1: 0, data2: 0x60)))   // 12288: +half range
        r.events.push(.now(.noteOn(69, velocity: 127, channel: 0)))
        var f = measuredFrequency(left(renderAll(r, frames: 24_000, block: 512))[480...])
        #expect(abs(1200 * log2(f / 440) - 100) < 0.1)        // +1 of ±2 semitones
        for (cc, v) in [(101, 0), (100, 0), (6, 12), (38, 0)] as [(UInt8, UInt8)] {
            r.events.push(.now(.controlChange(cc, value: v, channel: 0)))
        }
        f = measuredFrequency(left(renderAll(r, frames: 24_000, block: 512))[480...])
        #expect(abs(1200 * log2(f / 440) - 600) < 0.1)        // +½ of ±12 semitones
    }

    /// The oscillator's strip: `osc.pan` 1 leaves the left silent; `osc.level` −6 dB halves the right.
    @Test func strip_levelAndPan() {
        let r = makeRenderer(block: 256)
        r.parameters.set(.strip(.oscillator, .pan), 1)
        r.parameters.set(.strip(.oscillator, .gain), -6)
        r.events.push(.now(.noteOn(69, velocity: 127, channel: 0)))
        let x = renderAll(r, frames: 9_600, block: 256)
        let leftPeak = stride(from: 2 * 4_800, to: x.count, by: 2).map { abs(x[$0]) }.max()!
        let rightPeak = stride(from: 2 * 4_800 + 1, to: x.count, by: 2).map { abs(x[$0]) }.max()!
        #expect(leftPeak == 0)
        #expect(abs(20 * log10(Double(rightPeak)) + 6) < 0.05)
    }

    @Test func routing_otherChannelsStillReachTheSampler() {
        let fake = FakeInstrument()
        let r = Renderer(instrument: fake)
        r.prepare(sampleRate: Self.rate, maxFrames: 256)
        r.route(channel: 15, to: .oscillator)
        r.events.push(.now(.noteOn(60, velocity: 100, channel: 15)))
        r.events.push(.now(.noteOn(60, velocity: 100, channel: 0)))
        _ = renderAll(r, frames: 256, block: 256)
        #expect(fake.received.map(\.channel) == [0])
        #expect(r.oscillator.activeVoices == 1)
    }

    @Test func steadyState_allocatesNothing() {
        let r = makeRenderer(block: 128)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 256)
        defer { output.deallocate() }
        r.events.push(.now(.noteOn(60, velocity: 100, channel: 0)))
        r.render(frames: 128, into: output)
        carillon_allocations_arm()
        for block in 1..<1_000 {
            if block % 3 == 0 { r.events.push(.now(.noteOn(UInt8(40 + block % 50), velocity: 90, channel: 0))) }
            if block % 5 == 0 { r.events.push(.now(.noteOff(UInt8(40 + (block - 20) % 50), channel: 0))) }
            if block % 7 == 0 { r.events.push(.now(ChannelMessage(status: 0xE0, data1: 0, data2: UInt8(block % 128)))) }
            if block % 50 == 0 { r.parameters.set(.osc(.waveform), Double(block % 5)) }
            r.render(frames: 128, into: output)
        }
        let calls = carillon_allocations_disarm()
        #expect(calls == 0, "heap calls in 1000 blocks: \(calls)")
    }
}

/// The tone generator as the reference-pitch tool: `tone.note` and `tone.a4`.
@Suite struct ToneNoteTests {
    static let rate = 48_000.0

    @Test func note_andA4_setTheFrequency_andChangeWithoutAClick() {
        let r = Renderer(instrument: FakeInstrument())
        r.prepare(sampleRate: Self.rate, maxFrames: 256)
        r.parameters.set(.strip(.tone, .gain), 0)
        r.parameters.set(.tone(.enabled), 1)
        r.parameters.set(.tone(.a4), 442)
        r.parameters.set(.tone(.note), 60)
        var x = renderAll(r, frames: 24_000, block: 256)
        let t = OscillatorTests()
        var f = t.measuredFrequency(t.left(x)[4_800...])
        #expect(abs(1200 * log2(f / (442 * pow(2, -9.0 / 12)))) < 1)
        r.parameters.set(.tone(.note), 81)
        x = t.left(renderAll(r, frames: 24_000, block: 256))
        f = t.measuredFrequency(x[4_800...])
        #expect(abs(1200 * log2(f / (442 * 2))) < 1)
        // A fade out and in, not a glide: the tone passes through silence.
        #expect(x[0..<1_000].contains { abs($0) < 1e-6 } && x[0..<1_000].filter { $0 == 0 }.count > 10)
        // Bound: the new sine's slope plus the 5 ms fade's.
        let bound = Float(2 * Double.pi * 884 / Self.rate + 1 / (ToneGenerator.fadeTime * Self.rate)) * 1.01
        #expect(t.largestStep(x) <= bound)
        // tone.frequency set afterwards takes over again.
        r.parameters.set(.tone(.frequency), 1_000)
        x = t.left(renderAll(r, frames: 24_000, block: 256))
        #expect(abs(t.measuredFrequency(x[4_800...]) / 1_000 - 1) < 0.001)
    }
}
