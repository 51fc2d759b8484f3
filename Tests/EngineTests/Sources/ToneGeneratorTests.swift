import Testing
import Foundation
import CAllocationCounter
@testable import Engine

/// The built-in tone through the whole renderer (a silent fake instrument):
/// frequency, level, glides and switching without clicks, no allocation.
@Suite struct ToneGeneratorTests {
    static let rate = 48_000.0

    func makeRenderer(block: Int = 256) -> Renderer {
        let fake = FakeInstrument()
        fake.recordsMessages = false
        let renderer = Renderer(instrument: fake)
        renderer.prepare(sampleRate: Self.rate, maxFrames: block)
        return renderer
    }

    func set(_ r: Renderer, frequency: Float? = nil, dB: Float? = nil, waveform: Float? = nil, enabled: Bool? = nil) {
        if let frequency { r.parameters.set(.tone(.frequency), Double(frequency)) }
        if let dB { r.parameters.set(.strip(.tone, .gain), Double(dB)) }
        if let waveform { r.parameters.set(.tone(.waveform), Double(waveform)) }
        if let enabled { r.parameters.set(.tone(.enabled), enabled ? 1 : 0) }
    }

    /// Left channel of interleaved stereo.
    func left(_ interleaved: [Float]) -> [Float] { stride(from: 0, to: interleaved.count, by: 2).map { interleaved[$0] } }

    /// Frequency from the rising zero crossings (interpolated) between the first and the last.
    func measuredFrequency(_ x: [Float]) -> Double {
        var crossings: [Double] = []
        for i in 1..<x.count where x[i - 1] < 0 && x[i] >= 0 {
            crossings.append(Double(i - 1) + Double(-x[i - 1] / (x[i] - x[i - 1])))
        }
        guard crossings.count > 2 else { return 0 }
        return Double(crossings.count - 1) / (crossings.last! - crossings.first!) * Self.rate
    }

    func largestStep(_ x: [Float]) -> Float {
        var best: Float = 0
        for i in 1..<x.count { best = max(best, abs(x[i] - x[i - 1])) }
        return best
    }

    @Test(arguments: [(0, 440.0), (0, 97.3), (0, 5_000), (1, 440), (1, 1_234.5), (2, 440), (2, 3_000), (3, 440), (3, 61.7)])
    func frequency_matchesWithinHalfAPercent(waveform: Int, hz: Double) {
        let r = makeRenderer()
        set(r, frequency: Float(hz), dB: -6, waveform: Float(waveform), enabled: true)
        let x = left(renderAll(r, frames: Int(Self.rate), block: 256)).dropFirst(2_400)   // after the fade-in
        let f = measuredFrequency(Array(x))
        print("tone waveform \(waveform) at \(hz) Hz: measured \(f) Hz, error \((f / hz - 1) * 100) %")
        #expect(abs(f / hz - 1) < 0.005)
    }

    @Test(arguments: [Float(0), -3, -12, -40])
    func level_matchesWithinATenthOfADecibel(dB: Float) {
        let r = makeRenderer()
        set(r, frequency: 1_000, dB: dB, waveform: 0, enabled: true)
        let x = left(renderAll(r, frames: 48_000, block: 256)).dropFirst(4_800)   // whole cycles: 1000 Hz at 48 kHz
        let rms = (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot()
        let peakDB = 20 * log10(rms * 2.0.squareRoot())
        print("tone level \(dB) dB: measured \(peakDB) dB (sine peak from RMS)")
        #expect(abs(peakDB - Double(dB)) < 0.1)
    }

    @Test func enableAndDisable_fadeWithoutAClick() {
        let r = makeRenderer(block: 128)
        set(r, frequency: 440, dB: 0, waveform: 0, enabled: false)
        var out: [Float] = []
        // Toggle at block boundaries that fall at many phases of the wave.
        for cycle in 0..<12 {
            set(r, enabled: cycle % 2 == 0)
            out += left(renderAll(r, frames: 128 * (7 + cycle), block: 128))
        }
        // A full-scale 440 Hz sine moves at most 2π·440/48000 ≈ 0.058 per sample;
        // the 5 ms fade adds at most 1/240 ≈ 0.004. An unfaded switch would jump up to 1.
        let step = largestStep(out)
        print("tone on/off: largest sample-to-sample step \(step)")
        #expect(step < 0.065)
        #expect(out.map(abs).max()! > 0.9)
    }

    @Test func frequencyGlide_andWaveformChange_haveNoJumps() {
        let r = makeRenderer(block: 256)
        set(r, frequency: 220, dB: 0, waveform: 0, enabled: true)
        var out = left(renderAll(r, frames: 4_800, block: 256))
        set(r, frequency: 1_760)   // three octaves up at once
        out += left(renderAll(r, frames: 4_800, block: 256))
        let glide = largestStep(out)
        // Bound: the sine's slope at the new frequency, 2π·1760/48000 ≈ 0.23.
        #expect(glide < 0.235)
        // Halfway through the glide time the frequency is between the two.
        let f = measuredFrequency(Array(out.suffix(2_400)))
        #expect(abs(f / 1_760 - 1) < 0.005)
        // A waveform change fades out then in: no step above the sine's bound while it swaps to a triangle.
        set(r, waveform: 3)
        let swap = left(renderAll(r, frames: 4_800, block: 256))
        print("tone glide 220→1760 Hz: largest step \(glide); waveform swap: largest step \(largestStep(swap))")
        #expect(largestStep(swap) < 0.3)
    }

    @Test func levelChange_rampsAcrossTheBlock() {
        let r = makeRenderer(block: 512)
        set(r, frequency: 50, dB: -40, waveform: 0, enabled: true)
        _ = renderAll(r, frames: 4_800, block: 512)
        set(r, dB: 0)
        let x = left(renderAll(r, frames: 512, block: 512))
        // 50 Hz at 48 kHz: the sine itself moves < 0.0066 per sample; a jump of the level would show as ~0.99·sin.
        #expect(largestStep(x) < 0.01)
    }

    @Test func toneRendering_allocatesNothing() {
        let r = makeRenderer(block: 128)
        set(r, frequency: 300, dB: -6, waveform: 1, enabled: true)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 256)
        defer { output.deallocate() }
        func play() {
            for block in 1..<1_000 {
                if block % 50 == 0 {
                    r.parameters.set(.tone(.frequency), Double(100 + block))
                    r.parameters.set(.tone(.waveform), Double(block / 50 % 4))
                    r.parameters.set(.tone(.enabled), block % 200 == 0 ? 0 : 1)
                }
                r.render(frames: 128, into: output)
            }
        }
        // One unarmed pass first: the Swift runtime may allocate once on the
        // first use of a code path (metadata, lazy globals); the steady state must not.
        play()
        carillon_allocations_arm()
        play()
        let calls = carillon_allocations_disarm()
        #expect(calls == 0, "heap calls in 1000 blocks: \(calls)")
    }

    @Test func offTone_addsNothing() {
        let r = makeRenderer()
        let x = renderAll(r, frames: 4_096, block: 256)
        #expect(x.allSatisfy { $0 == 0 })
    }

    @Test func logAndExpHelpers_matchFoundation() {
        for x in [1.0, 2, 3.7, 440, 19_999, 0.01] {
            #expect(abs(ToneGenerator.log2(x) - Foundation.log2(x)) < 1e-12)
        }
        for y in [-10.0, -0.3, 0, 0.5, 3.25, 14.3] {
            #expect(abs(ToneGenerator.exp2(y) / Foundation.exp2(y) - 1) < 1e-12)
        }
        for i in 0..<1000 {
            let p = Double(i) / 1000
            #expect(abs(Double(ToneGenerator.sine(p)) - sin(2 * .pi * p)) < 2e-7)
        }
    }
}
