import Sampling
import Engine
import FluidSynth
import Foundation

/// Whether a split render of each file stays within one synth's voices: the
/// file is played on a pool of two synths as `carillon render --threads 2`
/// plays it (same font, block size, blocks in flight, channels kept whole),
/// and the pool's `voiceBudgetExceeded` flag is printed with the largest sum
/// of the synths' per-block voice maxima (`voicePeak`) and the polyphony.
/// A flagged file is one a one-synth render might steal voices in.
///
///   CarillonBench voice-budget SOUNDFONT FILE.mid...
enum VoiceBudgetBenchmark {
    static func run(arguments: [String]) throws {
        guard arguments.count >= 2 else { throw BenchError("usage: CarillonBench voice-budget SOUNDFONT FILE.mid...") }
        let font = arguments[0]
        let exclusive = try SoundFontFile(path: font).hydra.presetsWithExclusiveClass()
        print("file  exceeded  voice_peak  polyphony  whole_channels")
        for file in arguments.dropFirst() {
            let score = try Score(contentsOf: file)
            var fonts: [SoundFont] = []
            var whole: UInt16 = 0
            let members = try (0..<2).map { _ in
                let settings = try Settings.forRendering(sampleRate: 44_100)
                try settings.set("synth.dynamic-sample-loading", true)
                let synth = try Synth(settings: settings)
                fonts.append(try synth.loadSoundFont(at: font))
                let instrument = FluidSynthInstrument(synth: synth)
                let selection = try instrument.pinPresets(selectedBy: score)
                whole = selection.percussionChannels | selection.interactingChannels
                for (preset, channels) in selection.channelsPlaying
                where exclusive.contains(SoundFontHydra.PresetNumber(bank: Int(preset.bank), program: Int(preset.program))) {
                    whole |= channels
                }
                return instrument
            }
            let pool = try SamplerPool(members: members, keepingAlive: fonts, blocksInFlight: 4)
            pool.reset(wholeChannels: whole)
            let renderer = Renderer(instrument: pool)
            renderer.prepare(sampleRate: 44_100, maxFrames: 2048)
            renderer.schedule(score)
            let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * 2048)
            defer { output.deallocate() }
            while !renderer.isScoreFinished || renderer.pendingBlocks > 0 {
                if !renderer.isScoreFinished && renderer.pendingBlocks <= pool.blocksInFlight {
                    renderer.dispatch(frames: 2048)
                } else {
                    _ = renderer.collect(into: output)
                }
            }
            print("\((file as NSString).lastPathComponent)  \(pool.voiceBudgetExceeded ? "yes" : "no")  \(pool.voicePeak)  \(pool.polyphony)  \(String(whole, radix: 16))")
        }
    }
}
