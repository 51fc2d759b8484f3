import Atomics

/// Sums the instrument's strips (one per MIDI channel) and effects returns into
/// interleaved stereo, with per-strip gain, balance, mute and solo, a master
/// gain, meters and clip counting. Parameters come from a `ParameterStore`
/// once per block and ramp linearly across the block, so changes never click.
///
/// Threads: `init` anywhere; `mix` on the render thread only (no allocation,
/// no locks); the published meters (`Meters`) from any thread.
final class Mixer {
    let stripCount: Int
    let meters: Meters
    private let parameters: ParameterStore

    // Render-thread state, allocated once.
    private let state: UnsafeMutablePointer<Float>      // per strip: current left, right gain
    private let seen: UnsafeMutablePointer<UInt32>      // change counters of every slot
    private let values: UnsafeMutablePointer<Float>     // latest value of every slot
    private var master: Float = 1, reverb: Float = 1, chorus: Float = 1
    private var scratch: UnsafeMutablePointer<Float>    // planar left, right mix
    private var maxFrames = 0
    /// The built-in tone, added after the strips and returns, before the master gain.
    private var tone = ToneGenerator()

    /// Render-thread statistics of the last block and of the whole run.
    private(set) var blockPeak: Float = 0
    private(set) var peak: Float = 0
    private(set) var clippedSamples = 0

    init(stripCount: Int, parameters: ParameterStore) {
        self.stripCount = stripCount
        self.parameters = parameters
        meters = Meters(stripCount: stripCount)
        state = .allocate(capacity: 2 * stripCount)
        state.initialize(repeating: 1, count: 2 * stripCount)
        seen = .allocate(capacity: ParameterStore.slotCount)
        seen.initialize(repeating: .max, count: ParameterStore.slotCount)
        values = .allocate(capacity: ParameterStore.slotCount)
        values.initialize(repeating: 0, count: ParameterStore.slotCount)
        scratch = .allocate(capacity: 0)
        refreshParameters()
        master = values[ParameterStore.Parameter.masterGain.index]
        reverb = returnGain(.reverbReturn, .reverbEnabled)
        chorus = returnGain(.chorusReturn, .chorusEnabled)
        for s in 0..<stripCount {
            let (l, r) = targetGains(strip: s, anySolo: anySolo)
            state[2 * s] = l; state[2 * s + 1] = r
        }
    }

    deinit {
        state.deallocate(); seen.deallocate(); values.deallocate(); scratch.deallocate()
    }

    func prepare(maxFrames: Int, sampleRate: Double = 44_100) {
        tone.prepare(sampleRate: sampleRate)
        scratch.deallocate()
        scratch = .allocate(capacity: 2 * max(1, maxFrames))
        self.maxFrames = maxFrames
    }

    func resetStatistics() { peak = 0; clippedSamples = 0; blockPeak = 0 }

    private var anySolo = false

    /// Reads every parameter slot; returns whether any changed.
    @inline(__always) @discardableResult
    private func refreshParameters() -> Bool {
        var changed = false
        for i in 0..<ParameterStore.slotCount {
            let (value, counter) = parameters.read(i)
            if counter != seen[i] { seen[i] = counter; values[i] = value; changed = true }
        }
        if changed {
            anySolo = false
            for s in 0..<min(stripCount, ParameterStore.stripCount)
            where values[ParameterStore.Parameter.stripSolo(s).index] > 0.5 { anySolo = true }
        }
        return changed
    }

    /// An effect's return gain: its level, or 0 while the effect is switched
    /// off (so switching fades the return over a block; see `EffectWatcher`).
    @inline(__always)
    private func returnGain(_ level: ParameterStore.Parameter, _ enabled: EffectParameter) -> Float {
        values[ParameterStore.Parameter.effect(enabled).index] >= 0.5 ? values[level.index] : 0
    }

    @inline(__always)
    private func targetGains(strip s: Int, anySolo: Bool) -> (Float, Float) {
        // With fewer strips than channels (a single stereo output), strip 0 is the whole mix.
        guard stripCount == ParameterStore.stripCount else { return (1, 1) }
        let gain = values[ParameterStore.Parameter.stripGain(s).index]
        let pan = min(1, max(-1, values[ParameterStore.Parameter.stripPan(s).index]))
        let muted = values[ParameterStore.Parameter.stripMute(s).index] > 0.5
        let soloed = values[ParameterStore.Parameter.stripSolo(s).index] > 0.5
        guard !muted, !anySolo || soloed else { return (0, 0) }
        // Balance: centre is unity on both sides; turning right fades the left.
        return (gain * (pan > 0 ? 1 - pan : 1), gain * (pan < 0 ? 1 + pan : 1))
    }

    /// Mixes `frames` frames of `dry` (2 × stripCount planar buffers) and
    /// `effects` (reverb L/R, chorus L/R) into `output` (interleaved stereo).
    func mix(frames: Int,
             dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
             effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
             into output: UnsafeMutablePointer<Float>) {
        refreshParameters()
        let mixL = scratch, mixR = scratch + maxFrames
        mixL.update(repeating: 0, count: frames)
        mixR.update(repeating: 0, count: frames)
        let step = 1 / Float(frames)

        for s in 0..<stripCount {
            let (toL, toR) = targetGains(strip: s, anySolo: anySolo)
            let fromL = state[2 * s], fromR = state[2 * s + 1]
            state[2 * s] = toL; state[2 * s + 1] = toR
            guard let inL = dry[2 * s], let inR = dry[2 * s + 1] else { continue }
            let level = Self.peak(inL, frames) 
            let levelR = Self.peak(inR, frames)
            meters.setStripPeak(s, max(level * max(fromL, toL), levelR * max(fromR, toR)))
            guard level > 0 || levelR > 0, fromL != 0 || toL != 0 || fromR != 0 || toR != 0 else { continue }
            Self.accumulate(inL, into: mixL, frames: frames, from: fromL, to: toL, step: step)
            Self.accumulate(inR, into: mixR, frames: frames, from: fromR, to: toR, step: step)
        }

        let newReverb = returnGain(.reverbReturn, .reverbEnabled)
        let newChorus = returnGain(.chorusReturn, .chorusEnabled)
        if let l = effects[0], let r = effects[1] {
            Self.accumulate(l, into: mixL, frames: frames, from: reverb, to: newReverb, step: step)
            Self.accumulate(r, into: mixR, frames: frames, from: reverb, to: newReverb, step: step)
        }
        if let l = effects[2], let r = effects[3] {
            Self.accumulate(l, into: mixL, frames: frames, from: chorus, to: newChorus, step: step)
            Self.accumulate(r, into: mixR, frames: frames, from: chorus, to: newChorus, step: step)
        }
        reverb = newReverb; chorus = newChorus

        let toneEnabled = values[ParameterStore.Parameter.tone(.enabled).index]
        if toneEnabled >= 0.5 || !tone.isSilent {
            tone.render(frames: frames, left: mixL, right: mixR,
                        frequency: values[ParameterStore.Parameter.tone(.frequency).index],
                        level: values[ParameterStore.Parameter.tone(.level).index],
                        waveform: values[ParameterStore.Parameter.tone(.waveform).index],
                        enabled: toneEnabled)
        }

        // Master: gain ramp, interleave, meters, clips.
        let newMaster = values[ParameterStore.Parameter.masterGain.index]
        let stats = Self.master(left: mixL, right: mixR, frames: frames, from: master, to: newMaster,
                                step: step, into: output)
        master = newMaster
        blockPeak = stats.peak
        peak = max(peak, stats.peak)
        clippedSamples &+= stats.clips
        meters.publish(peak: stats.peak, rms: (stats.sumSquares / Float(2 * frames)).squareRoot(), clips: stats.clips)
    }

    // MARK: Kernels
    //
    // Plain loops over raw pointers that the optimiser vectorises: no
    // loop-carried float dependency (the gain ramp is computed per frame) and
    // only integer reductions (magnitudes compared as bit patterns with the
    // sign cleared, which order like the floats they are and need no NaN
    // handling) except the sum of squares, kept as four partial sums.

    /// The largest magnitude in the buffer.
    @inline(__always)
    private static func peak(_ buffer: UnsafeMutablePointer<Float>, _ frames: Int) -> Float {
        var best: UInt32 = 0
        for i in 0..<frames {
            let m = buffer[i].bitPattern & 0x7FFF_FFFF
            best = m > best ? m : best
        }
        return Float(bitPattern: best)
    }

    /// mix += input × gain, the gain going linearly from `from` to `to` over the frames.
    @inline(__always)
    private static func accumulate(_ input: UnsafeMutablePointer<Float>, into mix: UnsafeMutablePointer<Float>,
                                   frames: Int, from: Float, to: Float, step: Float) {
        if from == to {
            if from == 1 {
                for i in 0..<frames { mix[i] += input[i] }
            } else if from != 0 {
                for i in 0..<frames { mix[i] += input[i] * from }
            }
        } else {
            let delta = (to - from) * step
            for i in 0..<frames { mix[i] += input[i] * (from + delta * Float(i + 1)) }
        }
    }

    /// Applies the master gain ramp and interleaves into `output`; returns the
    /// peak, the sum of squares and the samples beyond ±1.
    @inline(__always)
    private static func master(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int,
                               from: Float, to: Float, step: Float, into output: UnsafeMutablePointer<Float>)
        -> (peak: Float, sumSquares: Float, clips: Int) {
        let delta = (to - from) * step
        let one = Float(1).bitPattern
        for i in 0..<frames {
            let g = from + delta * Float(i + 1)
            output[2 * i] = left[i] * g
            output[2 * i + 1] = right[i] * g
        }
        var best: UInt32 = 0
        var clips: UInt32 = 0
        var s0: Float = 0, s1: Float = 0, s2: Float = 0, s3: Float = 0
        let samples = 2 * frames
        var i = 0
        while i + 4 <= samples {
            let a = output[i], b = output[i + 1], c = output[i + 2], d = output[i + 3]
            s0 += a * a; s1 += b * b; s2 += c * c; s3 += d * d
            i += 4
        }
        while i < samples { s0 += output[i] * output[i]; i += 1 }
        for j in 0..<samples {
            let m = output[j].bitPattern & 0x7FFF_FFFF
            best = m > best ? m : best
            clips &+= m > one ? 1 : 0
        }
        return (Float(bitPattern: best), (s0 + s1) + (s2 + s3), Int(clips))
    }
}
