import Atomics

/// A lock-free single-producer single-consumer ring of `TimedMessage`s:
/// one thread (MIDI input, a UI) pushes, the render thread peeks and pops.
/// Fixed capacity, chosen at creation; a push onto a full queue is refused
/// and counted in `overflowCount`, never blocks and never allocates.
/// The renderer takes events from the head while they are due, so a producer
/// pushes in non-decreasing `frame` order (live input: `.now`, frame 0).
public final class EventQueue: @unchecked Sendable {
    private let slots: UnsafeMutablePointer<TimedMessage>
    private let mask: Int
    /// Next slot the consumer reads; written only by the consumer.
    private let head: UnsafeAtomic<Int>
    /// Next slot the producer writes; written only by the producer.
    private let tail: UnsafeAtomic<Int>
    private let overflows: UnsafeAtomic<Int>

    /// `capacity` is rounded up to a power of two.
    public init(capacity: Int = 1024) {
        var size = 2
        while size < capacity { size <<= 1 }
        slots = .allocate(capacity: size)
        slots.initialize(repeating: TimedMessage(frame: 0, message: .noteOff(0, channel: 0)), count: size)
        mask = size - 1
        head = .create(0); tail = .create(0); overflows = .create(0)
    }

    deinit {
        slots.deallocate()
        _ = head.destroy(); _ = tail.destroy(); _ = overflows.destroy()
    }

    public var capacity: Int { mask + 1 }

    /// Pushes that were refused because the queue was full. Any thread.
    public var overflowCount: Int { overflows.load(ordering: .relaxed) }

    /// Producer thread only. Returns false (and counts it) when full.
    @discardableResult
    public func push(_ event: TimedMessage) -> Bool {
        let t = tail.load(ordering: .relaxed)
        guard t &- head.load(ordering: .acquiring) <= mask else {
            overflows.wrappingIncrement(ordering: .relaxed)
            return false
        }
        slots[t & mask] = event
        tail.store(t &+ 1, ordering: .releasing)
        return true
    }

    /// Consumer (render) thread only: the oldest event, left in the queue.
    @inline(__always)
    public func peek() -> TimedMessage? {
        let h = head.load(ordering: .relaxed)
        guard h != tail.load(ordering: .acquiring) else { return nil }
        return slots[h & mask]
    }

    /// Consumer (render) thread only: drops the oldest event.
    @inline(__always)
    public func pop() {
        let h = head.load(ordering: .relaxed)
        guard h != tail.load(ordering: .acquiring) else { return }
        head.store(h &+ 1, ordering: .releasing)
    }

    /// Events waiting. Approximate while the other side is active.
    public var count: Int { tail.load(ordering: .acquiring) &- head.load(ordering: .acquiring) }
}
