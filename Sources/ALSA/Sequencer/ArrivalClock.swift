import CALSA
import Glibc
import Synchronization
import Threads

/// How far a sequencer queue's real time is behind the monotonic clock:
/// `monotonic − queue`, estimated from pairs read together.
///
/// A pair is (a queue time, a monotonic reading taken *after* it): the event's
/// kernel stamp and the input thread's clock when it handles the event, or the
/// queue's status time and the clock read right after the ioctl. The true
/// offset is never more than `after − queue`; whatever came in between (the
/// thread was preempted, a render ran on the one CPU) only adds, so the
/// smallest difference is the best estimate. It is a windowed minimum (the
/// last `slots` spans of `slotNanos`), so a drift between the two clocks would
/// be followed, not frozen; the kernel code says there is none (see
/// `ArrivalStamps`).
///
/// Not thread-safe: the input thread's alone.
public struct QueueTimeOffset: Sendable {
    public static let slots = 8
    public static let slotNanos: UInt64 = 1_000_000_000

    /// Per slot: its start (monotonic) and the smallest offset seen in it.
    private var minima: [(start: UInt64, offset: Int64)] = []

    public init() {}

    /// The estimate (ns); nil before the first pair.
    public var offset: Int64? { minima.map(\.offset).min() }

    /// A queue time (ns since the queue started) read no later than `monotonic`.
    public mutating func observe(queue: UInt64, monotonic: UInt64) {
        let sample = Int64(bitPattern: monotonic &- queue)
        if let last = minima.last, monotonic &- last.start < Self.slotNanos {
            minima[minima.count - 1].offset = min(last.offset, sample)
            return
        }
        if minima.count == Self.slots { minima.removeFirst() }
        minima.append((monotonic, sample))
    }

    /// The monotonic time of queue time `queue`; nil before the first pair.
    public func monotonic(queue: UInt64) -> UInt64? {
        offset.map { UInt64(bitPattern: Int64(bitPattern: queue) &+ $0) }
    }
}

/// The kernel stamps each event on arrival at our input port with the real
/// time of a queue of our own; this turns those stamps into monotonic time.
/// The stamp is taken when the event is delivered, so it does not depend on
/// when the input thread gets to run (on one CPU, after a render).
///
/// Why the stamps are on the monotonic clock's time base: the kernel's
/// `snd_seq_timer_get_cur_time` (sound/core/seq/seq_timer.c), which both the
/// event stamp (`update_timestamp_of_queue`) and the queue status ioctl use,
/// is the queue time of the last timer tick plus `ktime_get_ts64()` since that
/// tick — and ktime_get_ts64 is CLOCK_MONOTONIC. The ticks themselves count
/// elapsed periods of the timer (hrtimer by default), so the two do not drift;
/// a late tick makes the queue time lag for a moment, which only raises
/// `monotonic − queue`, so `QueueTimeOffset`'s minimum ignores it.
///
/// Threads: made by the client's init; then used by the input thread only.
final class ArrivalStamps: @unchecked Sendable {
    let queue: Int32
    /// Kept, so the sequencer is open as long as the queue is ours.
    private let handle: SequencerHandle
    private let status: OpaquePointer
    private var offset = QueueTimeOffset()
    /// The estimate as the input thread last had it, for other threads (`ScheduledOutput`); `Int64.min` before the first.
    let publishedOffset = Atomic<Int64>(.min)
    private var lastStatusRead: UInt64 = 0
    /// How often the input thread refines the offset from the queue's status.
    static let statusInterval: UInt64 = 50_000_000

    private init(handle: SequencerHandle, queue: Int32, status: OpaquePointer) {
        self.handle = handle; self.queue = queue; self.status = status
    }

    deinit {
        snd_seq_queue_status_free(status)
        snd_seq_free_queue(handle.seq, queue)
    }

    /// Allocates and starts a queue of our own, has `port` stamp what arrives
    /// with that queue's real time, and calibrates against the clock.
    static func enable(on handle: SequencerHandle, port: Int32, name: String) throws(ALSAError) -> ArrivalStamps {
        let seq = handle.seq
        let queue = try check("snd_seq_alloc_named_queue", snd_seq_alloc_named_queue(seq, name), context: name)
        var status: OpaquePointer?
        let rc = snd_seq_queue_status_malloc(&status)
        guard rc >= 0, let status else {
            snd_seq_free_queue(seq, queue)
            throw ALSAError(function: "snd_seq_queue_status_malloc", code: rc < 0 ? rc : -ENOMEM)
        }
        // From here on, deinit frees both.
        let stamps = ArrivalStamps(handle: handle, queue: queue, status: status)
        try stamps.stampArrivals(at: port)
        try stamps.start()
        return stamps
    }

    private func stampArrivals(at port: Int32) throws(ALSAError) {
        var pinfo: OpaquePointer?
        try check("snd_seq_port_info_malloc", snd_seq_port_info_malloc(&pinfo))
        defer { snd_seq_port_info_free(pinfo) }
        try check("snd_seq_get_port_info", snd_seq_get_port_info(handle.seq, port, pinfo), context: "input port")
        snd_seq_port_info_set_timestamping(pinfo, 1)
        snd_seq_port_info_set_timestamp_real(pinfo, 1)
        snd_seq_port_info_set_timestamp_queue(pinfo, queue)
        try check("snd_seq_set_port_info", snd_seq_set_port_info(handle.seq, port, pinfo), context: "input port timestamps")
    }

    /// Starts the queue (snd_seq_start_queue is a macro: the same control
    /// event, sent now), waits until the kernel runs it, then calibrates.
    private func start() throws(ALSAError) {
        let context = "start the arrival queue"
        try check("snd_seq_control_queue", snd_seq_control_queue(handle.seq, queue,
            Int32(SND_SEQ_EVENT_START.rawValue), 0, nil), context: context)
        try check("snd_seq_drain_output", snd_seq_drain_output(handle.seq), context: context)
        var tries = 0
        while try !readStatus() {
            tries += 1
            guard tries < 200 else { throw ALSAError(function: "snd_seq_control_queue", code: -ETIMEDOUT, context: context) }
            usleep(1000)
        }
        for _ in 0..<16 { try refine() }
    }

    /// The estimate of `monotonic − queue time`, ns (nil before the first pair).
    var offsetNanos: Int64? { offset.offset }

    /// The monotonic time `ev` arrived at, from its kernel stamp (and a pair
    /// for the estimate); nil when the event carries no real-time stamp of ours.
    func arrival(of ev: snd_seq_event_t, handledAt now: UInt64) -> UInt64? {
        guard Int32(ev.flags) & SND_SEQ_TIME_STAMP_MASK == SND_SEQ_TIME_STAMP_REAL, Int32(ev.queue) == queue else {
            return nil
        }
        let stamp = Self.nanoseconds(ev.time.time)
        offset.observe(queue: stamp, monotonic: now)
        if let o = offset.offset { publishedOffset.store(o, ordering: .relaxed) }
        return offset.monotonic(queue: stamp)
    }

    /// Input thread, between events: a status pair every `statusInterval`.
    func refineIfDue(now: UInt64) {
        guard now &- lastStatusRead >= Self.statusInterval else { return }
        try? refine()
    }

    private func refine() throws(ALSAError) {
        let running = try readStatus()
        let after = monotonicNanoseconds()
        lastStatusRead = after
        guard running, let t = snd_seq_queue_status_get_real_time(status)?.pointee else { return }
        offset.observe(queue: Self.nanoseconds(t), monotonic: after)
        if let o = offset.offset { publishedOffset.store(o, ordering: .relaxed) }
    }

    /// Reads the queue's status; whether it runs.
    private func readStatus() throws(ALSAError) -> Bool {
        try check("snd_seq_get_queue_status", snd_seq_get_queue_status(handle.seq, queue, status), context: "arrival queue")
        return snd_seq_queue_status_get_status(status) != 0
    }

    private static func nanoseconds(_ t: snd_seq_real_time_t) -> UInt64 {
        UInt64(t.tv_sec) &* 1_000_000_000 &+ UInt64(t.tv_nsec)
    }
}
