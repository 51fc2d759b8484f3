import Testing
import Engine
import Parameters
import Foundation

/// The strips beside the instrument's channels: the oscillator, the tone, the
/// tracks, the shared effect returns; solo across kinds; per-channel effects;
/// stems that add up to the output.
@Suite struct MixerStripTests {
    static let rate = 48_000.0

    /// A renderer over the fake instrument with `tracks`, a 10 s piece scheduled (so tracks play).
    func makeRenderer(_ fake: FakeInstrument = FakeInstrument(), tracks: [any TrackSource] = [],
                      stems: Bool = false) -> Renderer {
        let renderer = Renderer(instrument: fake, tracks: tracks)
        renderer.capturesStems = stems
        renderer.prepare(sampleRate: Self.rate, maxFrames: 64)
        renderer.schedule(Score(events: [], duration: 10))
        return renderer
    }

    /// The first frame of the second 64-frame block (the first ramps to the parameters).
    func steady(_ renderer: Renderer) -> (left: Float, right: Float) {
        let out = renderAll(renderer, frames: 128, block: 64)
        return (out[128], out[129])
    }

    func strip(_ renderer: Renderer, _ strip: ParameterAddress.StripID) -> Int {
        renderer.meters.index(of: strip)!
    }

    // MARK: Layout

    @Test func strips_listChannelsOscToneReturnsTracks() {
        let renderer = makeRenderer(tracks: [ConstantTrack(name: "drums", left: 0, right: 0)])
        #expect(renderer.meters.strips == (0..<16).map { .channel($0) }
                + [.oscillator, .tone, .reverb, .chorus, .track(0)])
        #expect(renderer.meters.names.suffix(5) == ["osc", "tone", "reverb", "chorus", "drums"])
        #expect(renderer.meters.fileStems.prefix(10).suffix(2) == ["ch09", "ch10"])
        #expect(renderer.meters.fileStems.last == "track1-drums")
        // One effects group per channel: the channels carry their effects, no shared returns.
        let grouped = makeRenderer(FakeInstrument(effectsGroups: 16))
        #expect(!grouped.meters.strips.contains(.reverb) && grouped.meters.strips.count == 18)
    }

    // MARK: Tracks

    @Test func track_gainPanMuteMeter() {
        let track = ConstantTrack(name: "bass", left: 0.5, right: 0.25)
        let renderer = makeRenderer(tracks: [track])
        var f = steady(renderer)
        #expect(f.left == 0.5 && f.right == 0.25)
        #expect(track.lastPlaying && track.lastPosition > 0)
        let s = strip(renderer, .track(0))
        #expect(renderer.meters.stripPeak(s) == 0.5)
        // RMS of a constant 0.5 left, 0.25 right: sqrt((0.25 + 0.0625) / 2).
        #expect(abs(renderer.meters.stripRMS(s) - (0.3125 / 2).squareRoot()) < 1e-6)

        renderer.parameters.set(.strip(.track(0), .gain), 20 * log10(0.5))
        renderer.parameters.set(.strip(.track(0), .pan), 0.5)
        f = steady(renderer)
        #expect(abs(f.left - 0.125) < 1e-6 && abs(f.right - 0.125) < 1e-6)

        renderer.parameters.set(.strip(.track(0), .mute), 1)
        f = steady(renderer)
        #expect(f.left == 0 && f.right == 0 && renderer.meters.stripPeak(s) == 0)
    }

    @Test func track_followsTheTransport() {
        let track = ConstantTrack(name: "t", left: 1, right: 1)
        let renderer = makeRenderer(tracks: [track])
        _ = steady(renderer)
        renderer.transport.seek(to: 4)
        _ = renderAll(renderer, frames: 64, block: 64)
        #expect(abs(track.lastPosition - 4) < 1e-9)
        renderer.transport.stop()
        let f = steady(renderer)
        #expect(!track.lastPlaying && f.left == 0)
    }

    @Test func secondTrack_hasItsOwnParameters() {
        let renderer = makeRenderer(tracks: [ConstantTrack(name: "a", left: 1, right: 1),
                                             ConstantTrack(name: "b", left: 0.25, right: 0.25)])
        renderer.parameters.set(.strip(.track(0), .pan), -1)
        let f = steady(renderer)
        #expect(f.left == 1.25 && f.right == 0.25)
        #expect(renderer.meters.stripPeak(strip(renderer, .track(1))) == 0.25)
    }

    // MARK: Oscillator and tone

    @Test func oscillator_muteSoloMeter() {
        let renderer = makeRenderer()
        renderer.route(channel: 15, to: .oscillator)
        renderer.parameters.set(.strip(.oscillator, .gain), 0)
        renderer.events.push(.now(.noteOn(69, velocity: 127, channel: 15)))
        _ = renderAll(renderer, frames: 4_800, block: 64)      // past the attack
        let osc = strip(renderer, .oscillator)
        #expect(renderer.meters.stripPeak(osc) > 0.3)
        #expect(renderer.meters.stripRMS(osc) > 0.1)

        renderer.parameters.set(.strip(.oscillator, .mute), 1)
        _ = renderAll(renderer, frames: 64, block: 64)
        let muted = renderAll(renderer, frames: 64, block: 64)
        #expect(muted.allSatisfy { $0 == 0 } && renderer.meters.stripPeak(osc) == 0)

        // Solo: the oscillator alone, a sampler channel silenced.
        renderer.parameters.set(.strip(.oscillator, .mute), 0)
        renderer.parameters.set(.strip(.oscillator, .solo), 1)
        renderer.events.push(.now(.noteOn(60, velocity: 127, channel: 0)))
        _ = renderAll(renderer, frames: 128, block: 64)
        #expect(renderer.meters.stripPeak(0) == 0 && renderer.meters.stripPeak(osc) > 0.3)
    }

    @Test func tone_panMuteSolo() {
        let renderer = makeRenderer()
        renderer.parameters.set(.tone(.enabled), 1)
        renderer.parameters.set(.strip(.tone, .gain), 0)
        renderer.parameters.set(.strip(.tone, .pan), 1)
        let out = renderAll(renderer, frames: 9_600, block: 64)
        let tail = out.suffix(2_000)
        let leftPeak = stride(from: tail.startIndex, to: tail.endIndex, by: 2).map { abs(tail[$0]) }.max()!
        let rightPeak = stride(from: tail.startIndex + 1, to: tail.endIndex, by: 2).map { abs(tail[$0]) }.max()!
        #expect(leftPeak == 0 && rightPeak > 0.5)
        #expect(renderer.meters.stripPeak(strip(renderer, .tone)) > 0.5)

        renderer.parameters.set(.strip(.tone, .mute), 1)
        _ = renderAll(renderer, frames: 64, block: 64)
        #expect(renderAll(renderer, frames: 64, block: 64).allSatisfy { $0 == 0 })
    }

    // MARK: Solo across kinds

    @Test func solo_acrossKinds_silencesEveryOtherStrip() {
        let track = ConstantTrack(name: "t", left: 0.25, right: 0.25)
        let fake = FakeInstrument()
        fake.reverbLevel = 0.125
        let renderer = makeRenderer(fake, tracks: [track])
        renderer.events.push(.now(.noteOn(60, velocity: 127, channel: 3)))
        #expect(steady(renderer).left == 1 + 0.125 + 0.25)

        // A track soloed: the channel goes; the shared reverb return is solo-safe.
        renderer.parameters.set(.strip(.track(0), .solo), 1)
        #expect(steady(renderer).left == 0.125 + 0.25)

        // A channel soloed as well: both sound.
        renderer.parameters.set(.strip(.channel(3), .solo), 1)
        #expect(steady(renderer).left == 1 + 0.125 + 0.25)

        // Only the channel: the track goes.
        renderer.parameters.set(.strip(.track(0), .solo), 0)
        #expect(steady(renderer).left == 1 + 0.125)

        // The tone soloed instead (and silent): channel and track both go.
        renderer.parameters.set(.strip(.channel(3), .solo), 0)
        renderer.parameters.set(.strip(.tone, .solo), 1)
        #expect(steady(renderer).left == 0.125)
    }

    // MARK: Effects per channel

    @Test func channelEffects_followTheirStrip() {
        let fake = FakeInstrument(effectsGroups: 16)
        fake.reverbLevel = 0.25
        let renderer = makeRenderer(fake)
        renderer.events.push(.now(.noteOn(60, velocity: 127, channel: 2)))
        renderer.events.push(.now(.noteOn(60, velocity: 127, channel: 5)))
        // Each channel: 1 dry + 0.25 reverb.
        #expect(steady(renderer).left == 2.5)
        #expect(renderer.meters.stripPeak(2) == 1.25)

        renderer.parameters.set(.strip(.channel(2), .mute), 1)
        #expect(steady(renderer).left == 1.25)
        renderer.parameters.set(.strip(.channel(5), .gain), 20 * log10(0.5))
        #expect(abs(steady(renderer).left - 0.625) < 1e-6)
        // The reverb return's level applies inside the strip: half the default level halves it.
        renderer.parameters.set(.reverb(.level), 0.45)
        #expect(abs(steady(renderer).left - 0.5 * (1 + 0.125)) < 1e-6)
    }

    @Test func sharedEffects_stayWhenTheChannelIsMuted() {
        let fake = FakeInstrument()
        fake.reverbLevel = 0.25
        let renderer = makeRenderer(fake)
        renderer.events.push(.now(.noteOn(60, velocity: 127, channel: 2)))
        renderer.parameters.set(.strip(.channel(2), .mute), 1)
        #expect(steady(renderer).left == 0.25)
        #expect(renderer.meters.stripPeak(strip(renderer, .reverb)) == 0.25)
    }

    @Test func sharedReturns_haveGainPanMuteSolo_afterTheirLevel() {
        let fake = FakeInstrument()
        fake.reverbLevel = 0.25
        let renderer = makeRenderer(fake)
        renderer.events.push(.now(.noteOn(60, velocity: 127, channel: 2)))
        #expect(steady(renderer).left == 1.25)
        // Its gain after the level: -6 dB on the return halves the reverb only.
        renderer.parameters.set(.strip(.reverb, .gain), 20 * log10(0.5))
        #expect(abs(steady(renderer).left - 1.125) < 1e-6)
        #expect(abs(renderer.meters.stripPeak(strip(renderer, .reverb)) - 0.125) < 1e-6)
        // Balance right: the reverb leaves the left side.
        renderer.parameters.set(.strip(.reverb, .pan), 1)
        let panned = steady(renderer)
        #expect(panned.left == 1 && abs(panned.right - 1.125) < 1e-6)
        renderer.parameters.set(.strip(.reverb, .pan), 0)
        renderer.parameters.set(.strip(.reverb, .mute), 1)
        #expect(steady(renderer).left == 1)
        // Soloed, the return sounds alone; the level still applies.
        renderer.parameters.set(.strip(.reverb, .mute), 0)
        renderer.parameters.set(.strip(.reverb, .solo), 1)
        #expect(abs(steady(renderer).left - 0.125) < 1e-6)
        renderer.parameters.set(.reverb(.level), 0.45)
        #expect(abs(steady(renderer).left - 0.0625) < 1e-6)
    }

    // MARK: Stems

    @Test func stems_addUpToTheOutput_throughRamps() {
        let fake = FakeInstrument(effectsGroups: 16)
        fake.reverbLevel = 0.3
        let renderer = makeRenderer(fake, tracks: [ConstantTrack(name: "t", left: 0.2, right: 0.7)], stems: true)
        renderer.route(channel: 15, to: .oscillator)
        renderer.parameters.set(.tone(.enabled), 1)
        renderer.events.push(.now(.noteOn(60, velocity: 100, channel: 0)))
        renderer.events.push(.now(.noteOn(64, velocity: 90, channel: 9)))
        renderer.events.push(.now(.noteOn(69, velocity: 127, channel: 15)))
        var worst: Double = 0, sounding = Set<Int>()
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 128)
        defer { output.deallocate() }
        for block in 0..<200 {
            // Ramps in every block: master, a channel, the track, the oscillator.
            let x = Double(block % 7) / 7
            renderer.parameters.set(.masterGain, -6 * x)
            renderer.parameters.set(.strip(.channel(0), .pan), x - 0.5)
            renderer.parameters.set(.strip(.track(0), .gain), -3 * x)
            renderer.parameters.set(.strip(.oscillator, .pan), 0.5 - x)
            renderer.render(frames: 64, into: output)
            for i in 0..<64 {
                var sum = (0.0, 0.0)
                for s in 0..<renderer.meters.stripCount {
                    guard let stem = renderer.stem(s) else { continue }
                    sounding.insert(s)
                    sum.0 += Double(stem.left[i]); sum.1 += Double(stem.right[i])
                }
                worst = max(worst, abs(sum.0 - Double(output[2 * i])), abs(sum.1 - Double(output[2 * i + 1])))
            }
        }
        let names = Set(sounding.map { renderer.meters.strips[$0] })
        #expect(names == [.channel(0), .channel(9), .oscillator, .tone, .track(0)])
        // Float rounding of a sum of 5 strips near 2: a few ulps.
        #expect(worst < 1e-6, "largest difference \(worst)")
    }
}
