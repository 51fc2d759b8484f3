/// An effect in a strip's or the master's chain (`--insert STRIP=URI`): it
/// processes each block in place, before the strip's (or the master's) gain
/// and meters. Built and sized (for the renderer's largest block) off the
/// render thread.
public protocol AudioInsert: AnyObject {
    /// Render thread: replaces `left[0..<frames]` and `right[0..<frames]` with
    /// the processed block. No allocation, lock, log or throw.
    func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int)

    /// Frames by which its output lags its input, as it last reported (0 for none).
    var latency: Int { get }
}

extension AudioInsert {
    public var latency: Int { 0 }
}
