import Testing
import Engine
import Foundation

@Suite struct MixerTests {
    /// Renders two blocks (the first ramps to the new parameters) and returns the second block's first frame.
    func steadyFrame(_ configure: (ParameterStore) -> Void, notes: [(channel: Int, velocity: UInt8)],
                     reverb: Float = 0) -> (left: Float, right: Float, renderer: Renderer) {
        let fake = FakeInstrument()
        fake.reverbLevel = reverb
        let renderer = Renderer(instrument: fake)
        renderer.prepare(sampleRate: 48_000, maxFrames: 64)
        configure(renderer.parameters)
        for n in notes { renderer.events.push(.now(.noteOn(60, velocity: n.velocity, channel: n.channel))) }
        let out = renderAll(renderer, frames: 128, block: 64)
        return (out[128], out[129], renderer)
    }

    @Test func unityStrips_sumChannels() {
        let f = steadyFrame({ _ in }, notes: [(0, 127), (5, 127)])
        #expect(abs(f.left - 2) < 1e-6 && abs(f.right - 2) < 1e-6)
    }

    @Test func stripGain_scales() {
        let f = steadyFrame({ $0.set(.strip(.channel(4), .gain), 20 * log10(0.5)) }, notes: [(4, 127)])
        #expect(abs(f.left - 0.5) < 1e-5)
    }

    @Test func pan_right_silencesLeft() {
        let f = steadyFrame({ $0.set(.strip(.channel(1), .pan), 1) }, notes: [(1, 127)])
        #expect(f.left == 0 && abs(f.right - 1) < 1e-6)
    }

    @Test func mute_silencesStrip() {
        let f = steadyFrame({ $0.set(.strip(.channel(2), .mute), 1) }, notes: [(2, 127), (3, 127)])
        #expect(abs(f.left - 1) < 1e-6)
    }

    @Test func solo_silencesTheOthers() {
        let f = steadyFrame({ $0.set(.strip(.channel(7), .solo), 1) }, notes: [(7, 127), (8, 127), (9, 127)])
        #expect(abs(f.left - 1) < 1e-6)
    }

    @Test func masterGain_andReverbReturn() {
        // The reverb level 0.45 is half the table's default (0.9): a return gain of 0.5.
        let f = steadyFrame({ $0.set(.masterGain, 20 * log10(0.5)); $0.set(.reverb(.level), 0.45) },
                            notes: [(0, 127)], reverb: 0.25)
        #expect(abs(f.left - 0.5 * (1 + 0.125)) < 1e-5)
    }

    @Test func gainChange_rampsAcrossTheBlock() {
        let fake = FakeInstrument()
        let renderer = Renderer(instrument: fake)
        renderer.prepare(sampleRate: 48_000, maxFrames: 64)
        renderer.events.push(.now(.noteOn(60, velocity: 127, channel: 0)))
        _ = renderAll(renderer, frames: 64, block: 64)
        renderer.parameters.set(.masterGain, -60)
        let out = renderAll(renderer, frames: 64, block: 64)
        // Falls steadily from 1 to 0 over the block: no step.
        for i in 1..<64 { #expect(out[2 * i] < out[2 * (i - 1)]) }
        #expect(out[2 * 63] == 0)
        #expect(abs(out[0] - 63.0 / 64) < 1e-5)
    }

    @Test func clipsAndPeaks_areCounted() {
        let f = steadyFrame({ _ in }, notes: [(0, 127), (1, 127)])
        #expect(f.renderer.clippedSamples > 0)
        #expect(abs(f.renderer.peak - 2) < 1e-6)
        #expect(f.renderer.meters.clippedSamples == f.renderer.clippedSamples)
        #expect(abs(f.renderer.meters.peak - 2) < 1e-6)
        #expect(abs(f.renderer.meters.stripPeak(0) - 1) < 1e-6)
    }
}
