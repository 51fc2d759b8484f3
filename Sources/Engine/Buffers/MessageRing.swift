import Synchronization

/// A lock-free single-producer single-consumer ring of small trivially
/// copyable values: one thread pushes, one other thread peeks and pops;
/// neither waits, locks nor allocates. A push onto a full ring is refused
/// (false); the caller decides whether to count it.
///
/// The one ring of messages across threads: the engine's `EventQueue`, the
/// transport's gate openings, the JACK MIDI outputs' and MIDI clock out's
/// rings. Generic across modules, so the hot paths are `@inlinable` over
/// `@usableFromInline` storage: a caller's optimised build specialises them
/// for its element and inlines them (no generic dispatch, metadata lookup,
/// retain or allocation on the render thread).
///
/// Positions count pushes and pops since creation; a value's slot is its
/// position masked to the capacity (a power of two).
public final class MessageRing<Element: BitwiseCopyable>: @unchecked Sendable {
    @usableFromInline let slots: UnsafeMutablePointer<Element>
    @usableFromInline let mask: Int
    /// Next slot the consumer reads; written only by the consumer.
    @usableFromInline let head = Atomic<Int>(0)
    /// Next slot the producer writes; written only by the producer.
    @usableFromInline let tail = Atomic<Int>(0)

    /// `capacity` values (2 to 2^30), rounded up to a power of two. Not on the
    /// render thread: it allocates, and touches every page now so the render
    /// thread never takes a page fault on its first pop.
    public init(capacity: Int) {
        precondition(capacity <= 1 << 30, "MessageRing capacity \(capacity) > 2^30")
        var size = 2
        while size < capacity { size <<= 1 }
        slots = .allocate(capacity: size)
        UnsafeMutableRawPointer(slots).initializeMemory(as: UInt8.self, repeating: 0,
                                                        count: size * MemoryLayout<Element>.stride)
        mask = size - 1
    }

    deinit { slots.deallocate() }   // BitwiseCopyable: nothing to deinitialise

    public var capacity: Int { mask + 1 }

    /// Producer only: whether a push now would be taken (the consumer may only make more room).
    @inlinable @inline(__always)
    public var hasRoom: Bool { tail.load(ordering: .relaxed) &- head.load(ordering: .acquiring) <= mask }

    /// Producer only: appends `element`; false (and nothing stored) when full.
    @inlinable @inline(__always)
    public func push(_ element: Element) -> Bool {
        let t = tail.load(ordering: .relaxed)
        guard t &- head.load(ordering: .acquiring) <= mask else { return false }
        (slots + (t & mask)).initialize(to: element)
        tail.store(t &+ 1, ordering: .releasing)
        return true
    }

    /// Consumer only: the oldest value, left in the ring.
    @inlinable @inline(__always)
    public func peek() -> Element? {
        let h = head.load(ordering: .relaxed)
        guard h != tail.load(ordering: .acquiring) else { return nil }
        return slots[h & mask]
    }

    /// Consumer only: drops the oldest value (none: nothing happens).
    @inlinable @inline(__always)
    public func pop() {
        let h = head.load(ordering: .relaxed)
        guard h != tail.load(ordering: .acquiring) else { return }
        head.store(h &+ 1, ordering: .releasing)
    }

    /// Values waiting. Approximate while the other side is active.
    @inlinable
    public var count: Int { tail.load(ordering: .acquiring) &- head.load(ordering: .acquiring) }
}
