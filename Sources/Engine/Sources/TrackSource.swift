/// A stereo source with a mixer strip of its own beside the instrument's
/// channels: an audio-file track (decoded ahead on another thread), a test
/// signal. The renderer asks it for each block with the piece's position, so
/// it starts, stops, seeks and loops with the transport.
///
/// Render thread: `render` writes (not adds) `frames` frames of planar stereo
/// into `left` and `right`. No allocation, lock, file I/O or wait: a source
/// that has nothing ready writes silence and counts the miss.
public protocol TrackSource: AnyObject, Sendable {
    /// The strip's name, as the view and the parameters (`track.N.*`) show it.
    var name: String { get }
    /// The block starting at `position` seconds of the piece while it plays;
    /// silence while `playing` is false. `position` jumps on a seek or a loop.
    func render(frames: Int, position: Double, playing: Bool,
                left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>)
}
