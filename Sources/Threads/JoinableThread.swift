import Glibc

/// A thread could not be started (pthread_create failed: EAGAIN when the
/// process is at its thread limit, EPERM, ENOMEM).
public struct ThreadError: Error, Equatable, CustomStringConvertible {
    /// The thread's name, as given to `JoinableThread`.
    public let name: String
    /// pthread_create's error number.
    public let code: Int32
    public init(name: String, code: Int32) { self.name = name; self.code = code }
    public var description: String { "cannot start the \(name) thread: \(String(cString: strerror(code)))" }
}

/// A joinable POSIX thread running `body`: the one thread type of the hosts
/// (the sequencer's input thread, the output, control, writer and render
/// threads).
/// The body decides when to end (an atomic stop flag it polls); `join` waits
/// for it, once. Foundation's `Thread` is not used: it cannot be joined.
public final class JoinableThread {
    private var thread: pthread_t = 0
    private var joined = false

    private final class Box { let body: () -> Void; init(_ body: @escaping () -> Void) { self.body = body } }

    public init(name: String, _ body: @escaping () -> Void) throws(ThreadError) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        let rc = pthread_create(&thread, nil, { arg in
            let box = Unmanaged<Box>.fromOpaque(arg!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        if rc != 0 {
            Unmanaged<Box>.fromOpaque(box).release()
            throw ThreadError(name: name, code: rc)
        }
    }

    /// Waits for the thread to end (once).
    public func join() {
        guard !joined else { return }
        joined = true
        pthread_join(thread, nil)
    }

    deinit { join() }
}

/// Real-time scheduling for the calling thread.
public enum RealtimeScheduling {
    /// Asks for `SCHED_FIFO` at `priority` (1…99, clamped) for the calling thread.
    /// Returns nil when granted, or why not (e.g. "Operation not permitted":
    /// no CAP_SYS_NICE and no rtprio limit) — to report, never fatal.
    public static func requestFIFO(priority: Int32 = 70) -> String? {
        let lo = sched_get_priority_min(SCHED_FIFO), hi = sched_get_priority_max(SCHED_FIFO)
        var param = sched_param()
        param.sched_priority = min(max(priority, lo), hi)
        let rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param)
        return rc == 0 ? nil : String(cString: strerror(rc))
    }

    /// The calling thread's policy is SCHED_FIFO or SCHED_RR.
    public static var isRealtime: Bool {
        var policy: Int32 = 0
        var param = sched_param()
        guard pthread_getschedparam(pthread_self(), &policy, &param) == 0 else { return false }
        return policy == SCHED_FIFO || policy == SCHED_RR
    }
}
