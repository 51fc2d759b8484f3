import Engine
import Synchronization

/// The probe's instrument: silent, it keeps every message it receives for the
/// `queue` command (a lock on the render thread: fine in a test driver, never in a host).
final class KeepingInstrument: Instrument, @unchecked Sendable {
    private let received = Mutex<[ChannelMessage]>([])
    let stripCount = 16

    func prepare(sampleRate: Double, maxFrames: Int) {}
    func receive(_ message: ChannelMessage) { received.withLock { $0.append(message) } }
    func render(frames: Int, dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {}
    func silence() {}

    /// What arrived since the last call, in order.
    func take() -> [ChannelMessage] { received.withLock { r in defer { r.removeAll() }; return r } }
}
