import Parameters

/// A sound source the renderer drives: the FluidSynth sampler in the product,
/// a fake in tests.
///
/// Threads: `prepare` before rendering starts; `receive`, `render` and
/// `silence` on the render thread only, where they must not allocate, lock,
/// throw or log.
public protocol Instrument: AnyObject {
    /// Stereo outputs the instrument renders to; MIDI channel `c` sounds in
    /// output `c % stripCount` (16: one strip per MIDI channel).
    var stripCount: Int { get }

    /// The instrument applies events only every `eventGranularity` frames of
    /// its own clock (FluidSynth: 64); after `prepare`, that grid starts at the
    /// renderer's frame 0. The renderer moves each event to the nearest grid
    /// frame, so onsets are within half a grid step of exact.
    var eventGranularity: Int { get }

    /// Reverb and chorus units: 1 (shared by every channel) or `stripCount`
    /// (MIDI channel `c` sends to unit `c % effectsGroupCount`, so a strip's
    /// effects can follow its fader, mute and solo, and its stem carries them).
    var effectsGroupCount: Int { get }

    /// Called before rendering, with the largest `frames` a render call will ask for.
    /// An instrument with an event grid aligns it to start now.
    func prepare(sampleRate: Double, maxFrames: Int)

    /// Applies one channel message now. Render thread.
    func receive(_ message: ChannelMessage)

    /// Applies one channel message, the live take's number of the input message
    /// it came from with it (`TimedMessage.take`, 0: none). An instrument that
    /// holds a message back (`OnDemandInstrument`: until its preset is loaded)
    /// reports where it applied it through its `TakeStamps`. Render thread.
    func receive(_ message: ChannelMessage, take: UInt32)

    /// Adds `frames` frames of sound into planar buffers, which the renderer
    /// has zeroed: `dry` holds `2 × stripCount` pointers (left, right of each
    /// strip), `effects` 4 per effects group (reverb left/right, chorus
    /// left/right of group 0, then of group 1, …). Render thread.
    func render(frames: Int,
                dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>)

    /// Stops every sound at once (all sound off on every channel). Render thread.
    func silence()

    /// Applies a System Exclusive message now: the bytes between F0 and F7
    /// (both excluded). The buffer is only valid during the call. Render thread.
    func receiveSysEx(_ data: UnsafeBufferPointer<UInt8>)

    /// Changes one effect setting now (FluidSynth's units; a switch is on at
    /// 0.5 and above). The renderer calls it once per change, at a block's
    /// start. Render thread.
    func setEffect(_ effect: SynthEffect, to value: Float)

    /// Ends a block: the renderer calls it after the block's last `render`
    /// call. An instrument that defers work (a pool of synths rendering a
    /// block's pieces on worker threads at once) hands the block over here.
    /// Render thread.
    func finishBlock()

    /// Blocks handed over by `finishBlock` that may still be rendering while
    /// the renderer dispatches the next ones (0: each block is complete by
    /// the time the renderer reads it). The renderer keeps this many more
    /// slots of buffers, so `render` calls always get buffers no pending
    /// block uses. Fixed for the instrument's life.
    var blocksInFlight: Int { get }

    /// Waits until the oldest block handed over by `finishBlock` and not yet
    /// collected is complete in the buffers its `render` calls were given;
    /// the renderer calls it before it reads them. Render thread.
    func collectBlock()
}

extension Instrument {
    public var eventGranularity: Int { 1 }
    /// By default an instrument applies every message at once: nothing to report.
    public func receive(_ message: ChannelMessage, take: UInt32) { receive(message) }
    /// By default one reverb and chorus for all channels.
    public var effectsGroupCount: Int { 1 }
    /// By default an instrument ignores SysEx.
    public func receiveSysEx(_ data: UnsafeBufferPointer<UInt8>) {}
    /// By default an instrument has no effects to set.
    public func setEffect(_ effect: SynthEffect, to value: Float) {}
    /// By default an instrument renders at once and has nothing to finish or collect.
    public func finishBlock() {}
    public var blocksInFlight: Int { 0 }
    public func collectBlock() {}
}
