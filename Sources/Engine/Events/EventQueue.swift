import Synchronization

/// A lock-free single-producer single-consumer queue of `TimedMessage`s (a
/// `MessageRing`): one thread (MIDI input, a UI) pushes, the render thread peeks and pops.
/// Fixed capacity, chosen at creation; a push onto a full queue is refused
/// and counted in `overflowCount`, never blocks and never allocates.
/// The renderer takes events from the head while they are due, so a producer
/// pushes in non-decreasing `frame` order. Live input goes through the host's
/// `EventQueueProducer`: frame 0 (due at once) with `--timing asap`; with
/// `--timing stamped` the frame of the sample clock its arrival maps to, one
/// period later, never before the frame pushed last.
///
/// SysEx (`pushSysEx`) travels as a placeholder event in the ring plus its
/// bytes in a second, fixed-size SPSC byte ring, each message stored
/// contiguously; the consumer reads them (`headSysEx`) while the placeholder
/// is at the head, and `pop` frees them. A SysEx placeholder given to `push`
/// (it has no bytes in the byte ring) is refused and counted in
/// `refusedCount`, so the consumer never reads bytes that are not there.
public final class EventQueue: @unchecked Sendable {
    private let events: MessageRing<TimedMessage>
    private let overflows = Atomic<Int>(0)
    private let refused = Atomic<Int>(0)
    /// The SysEx byte ring; `byteHead`/`byteTail` count bytes since creation.
    private let bytes: UnsafeMutablePointer<UInt8>
    private let byteMask: Int
    private let byteHead = Atomic<Int>(0)
    private let byteTail = Atomic<Int>(0)

    /// The largest `capacity` (events) and `sysExCapacity` (bytes) taken.
    public static let maximumCapacity = 1 << 20

    /// `capacity` (events, at least 2) and `sysExCapacity` (bytes, at least
    /// 16) are rounded up to powers of two, and clamped to `maximumCapacity`
    /// (doubling past it would overflow, or exhaust memory).
    public init(capacity: Int = 1024, sysExCapacity: Int = 8192) {
        events = MessageRing(capacity: min(capacity, Self.maximumCapacity))
        var byteSize = 16
        while byteSize < min(sysExCapacity, Self.maximumCapacity) { byteSize <<= 1 }
        bytes = .allocate(capacity: byteSize)
        bytes.initialize(repeating: 0, count: byteSize)
        byteMask = byteSize - 1
    }

    deinit { bytes.deallocate() }

    /// Where a SysEx of `count` bytes written from byte position `position` starts:
    /// there, or at the ring's next wrap when it would not fit before it.
    @inline(__always)
    private func contiguousStart(_ position: Int, _ count: Int) -> Int {
        (position & byteMask) + count > byteMask + 1 ? (position | byteMask) &+ 1 : position
    }

    /// Producer thread only: a SysEx message (the bytes between F0 and F7) to
    /// apply at `frame`. Returns false (and counts it) when either ring is
    /// full or the message is longer than the byte ring or
    /// `ChannelMessage.maxSysExNumber`. Never blocks, never allocates.
    @discardableResult
    public func pushSysEx(_ data: UnsafeBufferPointer<UInt8>, frame: UInt64 = 0) -> Bool {
        let n = data.count
        guard n > 0, n <= min(byteMask + 1, ChannelMessage.maxSysExNumber), let source = data.baseAddress,
              events.hasRoom else {
            overflows.wrappingAdd(1, ordering: .relaxed)
            return false
        }
        let start = contiguousStart(byteTail.load(ordering: .relaxed), n)
        guard start &+ n &- byteHead.load(ordering: .acquiring) <= byteMask + 1 else {
            overflows.wrappingAdd(1, ordering: .relaxed)
            return false
        }
        (bytes + (start & byteMask)).update(from: source, count: n)
        byteTail.store(start &+ n, ordering: .releasing)
        // Room was checked above, and only this (the producer's) thread takes it.
        return events.push(TimedMessage(frame: frame, message: .sysExPlaceholder(n)))
    }

    /// Consumer (render) thread only, while `peek` shows a SysEx placeholder:
    /// its bytes, valid until `pop`.
    @inline(__always)
    public func headSysEx() -> UnsafeBufferPointer<UInt8>? {
        guard let event = peek(), event.message.isSysEx else { return nil }
        let n = event.message.sysExNumber
        let start = contiguousStart(byteHead.load(ordering: .relaxed), n)
        return UnsafeBufferPointer(start: bytes + (start & byteMask), count: n)
    }

    public var capacity: Int { events.capacity }

    /// Pushes that were refused because the queue was full. Any thread.
    public var overflowCount: Int { overflows.load(ordering: .relaxed) }
    /// Pushes refused because the event was a SysEx placeholder (use `pushSysEx`). Any thread.
    public var refusedCount: Int { refused.load(ordering: .relaxed) }

    /// Producer thread only. Returns false (and counts it) when full, or when
    /// `event` is a SysEx placeholder (status F0): its bytes would be missing.
    @discardableResult
    public func push(_ event: TimedMessage) -> Bool {
        guard !event.message.isSysEx else {
            refused.wrappingAdd(1, ordering: .relaxed)
            return false
        }
        guard events.push(event) else {
            overflows.wrappingAdd(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Consumer (render) thread only: the oldest event, left in the queue.
    @inline(__always)
    public func peek() -> TimedMessage? { events.peek() }

    /// Consumer (render) thread only: drops the oldest event (a SysEx's bytes with it).
    @inline(__always)
    public func pop() {
        guard let message = events.peek()?.message else { return }
        if message.isSysEx {
            let n = message.sysExNumber
            byteHead.store(contiguousStart(byteHead.load(ordering: .relaxed), n) &+ n, ordering: .releasing)
        }
        events.pop()
    }

    /// Events waiting. Approximate while the other side is active.
    public var count: Int { events.count }
}
