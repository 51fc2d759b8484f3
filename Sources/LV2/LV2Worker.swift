import CLilv
import Synchronization
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// The LV2 worker extension (`work:schedule`): what a plugin asks for from
/// `run` (load a sample kit, read a file) is done off the render thread, and
/// its answers reach the plugin at the end of a later `run`
/// (`work_response`, then `end_run`).
///
/// Two ways, chosen by the host: `.thread`, live: a thread of its own does the
/// work; requests and answers cross through two lock-free byte rings, so the
/// render thread never waits. `.synchronous`, offline (a render free-wheels):
/// the work is done at once inside `schedule_work`, so a render does not
/// depend on a thread's timing and gives the same bytes every run.
final class LV2Worker {
    enum Mode { case synchronous, thread }

    /// The feature's data handed to the plugin at instantiation.
    let schedule: UnsafeMutablePointer<LV2_Worker_Schedule>
    private let mode: Mode
    private var handle: LV2_Handle?
    private var interface: UnsafePointer<LV2_Worker_Interface>?
    private let requests = ByteRing(capacity: 1 << 16)
    private let responses = ByteRing(capacity: 1 << 16)
    /// The largest message the plugin may send at once.
    private let scratch = UnsafeMutableRawPointer.allocate(byteCount: 1 << 15, alignment: 8)
    private var thread: JoinableThread?
    private var wake = sem_t()
    private let stopping = Atomic<Bool>(false)

    init(mode: Mode) {
        self.mode = mode
        schedule = .allocate(capacity: 1)
        sem_init(&wake, 0, 0)
        schedule.initialize(to: LV2_Worker_Schedule(handle: nil, schedule_work: { handle, size, data in
            guard let handle else { return LV2_WORKER_ERR_UNKNOWN }
            return Unmanaged<LV2Worker>.fromOpaque(handle).takeUnretainedValue().scheduled(size: size, data: data)
        }))
        schedule.pointee.handle = Unmanaged.passUnretained(self).toOpaque()
    }

    /// The plugin has a worker (its `work:interface`).
    var isUsed: Bool { interface != nil }

    /// After instantiation: the instance whose `work` runs, and (live) the worker's thread.
    func bind(handle: LV2_Handle?, interface: UnsafePointer<LV2_Worker_Interface>?) throws(ThreadError) {
        self.handle = handle
        self.interface = interface
        guard mode == .thread, interface != nil else { return }
        thread = try JoinableThread(name: "lv2-worker") { [unowned self] in self.serve() }
    }

    /// Ends the worker's thread (before its instance is freed). Idempotent.
    func stop() {
        guard let thread else { return }
        stopping.store(true, ordering: .releasing)
        sem_post(&wake)
        thread.join()
        self.thread = nil
    }

    deinit {
        stop()
        sem_destroy(&wake)
        schedule.deallocate()
        scratch.deallocate()
    }

    /// `schedule_work`, from `run` (render thread) or from `work` itself.
    private func scheduled(size: UInt32, data: UnsafeRawPointer?) -> LV2_Worker_Status {
        guard let interface, let work = interface.pointee.work else { return LV2_WORKER_ERR_UNKNOWN }
        switch mode {
        case .synchronous:
            return work(handle, Self.respond, Unmanaged.passUnretained(self).toOpaque(), size, data)
        case .thread:
            guard requests.write(size: size, data: data) else { return LV2_WORKER_ERR_NO_SPACE }
            sem_post(&wake)
            return LV2_WORKER_SUCCESS
        }
    }

    /// `respond`, from the plugin's `work`: the answer queued for the render thread's `deliver`.
    private static let respond: LV2_Worker_Respond_Function = { handle, size, data in
        guard let handle else { return LV2_WORKER_ERR_UNKNOWN }
        let worker = Unmanaged<LV2Worker>.fromOpaque(handle).takeUnretainedValue()
        return worker.responses.write(size: size, data: data) ? LV2_WORKER_SUCCESS : LV2_WORKER_ERR_NO_SPACE
    }

    /// The worker thread: each request handed to `work`, its answers queued for the render thread.
    private func serve() {
        while true {
            sem_wait(&wake)
            if stopping.load(ordering: .acquiring) { return }
            while let size = requests.read(into: scratch, capacity: 1 << 15) {
                _ = interface?.pointee.work?(handle, Self.respond, Unmanaged.passUnretained(self).toOpaque(), UInt32(size), scratch)
            }
        }
    }

    /// After each `run` (render thread): the answers ready so far, then `end_run`. No allocation or lock.
    func deliver() {
        guard let interface else { return }
        if let response = interface.pointee.work_response {
            while let size = responses.read(into: scratch, capacity: 1 << 15) { _ = response(handle, UInt32(size), scratch) }
        }
        if let end = interface.pointee.end_run { _ = end(handle) }
    }
}

/// A single-producer, single-consumer ring of messages (a 4-byte size, then
/// the bytes), lock-free: one thread writes, one reads.
final class ByteRing {
    private let buffer: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private let head = Atomic<Int>(0)   // read position (consumer)
    private let tail = Atomic<Int>(0)   // write position (producer)

    init(capacity: Int) {
        self.capacity = capacity
        buffer = .allocate(capacity: capacity)
    }

    deinit { buffer.deallocate() }

    /// Producer: false when the message does not fit.
    func write(size: UInt32, data: UnsafeRawPointer?) -> Bool {
        let h = head.load(ordering: .acquiring), t = tail.load(ordering: .relaxed)
        let free = capacity - (t - h)
        guard Int(size) + 4 <= free else { return false }
        var s = size
        withUnsafeBytes(of: &s) { copy(from: $0.baseAddress!, count: 4, at: t) }
        if let data, size > 0 { copy(from: data, count: Int(size), at: t + 4) }
        tail.store(t + 4 + Int(size), ordering: .releasing)
        return true
    }

    /// Consumer: the next message's size, its bytes in `into` (a message larger than `capacity` is dropped).
    func read(into destination: UnsafeMutableRawPointer, capacity limit: Int) -> Int? {
        let h = head.load(ordering: .relaxed), t = tail.load(ordering: .acquiring)
        guard t - h >= 4 else { return nil }
        var size: UInt32 = 0
        withUnsafeMutableBytes(of: &size) { paste(into: $0.baseAddress!, count: 4, from: h) }
        if Int(size) <= limit { paste(into: destination, count: Int(size), from: h + 4) }
        head.store(h + 4 + Int(size), ordering: .releasing)
        return Int(size) <= limit ? Int(size) : 0
    }

    private func copy(from source: UnsafeRawPointer, count: Int, at position: Int) {
        let bytes = source.assumingMemoryBound(to: UInt8.self)
        for i in 0..<count { buffer[(position + i) % capacity] = bytes[i] }
    }

    private func paste(into destination: UnsafeMutableRawPointer, count: Int, from position: Int) {
        let bytes = destination.assumingMemoryBound(to: UInt8.self)
        for i in 0..<count { bytes[i] = buffer[(position + i) % capacity] }
    }
}
