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
        reverb = values[ParameterStore.Parameter.reverbReturn.index]
        chorus = values[ParameterStore.Parameter.chorusReturn.index]
        for s in 0..<stripCount {
            let (l, r) = targetGains(strip: s, anySolo: anySolo)
            state[2 * s] = l; state[2 * s + 1] = r
        }
    }

    deinit {
        state.deallocate(); seen.deallocate(); values.deallocate(); scratch.deallocate()
    }

    func prepare(maxFrames: Int) {
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

        let newReverb = values[ParameterStore.Parameter.reverbReturn.index]
        let newChorus = values[ParameterStore.Parameter.chorusReturn.index]
        if let l = effects[0], let r = effects[1] {
            Self.accumulate(l, into: mixL, frames: frames, from: reverb, to: newReverb, step: step)
            Self.accumulate(r, into: mixR, frames: frames, from: reverb, to: newReverb, step: step)
        }
        if let l = effects[2], let r = effects[3] {
            Self.accumulate(l, into: mixL, frames: frames, from: chorus, to: newChorus, step: step)
            Self.accumulate(r, into: mixR, frames: frames, from: chorus, to: newChorus, step: step)
        }
        reverb = newReverb; chorus = newChorus

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
    // Eight frames at a time in SIMD registers; the reductions (peak, sum of
    // squares, clip count) keep eight partial results and fold them at the end.
    // Magnitudes are compared as integer bit patterns (sign bit cleared), which
    // order like the floats they are and need no NaN handling.

    private typealias Floats = SIMD8<Float>
    private typealias Bits = SIMD8<UInt32>
    private static let lanes = 8
    private static let ramp = Floats(1, 2, 3, 4, 5, 6, 7, 8)

    @inline(__always)
    private static func load(_ p: UnsafeMutablePointer<Float>, _ i: Int) -> Floats {
        UnsafeRawPointer(p + i).loadUnaligned(as: Floats.self)
    }

    @inline(__always)
    private static func store(_ v: Floats, _ p: UnsafeMutablePointer<Float>, _ i: Int) {
        UnsafeMutableRawPointer(p + i).storeBytes(of: v, as: Floats.self)
    }

    /// The largest magnitude in the buffer.
    @inline(__always)
    private static func peak(_ buffer: UnsafeMutablePointer<Float>, _ frames: Int) -> Float {
        let mask = Bits(repeating: 0x7FFF_FFFF)
        var best = Bits(repeating: 0)
        var i = 0
        while i + lanes <= frames {
            best = pointwiseMax(best, UnsafeRawPointer(buffer + i).loadUnaligned(as: Bits.self) & mask)
            i += lanes
        }
        var result = best.max()
        while i < frames { result = Swift.max(result, buffer[i].bitPattern & 0x7FFF_FFFF); i += 1 }
        return Float(bitPattern: result)
    }

    /// mix += input × gain, the gain going linearly from `from` to `to` over the frames.
    @inline(__always)
    private static func accumulate(_ input: UnsafeMutablePointer<Float>, into mix: UnsafeMutablePointer<Float>,
                                   frames: Int, from: Float, to: Float, step: Float) {
        if from == to && from == 0 { return }
        let delta = (to - from) * step
        var gain = Floats(repeating: from) + ramp * delta
        let advance = Floats(repeating: delta * Float(lanes))
        var i = 0
        if delta == 0 {
            if from == 1 {
                while i + lanes <= frames { store(load(mix, i) + load(input, i), mix, i); i += lanes }
            } else {
                while i + lanes <= frames { store(load(mix, i) + load(input, i) * gain, mix, i); i += lanes }
            }
        } else {
            while i + lanes <= frames {
                store(load(mix, i) + load(input, i) * gain, mix, i)
                gain += advance
                i += lanes
            }
        }
        while i < frames { mix[i] += input[i] * (from + delta * Float(i + 1)); i += 1 }
    }

    /// Applies the master gain ramp and interleaves into `output`; returns the
    /// peak, the sum of squares and the samples beyond ±1.
    @inline(__always)
    private static func master(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int,
                               from: Float, to: Float, step: Float, into output: UnsafeMutablePointer<Float>)
        -> (peak: Float, sumSquares: Float, clips: Int) {
        let delta = (to - from) * step
        var gain = Floats(repeating: from) + ramp * delta
        let advance = Floats(repeating: delta * Float(lanes))
        let mask = Bits(repeating: 0x7FFF_FFFF), one = Bits(repeating: Float(1).bitPattern)
        var best = Bits(repeating: 0), squares = Floats(repeating: 0), clips = Bits(repeating: 0)
        var i = 0
        while i + lanes <= frames {
            let l = load(left, i) * gain, r = load(right, i) * gain
            gain += advance
            let lm = unsafeBitCast(l, to: Bits.self) & mask, rm = unsafeBitCast(r, to: Bits.self) & mask
            best = pointwiseMax(best, pointwiseMax(lm, rm))
            squares += l * l + r * r
            clips &+= Bits(repeating: 0).replacing(with: 1, where: lm .> one)
            clips &+= Bits(repeating: 0).replacing(with: 1, where: rm .> one)
            // Interleave: l0 r0 l1 r1 … as two 8-lane stores.
            let low = SIMD8<Float>(l[0], r[0], l[1], r[1], l[2], r[2], l[3], r[3])
            let high = SIMD8<Float>(l[4], r[4], l[5], r[5], l[6], r[6], l[7], r[7])
            store(low, output, 2 * i)
            store(high, output, 2 * i + lanes)
            i += lanes
        }
        var peakBits = best.max()
        var sum = squares.sum()
        var clipCount = Int(clips.wrappedSum())
        while i < frames {
            let g = from + delta * Float(i + 1)
            let l = left[i] * g, r = right[i] * g
            output[2 * i] = l; output[2 * i + 1] = r
            peakBits = Swift.max(peakBits, l.bitPattern & 0x7FFF_FFFF, r.bitPattern & 0x7FFF_FFFF)
            sum += l * l + r * r
            clipCount += (abs(l) > 1 ? 1 : 0) + (abs(r) > 1 ? 1 : 0)
            i += 1
        }
        return (Float(bitPattern: peakBits), sum, clipCount)
    }
}

/// Levels for a UI to read from any thread, published by the render thread
/// once per block: the last block's master peak and RMS (linear), each
/// strip's peak, and the count of samples beyond full scale.
public final class Meters: @unchecked Sendable {
    public let stripCount: Int
    private let words: UnsafeMutablePointer<UInt32.AtomicRepresentation>
    private let clips: UnsafeAtomic<Int>

    init(stripCount: Int) {
        self.stripCount = stripCount
        words = .allocate(capacity: 2 + stripCount)
        for i in 0..<(2 + stripCount) { (words + i).initialize(to: .init(0)) }
        clips = .create(0)
    }

    deinit {
        words.deinitialize(count: 2 + stripCount); words.deallocate()
        _ = clips.destroy()
    }

    @inline(__always) private func word(_ i: Int) -> UnsafeAtomic<UInt32> { UnsafeAtomic(at: words + i) }

    public var peak: Float { Float(bitPattern: word(0).load(ordering: .relaxed)) }
    public var rms: Float { Float(bitPattern: word(1).load(ordering: .relaxed)) }
    public func stripPeak(_ strip: Int) -> Float { Float(bitPattern: word(2 + strip).load(ordering: .relaxed)) }
    /// Samples beyond ±1 since the renderer was prepared.
    public var clippedSamples: Int { clips.load(ordering: .relaxed) }

    @inline(__always) func publish(peak: Float, rms: Float, clips count: Int) {
        word(0).store(peak.bitPattern, ordering: .relaxed)
        word(1).store(rms.bitPattern, ordering: .relaxed)
        if count > 0 { clips.wrappingIncrement(by: count, ordering: .relaxed) }
    }

    @inline(__always) func setStripPeak(_ strip: Int, _ value: Float) {
        word(2 + strip).store(value.bitPattern, ordering: .relaxed)
    }

    func resetClips() { clips.store(0, ordering: .relaxed) }
}
