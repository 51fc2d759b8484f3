import Controls

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
    /// The store slots the mixer reads each block (strips, master, returns, tone).
    private let watched: UnsafeMutableBufferPointer<Int>
    private var scratch: UnsafeMutablePointer<Float>    // planar left, right mix
    private var maxFrames = 0
    /// The built-in tone, added after the strips and returns, before the master gain.
    private var tone = ToneGenerator()
    /// The oscillator strip's current left and right gains (`osc.level`, `osc.pan`).
    private var oscillatorGain: (Float, Float) = (0, 0)
    /// Whether the tone's target frequency follows `tone.note` and `tone.a4`
    /// (the last of the three set) rather than `tone.frequency`.
    private var toneFollowsNote = false
    private var toneNoteFrequency: Float = 440

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
        var watched = [Slot.master, Slot.reverbLevel, Slot.reverbOn, Slot.chorusLevel, Slot.chorusOn]
            + Slot.tone.map(\.self) + [Slot.toneNote, Slot.toneA4, Slot.oscLevel, Slot.oscPan]
        for s in 0..<Slot.strips { watched += [Slot.gain(s), Slot.pan(s), Slot.mute(s), Slot.solo(s)] }
        self.watched = .allocate(capacity: watched.count)
        _ = self.watched.initialize(from: watched)
        // Set before the mixer existed: a note or A4 set (and no frequency) wins.
        let followsNote = parameters.read(Slot.toneFrequency).counter == 0
            && (parameters.read(Slot.toneNote).counter != 0 || parameters.read(Slot.toneA4).counter != 0)
        refreshParameters()
        toneFollowsNote = followsNote
        toneNoteFrequency = Self.noteFrequency(values[Slot.toneNote], a4: values[Slot.toneA4])
        oscillatorGain = oscillatorTargetGains()
        master = values[Slot.master]
        reverb = returnGain(Slot.reverbLevel, Slot.reverbOn)
        chorus = returnGain(Slot.chorusLevel, Slot.chorusOn)
        for s in 0..<stripCount {
            let (l, r) = targetGains(strip: s, anySolo: anySolo)
            state[2 * s] = l; state[2 * s + 1] = r
        }
    }

    deinit {
        state.deallocate(); seen.deallocate(); values.deallocate(); scratch.deallocate(); watched.deallocate()
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
        for i in watched {
            let (value, counter) = parameters.read(i)
            if counter != seen[i] {
                seen[i] = counter; values[i] = value; changed = true
                if i == Slot.toneFrequency { toneFollowsNote = false }
                if i == Slot.toneNote || i == Slot.toneA4 { toneFollowsNote = true }
            }
        }
        if changed { toneNoteFrequency = Self.noteFrequency(values[Slot.toneNote], a4: values[Slot.toneA4]) }
        if changed {
            anySolo = false
            for s in 0..<min(stripCount, Slot.strips) where values[Slot.solo(s)] > 0.5 { anySolo = true }
        }
        return changed
    }

    /// A4 · 2^((note − 69) / 12); NaN in either gives NaN (the tone then holds its frequency).
    private static func noteFrequency(_ note: Float, a4: Float) -> Float {
        Float(Double(a4) * ToneGenerator.exp2((Double(note) - 69) / 12))
    }

    /// The oscillator strip's left and right gains: `osc.level` with `osc.pan` as balance.
    @inline(__always)
    private func oscillatorTargetGains() -> (Float, Float) {
        let gain = values[Slot.oscLevel].isNaN ? 0 : max(0, values[Slot.oscLevel])
        let pan = values[Slot.oscPan].isNaN ? 0 : min(1, max(-1, values[Slot.oscPan]))
        return (gain * (pan > 0 ? 1 - pan : 1), gain * (pan < 0 ? 1 + pan : 1))
    }

    /// An effect's return gain: its level, or 0 while the effect is switched
    /// off (so switching fades the return over a block; see `EffectWatcher`).
    @inline(__always)
    private func returnGain(_ level: Int, _ enabled: Int) -> Float {
        values[enabled] >= 0.5 ? values[level] : 0
    }

    @inline(__always)
    private func targetGains(strip s: Int, anySolo: Bool) -> (Float, Float) {
        // With fewer strips than channels (a single stereo output), strip 0 is the whole mix.
        guard stripCount == Slot.strips else { return (1, 1) }
        let gain = values[Slot.gain(s)]
        let pan = min(1, max(-1, values[Slot.pan(s)]))
        let muted = values[Slot.mute(s)] > 0.5
        let soloed = values[Slot.solo(s)] > 0.5
        guard !muted, !anySolo || soloed else { return (0, 0) }
        // Balance: centre is unity on both sides; turning right fades the left.
        return (gain * (pan > 0 ? 1 - pan : 1), gain * (pan < 0 ? 1 + pan : 1))
    }

    /// Mixes `frames` frames of `dry` (2 × stripCount planar buffers) and
    /// `effects` (reverb L/R, chorus L/R) into `output` (interleaved stereo).
    func mix(frames: Int,
             dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
             effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
             into output: UnsafeMutablePointer<Float>,
             oscillator: UnsafeMutablePointer<Float>? = nil, oscillatorStride: Int = 0) {
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

        let newReverb = returnGain(Slot.reverbLevel, Slot.reverbOn)
        let newChorus = returnGain(Slot.chorusLevel, Slot.chorusOn)
        if let l = effects[0], let r = effects[1] {
            Self.accumulate(l, into: mixL, frames: frames, from: reverb, to: newReverb, step: step)
            Self.accumulate(r, into: mixR, frames: frames, from: reverb, to: newReverb, step: step)
        }
        if let l = effects[2], let r = effects[3] {
            Self.accumulate(l, into: mixL, frames: frames, from: chorus, to: newChorus, step: step)
            Self.accumulate(r, into: mixR, frames: frames, from: chorus, to: newChorus, step: step)
        }
        reverb = newReverb; chorus = newChorus

        // The oscillator's strip: planar left at `oscillator`, right one stride on.
        let newOscillator = oscillatorTargetGains()
        if let oscillator {
            Self.accumulate(oscillator, into: mixL, frames: frames, from: oscillatorGain.0, to: newOscillator.0, step: step)
            Self.accumulate(oscillator + oscillatorStride, into: mixR, frames: frames,
                            from: oscillatorGain.1, to: newOscillator.1, step: step)
        }
        oscillatorGain = newOscillator

        let toneEnabled = values[Slot.toneEnabled]
        if toneEnabled >= 0.5 || !tone.isSilent {
            // A note (or A4) change fades out and in at the new pitch; a frequency change glides.
            tone.render(frames: frames, left: mixL, right: mixR,
                        frequency: toneFollowsNote ? toneNoteFrequency : values[Slot.toneFrequency],
                        level: values[Slot.toneLevel],
                        waveform: values[Slot.toneWaveform], enabled: toneEnabled, glides: !toneFollowsNote)
        }

        // Master: gain ramp, interleave, meters, clips.
        let newMaster = values[Slot.master]
        let stats = Self.master(left: mixL, right: mixR, frames: frames, from: master, to: newMaster,
                                step: step, into: output)
        master = newMaster
        blockPeak = stats.peak
        peak = max(peak, stats.peak)
        clippedSamples &+= stats.clips
        meters.publish(peak: stats.peak, rms: (stats.sumSquares / Float(2 * frames)).squareRoot(), clips: stats.clips)
    }

    /// Store slots (parameter indices) the mixer reads, worked out once.
    private enum Slot {
        static let strips = 16
        static let master = ParameterAddress.masterGain.index
        static let reverbLevel = ParameterAddress.reverb(.level).index
        static let reverbOn = ParameterAddress.reverb(.enabled).index
        static let chorusLevel = ParameterAddress.chorus(.level).index
        static let chorusOn = ParameterAddress.chorus(.enabled).index
        static let toneFrequency = ParameterAddress.tone(.frequency).index
        static let toneLevel = ParameterAddress.tone(.level).index
        static let toneWaveform = ParameterAddress.tone(.waveform).index
        static let toneEnabled = ParameterAddress.tone(.enabled).index
        static let tone = [toneFrequency, toneLevel, toneWaveform, toneEnabled]
        static let toneNote = ParameterAddress.tone(.note).index
        static let toneA4 = ParameterAddress.tone(.a4).index
        static let oscLevel = ParameterAddress.osc(.level).index
        static let oscPan = ParameterAddress.osc(.pan).index
        /// Strip `s` (0...15): each strip's parameters sit together at a fixed
        /// stride (plain integers, so the render thread touches no array).
        private static let stripBase = ParameterAddress.strip(0, .gain).index
        private static let stride = ParameterAddress.strip(1, .gain).index - stripBase
        private static func offset(_ p: ParameterAddress.Strip) -> Int { ParameterAddress.strip(0, p).index - stripBase }
        private static let panOffset = offset(.pan), muteOffset = offset(.mute), soloOffset = offset(.solo)
        @inline(__always) static func gain(_ s: Int) -> Int { stripBase + s * stride }
        @inline(__always) static func pan(_ s: Int) -> Int { stripBase + s * stride + panOffset }
        @inline(__always) static func mute(_ s: Int) -> Int { stripBase + s * stride + muteOffset }
        @inline(__always) static func solo(_ s: Int) -> Int { stripBase + s * stride + soloOffset }
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
