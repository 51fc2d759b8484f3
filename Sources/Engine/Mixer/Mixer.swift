import Parameters
import MIDI

/// Sums a list of strips (`Strip`: which one of the parameter table's
/// `StripID`s, where its buffers are in a block's inputs, whether it is a
/// shared effect return) into interleaved stereo, in the list's order.
/// Each strip has a gain, a balance, mute and solo (any solo silences every
/// strip not soloed; the shared effect returns are solo-safe) and a meter
/// (peak and RMS after the fader); then the master gain, meters and clip
/// counting. Parameters come from a `ParameterStore` once per block and ramp
/// linearly across the block, so changes never click.
///
/// Effects: when the instrument renders one reverb and chorus per channel
/// (`Instrument.effectsGroupCount` = its strip count), a channel's effects
/// go through its strip (the returns' levels applied, then the strip's gain,
/// pan and mute): muting a channel mutes its reverb, and a channel's stem
/// carries its own effects. With one shared group the returns are strips of
/// their own. Effects alone below −100 dBFS count as silence (`effectsFloor`).
///
/// Stems: with `capturesStems`, each strip's block is kept after the master
/// gain (`stem(_:)`); the stems then add up to the output to float rounding.
///
/// Threads: `init` and `prepare` off the render thread; `mix` on the render
/// thread only (no allocation, no locks); the published meters (`Meters`)
/// from any thread.
final class Mixer {
    /// Parameters per strip (`ParameterAddress.StripParameter`), and where each sits in a strip's slots.
    private static let perStrip = ParameterAddress.StripParameter.allCases.count
    private static let gain = place(.gain), pan = place(.pan), mute = place(.mute), solo = place(.solo)
    private static func place(_ p: ParameterAddress.StripParameter) -> Int { ParameterAddress.StripParameter.allCases.firstIndex(of: p)! }

    /// One strip to mix: which (`id`, its parameters `strip(id, …)`), where its
    /// planar left and right are in a block's inputs (`mix`'s `inputs[source]`
    /// and `[source + 1]`; nil there: silent in that block), for a channel with
    /// its own effects group where its reverb L/R and chorus L/R are (`effects`,
    /// −1: none), and whether it is a shared effect return (`reverb`, `chorus`:
    /// its input is the effect, its gain comes after the effect's level, it is
    /// solo-safe).
    struct Strip {
        let id: ParameterAddress.StripID
        let source: Int
        var effects = -1
        var isReturn = false
    }

    let stripCount: Int
    let meters: Meters
    /// The strips, in the order they are summed.
    private let strips: UnsafeMutablePointer<Strip>
    /// The shared returns' places (−1: none).
    let reverbStrip: Int, chorusStrip: Int
    private let parameters: ParameterStore
    /// The master's inserts, in order, before its gain and meters.
    private let masterInserts: ContiguousArray<any AudioInsert>
    /// Each strip's inserts as given, by strip.
    private let givenInserts: [[any AudioInsert]]
    /// Every strip's chain, strip after strip: strip `s` has
    /// `stripInserts[insertStart[s]..<insertStart[s + 1]]`, in order: its
    /// inserts, then the delay that lines it up with the strip lagging most
    /// (`prepare`'s latency compensation).
    private var stripInserts = ContiguousArray<any AudioInsert>()
    private let insertStart: UnsafeMutablePointer<Int>
    /// The most any strip's plugins lag (the rest are delayed to it), in frames.
    private(set) var alignment = 0
    /// Planar left, right: a strip with inserts is summed here (at unity), processed, then faded.
    private var insertBuffer: UnsafeMutablePointer<Float>

    // Render-thread state, allocated once.
    /// Per strip: the store slots of its gain, pan, mute and solo (−1: none).
    private let slots: UnsafeMutablePointer<Int>
    private let state: UnsafeMutablePointer<Float>      // per strip: current left, right gain
    private let sounded: UnsafeMutablePointer<Bool>     // per strip: its last block was not silent
    private let seen: UnsafeMutablePointer<UInt32>      // change counters of every slot
    private let values: UnsafeMutablePointer<Float>     // latest value of every slot
    private var master: Float = 1, reverb: Float = 1, chorus: Float = 1
    /// The store slots the mixer reads each block (strips, master, returns).
    private let watched: UnsafeMutableBufferPointer<Int>
    private var scratch: UnsafeMutablePointer<Float>    // planar left, right mix
    /// Planar left, right per strip: one pair reused, or one per strip while capturing stems.
    private var stripBuffers: UnsafeMutablePointer<Float>
    private var maxFrames = 0
    /// Keep each strip's block for `stem(_:)`. Set before `prepare`.
    var capturesStems = false
    private var anySolo = false

    /// Render-thread statistics of the last block and of the whole run.
    private(set) var blockPeak: Float = 0
    private(set) var peak: Float = 0
    private(set) var clippedSamples = 0

    /// `strips`: what to mix, in order; `sourceNames` names them for the meters
    /// and stems (a track's source; by index, missing ones empty). A channel
    /// strip has its parameters (and inserts) only when there are the 16 MIDI
    /// channels' strips. `stripInserts`: effects on strips (each strip must be
    /// in the list, a channel's with the 16 channel strips).
    init(strips list: [Strip], sourceNames: [String] = [], parameters: ParameterStore,
         masterInserts: [any AudioInsert] = [], stripInserts: [ParameterAddress.StripID: [any AudioInsert]] = [:]) {
        let channels = list.filter { if case .channel = $0.id { true } else { false } }.count
        precondition(list.filter { if case .track = $0.id { true } else { false } }.count <= ParameterAddress.maxTracks,
                     "at most \(ParameterAddress.maxTracks) tracks")
        self.parameters = parameters
        self.masterInserts = ContiguousArray(masterInserts)
        let ids = list.map(\.id)
        reverbStrip = list.firstIndex { $0.isReturn && $0.id == .reverb } ?? -1
        chorusStrip = list.firstIndex { $0.isReturn && $0.id == .chorus } ?? -1
        stripCount = list.count
        strips = .allocate(capacity: max(1, list.count))
        strips.initialize(from: list, count: list.count)
        meters = Meters(strips: ids, sourceNames: sourceNames)
        givenInserts = ids.map { id in
            // A channel strip is that MIDI channel's only with the 16 channel strips.
            if case .channel = id, channels != Slot.channels { return [] }
            return stripInserts[id] ?? []
        }
        precondition(givenInserts.map(\.count).reduce(0, +) == stripInserts.values.map(\.count).reduce(0, +),
                     "an insert on a strip the mixer does not have")
        insertStart = .allocate(capacity: list.count + 1)
        insertStart.initialize(repeating: 0, count: list.count + 1)
        insertBuffer = .allocate(capacity: 0)

        // The places are static lets, initialised on first use: here, not on the render thread.
        _ = (Self.gain, Self.pan, Self.mute, Self.solo)
        // Each strip's store slots, from the parameter table's strip family: the
        // slot of `strip(id, p)` at `perStrip * s + p`'s place in `StripParameter.allCases`.
        let slots = UnsafeMutablePointer<Int>.allocate(capacity: Self.perStrip * list.count)
        slots.initialize(repeating: -1, count: Self.perStrip * list.count)
        for (s, id) in ids.enumerated() {
            // A channel strip has its parameters when the instrument has the 16 MIDI channels' strips.
            if case .channel = id, channels != Slot.channels { continue }
            for (k, p) in ParameterAddress.StripParameter.allCases.enumerated() {
                // The tone's level is applied by the tone itself (it fades on every change).
                if id == .tone && p == .gain { continue }
                slots[Self.perStrip * s + k] = ParameterAddress.strip(id, p).index
            }
        }
        self.slots = slots

        state = .allocate(capacity: 2 * stripCount)
        state.initialize(repeating: 1, count: 2 * stripCount)
        sounded = .allocate(capacity: stripCount)
        sounded.initialize(repeating: false, count: stripCount)
        seen = .allocate(capacity: ParameterStore.slotCount)
        seen.initialize(repeating: .max, count: ParameterStore.slotCount)
        values = .allocate(capacity: ParameterStore.slotCount)
        values.initialize(repeating: 0, count: ParameterStore.slotCount)
        scratch = .allocate(capacity: 0)
        stripBuffers = .allocate(capacity: 0)
        var watched = [Slot.master, Slot.reverbLevel, Slot.reverbOn, Slot.chorusLevel, Slot.chorusOn]
        for i in 0..<(Self.perStrip * stripCount) where slots[i] >= 0 { watched.append(slots[i]) }
        self.watched = .allocate(capacity: watched.count)
        _ = self.watched.initialize(from: watched)
        refreshParameters()
        master = values[Slot.master]
        reverb = returnGain(Slot.reverbLevel, Slot.reverbOn)
        chorus = returnGain(Slot.chorusLevel, Slot.chorusOn)
        for s in 0..<stripCount {
            let (l, r) = targetGains(strip: s)
            state[2 * s] = l; state[2 * s + 1] = r
        }
    }

    deinit {
        state.deallocate(); sounded.deallocate(); seen.deallocate(); values.deallocate(); scratch.deallocate()
        watched.deallocate(); slots.deallocate(); stripBuffers.deallocate(); strips.deallocate()
        insertStart.deallocate(); insertBuffer.deallocate()
    }

    /// Sizes the buffers and lines the strips up: a strip whose inserts (and
    /// `instrumentLatency[s]`, the plugin playing it) lag less than the most
    /// lagging strip's gets a delay for the difference at the end of its chain.
    /// Latency as the plugins report it now (they report it from their start).
    func prepare(maxFrames: Int, instrumentLatency: [Int: Int] = [:]) {
        let lags = givenInserts.indices.map { s in
            givenInserts[s].reduce(0) { $0 + $1.latency } + (instrumentLatency[s] ?? 0)
        }
        alignment = lags.max() ?? 0
        var chained = ContiguousArray<any AudioInsert>()
        for s in givenInserts.indices {
            insertStart[s] = chained.count
            chained += givenInserts[s]
            if lags[s] < alignment { chained.append(DelayLine(length: alignment - lags[s])) }
        }
        insertStart[givenInserts.count] = chained.count
        stripInserts = chained
        let frames = max(1, maxFrames)
        scratch.deallocate()
        scratch = .allocate(capacity: 2 * frames)
        let pairs = capturesStems ? stripCount : 1
        stripBuffers.deallocate()
        stripBuffers = .allocate(capacity: 2 * frames * pairs)
        stripBuffers.initialize(repeating: 0, count: 2 * frames * pairs)
        insertBuffer.deallocate()
        insertBuffer = .allocate(capacity: stripInserts.isEmpty ? 1 : 2 * frames)
        sounded.update(repeating: false, count: stripCount)
        self.maxFrames = frames
    }

    /// How late the mix is on its input, in frames: the strips' alignment
    /// (`prepare`) and the master inserts' latency as they reported it at their last block.
    var latency: Int {
        var total = alignment
        for i in 0..<masterInserts.count { total += masterInserts[i].latency }
        return total
    }

    func resetStatistics() { peak = 0; clippedSamples = 0; blockPeak = 0 }

    /// Strip `s`'s last block after the master gain (planar left, right), nil
    /// when it was silent. With `capturesStems` only. Render thread (or while idle).
    func stem(_ s: Int) -> (left: UnsafePointer<Float>, right: UnsafePointer<Float>)? {
        guard capturesStems, s >= 0, s < stripCount, sounded[s] else { return nil }
        let left = stripBuffers + 2 * s * maxFrames
        return (UnsafePointer(left), UnsafePointer(left + maxFrames))
    }

    /// Reads every parameter slot; returns whether any changed.
    @inline(__always) @discardableResult
    private func refreshParameters() -> Bool {
        var changed = false
        for i in watched {
            let (value, counter) = parameters.read(i)
            if counter != seen[i] {
                seen[i] = counter; values[i] = value; changed = true
            }
        }
        if changed {
            anySolo = false
            for s in 0..<stripCount where slots[Self.perStrip * s + Self.solo] >= 0
                && values[slots[Self.perStrip * s + Self.solo]] > 0.5 { anySolo = true }
        }
        return changed
    }

    /// An effect's return gain: its level, or 0 while the effect is switched
    /// off (so switching fades the return over a block; see `EffectWatcher`).
    @inline(__always)
    private func returnGain(_ level: Int, _ enabled: Int) -> Float {
        values[enabled] >= 0.5 ? values[level] : 0
    }

    /// Strip `s`'s left and right gains: its gain with its pan as balance
    /// (centre is unity on both sides; turning right fades the left), 0 while
    /// muted or while another strip is soloed. The shared returns: their
    /// effect's level times their gain, and solo-safe (another strip's solo
    /// leaves them sounding, so a soloed channel keeps its reverb).
    @inline(__always)
    private func targetGains(strip s: Int) -> (Float, Float) {
        let level: Float = s == reverbStrip ? reverb : s == chorusStrip ? chorus : 1
        let soloSafe = s == reverbStrip || s == chorusStrip
        let base = Self.perStrip * s
        let gainSlot = slots[base + Self.gain], panSlot = slots[base + Self.pan]
        let muteSlot = slots[base + Self.mute], soloSlot = slots[base + Self.solo]
        let muted = muteSlot >= 0 && values[muteSlot] > 0.5
        let soloed = soloSlot >= 0 && values[soloSlot] > 0.5
        guard !muted, !anySolo || soloed || soloSafe else { return (0, 0) }
        let rawGain = gainSlot >= 0 ? values[gainSlot] : 1
        let gain = (rawGain.isNaN ? 0 : max(0, rawGain)) * level
        let rawPan = panSlot >= 0 ? values[panSlot] : 0
        let pan = rawPan.isNaN ? 0 : min(1, max(-1, rawPan))
        return (gain * (pan > 0 ? 1 - pan : 1), gain * (pan < 0 ? 1 + pan : 1))
    }

    /// Mixes one block into `output` (interleaved stereo): each strip's input
    /// from `inputs` (`Strip.source`, `Strip.effects`), strip after strip in
    /// the list's order.
    func mix(frames: Int, inputs: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
             into output: UnsafeMutablePointer<Float>) {
        refreshParameters()
        let mixL = scratch, mixR = scratch + maxFrames
        mixL.update(repeating: 0, count: frames)
        mixR.update(repeating: 0, count: frames)
        let step = 1 / Float(frames)
        let newReverb = returnGain(Slot.reverbLevel, Slot.reverbOn)
        let newChorus = returnGain(Slot.chorusLevel, Slot.chorusOn)

        for s in 0..<stripCount {
            let strip = strips[s]
            // The shared returns ramp to their new level (the channels' own effects take it as they ramp).
            if strip.isReturn { reverb = newReverb; chorus = newChorus }
            addStrip(s, inputs[strip.source], inputs[strip.source + 1],
                     effects: strip.effects >= 0 ? inputs + strip.effects : nil, isEffect: strip.isReturn,
                     frames: frames, step: step, reverbTo: newReverb, chorusTo: newChorus, mixL: mixL, mixR: mixR)
        }
        reverb = newReverb; chorus = newChorus

        // Master: its inserts, then gain ramp, interleave, meters, clips.
        // By index: a for-in over the existentials made two heap calls an insert a block (measured, debug build).
        for i in 0..<masterInserts.count { masterInserts[i].process(left: mixL, right: mixR, frames: frames) }
        let newMaster = values[Slot.master]
        let stats = Self.master(left: mixL, right: mixR, frames: frames, from: master, to: newMaster,
                                step: step, into: output)
        if capturesStems {
            for s in 0..<stripCount where sounded[s] {
                let left = stripBuffers + 2 * s * maxFrames
                Self.scale(left, frames: frames, from: master, to: newMaster, step: step)
                Self.scale(left + maxFrames, frames: frames, from: master, to: newMaster, step: step)
            }
        }
        master = newMaster
        blockPeak = stats.peak
        peak = max(peak, stats.peak)
        clippedSamples &+= stats.clips
        meters.publish(peak: stats.peak, rms: (stats.sumSquares / Float(2 * frames)).squareRoot(), clips: stats.clips)
    }

    /// Adds strip `s` into the mix: its input (and, for a channel with its own
    /// effects group, the group's reverb and chorus at the returns' levels)
    /// through its inserts, then its gain ramp into its strip buffer, metered
    /// there, then summed. A strip with inserts runs them every block, silent
    /// or muted, so their state (a delay's tail) goes on as on a console.
    @inline(__always)
    private func addStrip(_ s: Int, _ inL: UnsafeMutablePointer<Float>?, _ inR: UnsafeMutablePointer<Float>?,
                          effects fx: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>? = nil, isEffect: Bool = false,
                          frames: Int, step: Float, reverbTo: Float = 0, chorusTo: Float = 0,
                          mixL: UnsafeMutablePointer<Float>, mixR: UnsafeMutablePointer<Float>) {
        if insertStart[s] < insertStart[s + 1] {
            let l = insertBuffer, r = insertBuffer + maxFrames
            l.update(repeating: 0, count: frames)
            r.update(repeating: 0, count: frames)
            // What `mixStrip` takes for silence (effects alone below the floor) goes in as silence:
            // a delay after it (an insert's, or the strips' alignment) would make it sound.
            if Self.isSilent(inL, inR, effects: fx, isEffect: isEffect, frames: frames) {
                for i in insertStart[s]..<insertStart[s + 1] { stripInserts[i].process(left: l, right: r, frames: frames) }
                mixStrip(s, l, r, effects: nil, isEffect: isEffect, frames: frames, step: step, mixL: mixL, mixR: mixR)
                return
            }
            if let inL { Self.accumulate(inL, into: l, frames: frames, from: 1, to: 1, step: step) }
            if let inR { Self.accumulate(inR, into: r, frames: frames, from: 1, to: 1, step: step) }
            if let fx {
                if let b = fx[0] { Self.accumulate(b, into: l, frames: frames, from: reverb, to: reverbTo, step: step) }
                if let b = fx[1] { Self.accumulate(b, into: r, frames: frames, from: reverb, to: reverbTo, step: step) }
                if let b = fx[2] { Self.accumulate(b, into: l, frames: frames, from: chorus, to: chorusTo, step: step) }
                if let b = fx[3] { Self.accumulate(b, into: r, frames: frames, from: chorus, to: chorusTo, step: step) }
            }
            for i in insertStart[s]..<insertStart[s + 1] { stripInserts[i].process(left: l, right: r, frames: frames) }
            mixStrip(s, l, r, effects: nil, isEffect: isEffect, frames: frames, step: step, mixL: mixL, mixR: mixR)
        } else {
            mixStrip(s, inL, inR, effects: fx, isEffect: isEffect, frames: frames, step: step, reverbTo: reverbTo,
                     chorusTo: chorusTo, mixL: mixL, mixR: mixR)
        }
    }

    /// No sound in a strip's input, as `mixStrip` judges it: no dry signal and
    /// its effects below `effectsFloor` (for a return, the other way round).
    @inline(__always)
    private static func isSilent(_ inL: UnsafeMutablePointer<Float>?, _ inR: UnsafeMutablePointer<Float>?,
                                 effects fx: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?, isEffect: Bool,
                                 frames: Int) -> Bool {
        var level: Float = 0, effectsLevel: Float = 0
        if let inL { level = max(level, peak(inL, frames)) }
        if let inR { level = max(level, peak(inR, frames)) }
        if let fx { for j in 0..<4 { if let b = fx[j] { effectsLevel = max(effectsLevel, peak(b, frames)) } } }
        if isEffect { swap(&level, &effectsLevel) }
        return level == 0 && effectsLevel < effectsFloor
    }

    /// `addStrip` after the inserts: the gain ramp, the meter, the sum.
    @inline(__always)
    private func mixStrip(_ s: Int, _ inL: UnsafeMutablePointer<Float>?, _ inR: UnsafeMutablePointer<Float>?,
                          effects fx: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?, isEffect: Bool,
                          frames: Int, step: Float, reverbTo: Float = 0, chorusTo: Float = 0,
                          mixL: UnsafeMutablePointer<Float>, mixR: UnsafeMutablePointer<Float>) {
        let (toL, toR) = targetGains(strip: s)
        let fromL = state[2 * s], fromR = state[2 * s + 1]
        state[2 * s] = toL; state[2 * s + 1] = toR
        sounded[s] = false
        var level: Float = 0, effectsLevel: Float = 0
        if let inL { level = max(level, Self.peak(inL, frames)) }
        if let inR { level = max(level, Self.peak(inR, frames)) }
        if let fx { for j in 0..<4 { if let b = fx[j] { effectsLevel = max(effectsLevel, Self.peak(b, frames)) } } }
        if isEffect { swap(&level, &effectsLevel) }
        // Effects alone below the floor are silence (FluidSynth's idle reverb leaves a residue).
        if effectsLevel >= Self.effectsFloor { level = max(level, effectsLevel) }
        guard level > 0, fromL != 0 || toL != 0 || fromR != 0 || toR != 0 else {
            meters.setStripLevels(s, peak: 0, rms: 0)
            return
        }
        let outL = stripBuffers + (capturesStems ? 2 * s * maxFrames : 0), outR = outL + maxFrames
        outL.update(repeating: 0, count: frames)
        outR.update(repeating: 0, count: frames)
        if let inL { Self.accumulate(inL, into: outL, frames: frames, from: fromL, to: toL, step: step) }
        if let inR { Self.accumulate(inR, into: outR, frames: frames, from: fromR, to: toR, step: step) }
        if let fx {
            if let l = fx[0] { Self.accumulate(l, into: outL, frames: frames, from: fromL * reverb, to: toL * reverbTo, step: step) }
            if let r = fx[1] { Self.accumulate(r, into: outR, frames: frames, from: fromR * reverb, to: toR * reverbTo, step: step) }
            if let l = fx[2] { Self.accumulate(l, into: outL, frames: frames, from: fromL * chorus, to: toL * chorusTo, step: step) }
            if let r = fx[3] { Self.accumulate(r, into: outR, frames: frames, from: fromR * chorus, to: toR * chorusTo, step: step) }
        }
        let (peak, sumSquares) = Self.levels(outL, outR, frames)
        meters.setStripLevels(s, peak: peak, rms: (sumSquares / Float(2 * frames)).squareRoot())
        Self.accumulate(outL, into: mixL, frames: frames, from: 1, to: 1, step: step)
        Self.accumulate(outR, into: mixR, frames: frames, from: 1, to: 1, step: step)
        sounded[s] = true
    }

    /// Effects output below this (−100 dBFS) with no dry sound is silence: an
    /// idle FluidSynth reverb unit never outputs exact zeros (its anti-denormal
    /// offset leaves ~1e-7), and a strip carrying only that neither sounds in
    /// the mix nor writes a stem.
    static let effectsFloor: Float = 1e-5

    /// Store slots (parameter indices) the mixer reads, worked out once.
    private enum Slot {
        static let channels = 16
        static let master = ParameterAddress.masterGain.index
        static let reverbLevel = ParameterAddress.reverb(.level).index
        static let reverbOn = ParameterAddress.reverb(.enabled).index
        static let chorusLevel = ParameterAddress.chorus(.level).index
        static let chorusOn = ParameterAddress.chorus(.enabled).index
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

    /// The largest magnitude and the sum of squares over two buffers.
    @inline(__always)
    private static func levels(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>,
                               _ frames: Int) -> (peak: Float, sumSquares: Float) {
        let l = levels(left, frames), r = levels(right, frames)
        return (max(l.peak, r.peak), l.sumSquares + r.sumSquares)
    }

    @inline(__always)
    private static func levels(_ buffer: UnsafeMutablePointer<Float>, _ frames: Int) -> (peak: Float, sumSquares: Float) {
        var s0: Float = 0, s1: Float = 0, s2: Float = 0, s3: Float = 0
        var i = 0
        while i + 4 <= frames {
            let a = buffer[i], b = buffer[i + 1], c = buffer[i + 2], d = buffer[i + 3]
            s0 += a * a; s1 += b * b; s2 += c * c; s3 += d * d
            i += 4
        }
        while i < frames { s0 += buffer[i] * buffer[i]; i += 1 }
        return (peak(buffer, frames), (s0 + s1) + (s2 + s3))
    }

    /// buffer ×= the gain going linearly from `from` to `to` (as `master` computes it, frame for frame).
    @inline(__always)
    private static func scale(_ buffer: UnsafeMutablePointer<Float>, frames: Int, from: Float, to: Float, step: Float) {
        let delta = (to - from) * step
        for i in 0..<frames { buffer[i] *= from + delta * Float(i + 1) }
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
