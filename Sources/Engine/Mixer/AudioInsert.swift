/// An effect in the master's chain (`--insert master=URI`): it processes each
/// mixed block in place, before the master gain and meters. Built and sized
/// (for the renderer's largest block) off the render thread.
public protocol AudioInsert: AnyObject {
    /// Render thread: replaces `left[0..<frames]` and `right[0..<frames]` with
    /// the processed block. No allocation, lock, log or throw.
    func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int)
}
