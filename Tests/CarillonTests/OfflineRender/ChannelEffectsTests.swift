import Testing
import Foundation
import Sampling
import OfflineRender
import CAllocationCounter
import Controls
import Engine
import FluidSynth
import SoundFile

/// FluidSynth with a reverb and chorus per MIDI channel (`synth.effects-groups`
/// 16): a channel's effects follow its strip, and the mix is the same as with
/// the shared effects.
@Suite struct ChannelEffectsTests {
    func makeRenderer(perChannel: Bool) throws -> (Renderer, Sampler) {
        var options = SamplerOptions()
        options.effectsPerChannel = perChannel
        let sampler = try Sampler(soundFont: timGM, sampleRate: 44_100, options: options)
        #expect(sampler.instrument.effectsGroupCount == (perChannel ? 16 : 1))
        let renderer = Renderer(instrument: sampler.instrument)
        renderer.prepare(sampleRate: 44_100, maxFrames: 512)
        // A long tail: the largest room.
        renderer.parameters.set(.reverb(.roomSize), 1)
        return (renderer, sampler)
    }

    /// Peak of each 512-frame block over `blocks` blocks.
    func blockPeaks(_ renderer: Renderer, blocks: Int) -> [Float] {
        let out = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1024)
        defer { out.deallocate() }
        return (0..<blocks).map { _ in
            renderer.render(frames: 512, into: out)
            return out.map(abs).max()!
        }
    }

    /// A chord on channel 1, released; then the channel's strip is muted while
    /// the reverb still rings. With its own effects group the output goes to
    /// zero (the other channels' idle reverb units' residue is below the
    /// mixer's effects floor); with the shared reverb the tail goes on (what this fixes).
    @Test(arguments: [true, false])
    func mutingAChannel_silencesItsReverbTail(perChannel: Bool) throws {
        let (renderer, sampler) = try makeRenderer(perChannel: perChannel)
        for note: UInt8 in [60, 64, 67] { renderer.events.push(.now(.noteOn(note, velocity: 120, channel: 0))) }
        _ = blockPeaks(renderer, blocks: 20)                       // 0.23 s held
        for note: UInt8 in [60, 64, 67] { renderer.events.push(.now(.noteOff(note, channel: 0))) }
        _ = blockPeaks(renderer, blocks: 40)                       // 0.46 s: the release is over, the reverb rings
        renderer.parameters.set(.strip(.channel(0), .mute), 1)
        let after = blockPeaks(renderer, blocks: 20)
        let tail = after.dropFirst().max()!                        // the first block ramps down
        print("muted channel, effects \(perChannel ? "per channel" : "shared"): tail peak \(tail), voices \(sampler.instrument.synth.activeVoiceCount)")
        if perChannel {
            #expect(tail == 0)
        } else {
            #expect(tail > 1e-4, "the shared reverb keeps ringing")
        }
    }

    /// A real General MIDI file with reverb and chorus on: the mix with 16
    /// effects groups equals the mix with one (the effects are linear and
    /// start alike), to float rounding.
    @Test func perChannelEffects_leaveTheMixUnchanged() throws {
        func render(perChannel: Bool) throws -> AudioFileReader {
            let dir = scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            var options = RenderJob.Options()
            options.host.sampler.effectsPerChannel = perChannel
            options.maxDuration = 20
            options.threads = 1
            let job = try RenderJob(soundFont: timGM, options: options)
            _ = try job.render(input: "\(openmsx)/train_filled_with_cash.mid", to: .file("\(dir)/out.wav", format: .wav, encoding: .float32))
            return try AudioFileReader(path: "\(dir)/out.wav")
        }
        let shared = try render(perChannel: false), grouped = try render(perChannel: true)
        #expect(shared.frames == grouped.frames)
        var worst: Float = 0, peak: Float = 0
        for i in 0..<min(shared.samples.count, grouped.samples.count) {
            worst = max(worst, abs(shared.samples[i] - grouped.samples[i]))
            peak = max(peak, abs(shared.samples[i]))
        }
        print("16 effects groups vs 1, train_filled_with_cash 20 s: largest difference \(worst) (peak \(peak))")
        #expect(peak > 0.1)
        #expect(worst < 1e-4)
    }

    /// The block loop with 16 effects groups makes no heap call (effects off:
    /// with them on, Debian's OpenMP build of FluidSynth allocates in its
    /// effects pass, as `RealTimeRuleTests` reports).
    @Test func renderLoop_withChannelEffects_allocatesNothing() throws {
        let synth = try Synth(settings: Settings.forRendering(sampleRate: 44_100, effectsGroups: 16))
        try synth.setReverb(on: false)
        try synth.setChorus(on: false)
        let font = try synth.loadSoundFont(at: timGM)
        defer { withExtendedLifetime(font) {} }
        let renderer = Renderer(instrument: FluidSynthInstrument(synth: synth))
        renderer.capturesStems = true
        renderer.prepare(sampleRate: 44_100, maxFrames: 512)
        renderer.schedule(try Score(contentsOf: "\(openmsx)/train_filled_with_cash.mid"))
        renderer.parameters.set(.strip(.channel(9), .solo), 1)
        renderer.parameters.set(.strip(.channel(0), .solo), 1)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1024)
        defer { output.deallocate() }
        renderer.render(frames: 512, into: output)
        var calls: Int64 = 0
        for _ in 0..<2_000 {
            carillon_allocations_arm()
            renderer.render(frames: 512, into: output)
            calls += carillon_allocations_disarm()
        }
        #expect(calls == 0)
    }
}
