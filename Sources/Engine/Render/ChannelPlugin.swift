/// An instrument that plays one MIDI channel on the render thread (an LV2
/// instrument, `--instrument N=URI`). The renderer hands it the channel's
/// messages with their offset in the coming block (moved to the sampler's
/// event grid, so both keep the same time), then has it render the whole
/// block, which sounds in the channel's strip. Built off the render thread.
public protocol ChannelPlugin: AnyObject {
    /// A message at `offset` frames into the coming block, in time order. Render thread.
    func receive(_ message: ChannelMessage, at offset: Int)

    /// Writes (does not add) `frames` frames into `left` and `right`, with the
    /// block's messages applied at their offsets. Render thread: no
    /// allocation, lock, log or throw.
    func render(frames: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>)

    /// Ends every note and sound, from the next block. Render thread.
    func silence()

    /// Frames by which its sound lags its messages, as it last reported (0 for none).
    var latency: Int { get }
}

extension ChannelPlugin {
    public var latency: Int { 0 }
}
