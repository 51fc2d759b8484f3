/// A MIDI effect on the render thread (a zone's `midi-fx`: LV2 MIDI plugins
/// in a chain): each block, the renderer hands it the messages due in the
/// block at their offsets (from its own queue, `Renderer.attach(_:)`), has it
/// run the block, and plays what it sends — channel messages on the
/// renderer's channels, at offsets in the same block — as if they had come
/// from the event queue. So a plugin that delays or makes notes (an echo, a
/// strum, a chord) is timed by the sample clock. Built off the render thread.
///
/// An All Notes Off or All Sound Off it receives (CC 123 or 120, on any
/// channel) ends, in that block, every note it has sent and not ended: how its
/// owners release it (a take's end, a slot that takes another effect).
public protocol MIDIEffect: AnyObject {
    /// A message at `offset` frames into the coming block, in time order. Render thread.
    func receive(_ message: ChannelMessage, at offset: Int)

    /// Runs `frames` frames with the block's messages; writes what it sends
    /// into `output` (channel voice messages only; `frame`: the offset in the
    /// block; the renderer puts them in time order, keeping their order at one frame) and returns how many (at most `output.count`;
    /// what does not fit is dropped). Render thread: no allocation, lock, log or throw.
    func process(frames: Int, into output: UnsafeMutableBufferPointer<TimedMessage>) -> Int
}
