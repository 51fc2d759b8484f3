import Engine
import Synchronization

/// The producer side of the render thread's event queue, shared by the
/// threads that push (MIDI input, the controls' parameter changes) behind a
/// lock the render thread never takes (it only pops, lock-free).
public final class EventQueueProducer: Sendable {
    private let queue: EventQueue
    private let lock = Mutex<Void>(())

    public init(_ queue: EventQueue) { self.queue = queue }

    /// False when the queue was full (counted by the queue).
    @discardableResult
    public func push(_ message: ChannelMessage) -> Bool { lock.withLock { _ in queue.push(.now(message)) } }

    @discardableResult
    public func pushSysEx(_ bytes: [UInt8]) -> Bool {
        lock.withLock { _ in bytes.withUnsafeBufferPointer { queue.pushSysEx($0) } }
    }
}
