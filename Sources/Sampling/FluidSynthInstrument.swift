import Engine
import FluidSynth
import Parameters
import Synchronization

/// The FluidSynth sampler as the engine's `Instrument`: one stereo strip per
/// MIDI channel (`synth.audio-groups` = 16) and separate reverb and chorus
/// returns, shared or one pair per channel (`synth.effects-groups` = 1 or 16),
/// rendered with `fluid_synth_process`.
///
/// Threads: build and configure it before rendering; afterwards only the render
/// thread calls `receive`, `render` and `silence`.
public final class FluidSynthInstrument: Instrument {
    public let synth: Synth
    public let stripCount: Int
    public let effectsGroupCount: Int
    private let effectsCount: Int
    /// Messages FluidSynth refused (no preset on the channel, …) and failed
    /// `fluid_synth_process` calls. Any thread.
    private let refused = Atomic<Int>(0)

    /// FluidSynth renders in blocks of 64 frames and applies events between blocks.
    public let eventGranularity = 64
    /// Frames rendered since creation: where FluidSynth's 64-frame grid stands.
    private var renderedFrames = 0

    public init(synth: Synth) {
        self.synth = synth
        stripCount = synth.audioGroupCount
        effectsGroupCount = synth.effectsGroupCount
        // Reverb and chorus (FluidSynth's two effects channels), left and right, per group.
        effectsCount = 2 * synth.effectsChannelCount * synth.effectsGroupCount
    }

    public var refusedCount: Int { refused.load(ordering: .relaxed) }

    /// Counts a message refused before it reached FluidSynth (`OnDemandInstrument`'s SysEx store full). Render thread.
    @inline(__always) func countRefusal() { refused.add(1, ordering: .relaxed) }

    /// Voices sounding after the last render call (published by the render thread). Any thread.
    public var activeVoices: Int { voices.load(ordering: .relaxed) }
    private let voices = Atomic<Int>(0)

    /// Checks the rate and moves FluidSynth's block grid to start now (by
    /// rendering and dropping the frames left in its current 64-frame block).
    public func prepare(sampleRate: Double, maxFrames: Int) {
        precondition(abs(sampleRate - synth.sampleRate) < 0.5, "the synth was created for another rate")
        let partial = renderedFrames % eventGranularity
        if partial != 0 {
            _ = synth.process(frames: eventGranularity - partial, fx: nil, fxCount: 0, out: nil, outCount: 0)
        }
        renderedFrames = 0
    }

    public func receive(_ message: ChannelMessage) {
        if !send(message) { refused.add(1, ordering: .relaxed) }
    }

    public func render(frames: Int,
                       dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                       effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {
        if !process(frames: frames, dry: dry, effects: effects) { refused.add(1, ordering: .relaxed) }
        // A field read (synth.threadsafe-api is off: no lock), for the view.
        voices.store(synth.activeVoiceCount, ordering: .relaxed)
    }

    public func silence() { _ = synth.allSoundsOff() }

    public func receiveSysEx(_ data: UnsafeBufferPointer<UInt8>) {
        if !synth.sysEx(data) { refused.add(1, ordering: .relaxed) }
    }

    public func setEffect(_ effect: SynthEffect, to value: Float) {
        if !apply(effect, value) { refused.add(1, ordering: .relaxed) }
    }

    // The uncounted forms, for a pool that counts each refusal once for all its synths.

    /// Applies a channel message; false when FluidSynth refused it. Render thread.
    @inline(__always)
    package func send(_ message: ChannelMessage) -> Bool {
        synth.send(status: message.status, data1: message.data1, data2: message.data2)
    }

    /// Adds `frames` frames to the buffers; false when FluidSynth refused. Render thread.
    @inline(__always)
    func process(frames: Int,
                 dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                 effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) -> Bool {
        renderedFrames &+= frames
        return synth.process(frames: frames, fx: effects, fxCount: effectsCount, out: dry, outCount: 2 * stripCount)
    }

    /// The number of effect buffers `process` writes (reverb L/R, chorus L/R per group).
    var effectBufferCount: Int { effectsCount }

    /// Values are clamped to the parameter table's ranges (FluidSynth 2.3's own,
    /// ParameterTable). False when FluidSynth refused. Render thread.
    func apply(_ effect: SynthEffect, _ value: Float) -> Bool {
        guard let v = effect.address.spec.clamp(Double(value)) else { return false }
        let ok: Bool
        switch effect {
        case .reverbRoomSize: ok = synth.setReverbRoomSize(v)
        case .reverbDamping: ok = synth.setReverbDamping(v)
        case .reverbWidth: ok = synth.setReverbWidth(v)
        case .reverbEnabled: ok = synth.reverbOn(v >= 0.5)
        case .chorusVoices: ok = synth.setChorusVoices(Int(v))
        case .chorusDepth: ok = synth.setChorusDepth(milliseconds: v)
        case .chorusSpeed: ok = synth.setChorusSpeed(hertz: v)
        case .chorusEnabled: ok = synth.chorusOn(v >= 0.5)
        }
        return ok
    }
}
