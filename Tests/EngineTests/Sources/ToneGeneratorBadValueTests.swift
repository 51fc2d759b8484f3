import Testing
@testable import Engine

/// Bad values given to the tone generator (NaN, ±inf, huge, out of range)
/// are clamped or refused as documented; rendering never traps and its
/// output stays finite and within full scale.
@Suite struct ToneGeneratorBadValueTests {
    static let rate = 48_000.0
    static let frames = 256

    /// Renders one block into fresh zeroed buffers; returns the left channel.
    func render(_ tone: inout ToneGenerator, frequency: Float = 440, level: Float = 0.5,
                waveform: Float = 0, enabled: Float = 1) -> [Float] {
        var left = [Float](repeating: 0, count: Self.frames), right = left
        left.withUnsafeMutableBufferPointer { l in
            right.withUnsafeMutableBufferPointer { r in
                tone.render(frames: Self.frames, left: l.baseAddress!, right: r.baseAddress!,
                            frequency: frequency, level: level, waveform: waveform, enabled: enabled)
            }
        }
        return left
    }

    func prepared() -> ToneGenerator {
        var tone = ToneGenerator()
        tone.prepare(sampleRate: Self.rate)
        return tone
    }

    static let extremes: [Float] = [.nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 1e30, -1e30]

    @Test(arguments: [(Float.nan, ToneGenerator.Waveform.square), (.infinity, .triangle), (-.infinity, .sine),
                      (1e30, .triangle), (-1e30, .sine), (7, .triangle), (-2, .sine), (2.4, .sawtooth)])
    func waveform_badValue_isClampedOrKept(value: Float, expected: ToneGenerator.Waveform) {
        var tone = prepared()
        _ = render(&tone, waveform: 1)                   // square
        for _ in 0..<20 { _ = render(&tone, waveform: value) }   // past the fade out and in
        #expect(tone.waveform == expected)
    }

    @Test(arguments: [(Float.nan, 440.0), (.infinity, 21_600), (-.infinity, 1), (1e30, 21_600), (0, 1), (-5, 1)])
    func frequency_badValue_isClampedOrHeld(value: Float, expected: Double) {
        var tone = prepared()
        _ = render(&tone, frequency: 440)
        for _ in 0..<100 { _ = render(&tone, frequency: value) }   // 0.5 s: the glide has arrived
        #expect(abs(tone.frequency / expected - 1) < 1e-6)
    }

    @Test(arguments: extremes)
    func level_badValue_staysWithinFullScale(value: Float) {
        var tone = prepared()
        var out: [Float] = []
        for _ in 0..<20 { out += render(&tone, level: value) }
        #expect(out.allSatisfy { $0.isFinite && abs($0) <= 1 })
        let expectSound = value > 0 && !value.isNaN
        #expect((out.map(abs).max()! > 0.9) == expectSound, "level \(value)")
    }

    @Test(arguments: extremes)
    func enabled_badValue_isOnOrOff(value: Float) {
        var tone = prepared()
        let out = render(&tone, enabled: value)
        #expect(out.allSatisfy { $0.isFinite })
        #expect(tone.isSilent == !(value >= 0.5))
    }

    @Test func allBadAtOnce_rendersFiniteAudio() {
        var tone = prepared()
        for f in Self.extremes { for l in Self.extremes { for w in Self.extremes {
            let out = render(&tone, frequency: f, level: l, waveform: w, enabled: 1)
            #expect(out.allSatisfy { $0.isFinite && abs($0) <= 1.1 })
        } } }
    }

    @Test(arguments: [Double.nan, .infinity, -.infinity, 0, -48_000, 1e-300, 999, 1e12, .greatestFiniteMagnitude])
    func prepare_badSampleRate_isRefused_andRenderingStillWorks(rate: Double) {
        var tone = prepared()
        let taken = tone.prepare(sampleRate: rate)
        #expect(!taken)
        #expect(tone.sampleRate == Self.rate)
        var out: [Float] = []
        for hz: Float in [100, 5_000, 440] { out += render(&tone, frequency: hz) }
        #expect(out.allSatisfy { $0.isFinite })
        #expect(out.map(abs).max()! > 0.1)
        #expect(ToneGenerator().sampleRate == 44_100)
    }

    @Test func exp2_extremes_saturateWithoutATrap() {
        #expect(ToneGenerator.exp2(.nan).isNaN)
        #expect(ToneGenerator.exp2(-.infinity) == 0)
        #expect(ToneGenerator.exp2(.infinity) == .infinity)
        #expect(ToneGenerator.exp2(-1e300) == 0)
        #expect(ToneGenerator.exp2(1e300) == .infinity)
        #expect(ToneGenerator.exp2(-1_099) == 0)
        #expect(ToneGenerator.exp2(1_050) == .infinity)
        #expect(ToneGenerator.exp2(1_000) == 0x1p1000)
    }

    /// The whole path: the parameter store refuses NaN and infinity and clamps the rest.
    @Test func renderer_withNaNAndInfiniteToneParameters_rendersFiniteAudio() {
        let renderer = Renderer(instrument: FakeInstrument())
        renderer.prepare(sampleRate: Self.rate, maxFrames: 256)
        renderer.parameters.set(.tone(.enabled), 1)
        for value in Self.extremes {
            renderer.parameters.set(.tone(.frequency), Double(value))
            renderer.parameters.set(.tone(.waveform), Double(value))
            renderer.parameters.set(.strip(.tone, .gain), -Double(value))
            let out = renderAll(renderer, frames: 2_048, block: 256)
            #expect(out.allSatisfy { $0.isFinite }, "\(value)")
        }
    }
}
