import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A value one thread publishes and one other thread waits on: the waiter
/// spins briefly on the atomic (a hand-over between two busy threads costs no
/// system call), then sleeps on a semaphore, which the publisher posts only
/// when the waiter sleeps. Neither side allocates or takes a lock: fit for the
/// render thread and the pool's workers.
final class WakeSignal: @unchecked Sendable {
    let value = Atomic<Int>(0)
    private let sleeping = Atomic<Bool>(false)
    private let semaphore: UnsafeMutablePointer<sem_t>

    init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Publishes `newValue` and wakes the waiter.
    @inline(__always)
    func publish(_ newValue: Int) {
        value.store(newValue, ordering: .sequentiallyConsistent)
        wake()
    }

    /// Adds one to the value and wakes the waiter (several threads may count).
    @inline(__always)
    func increment() {
        value.wrappingAdd(1, ordering: .sequentiallyConsistent)
        wake()
    }

    @inline(__always)
    private func wake() {
        if sleeping.exchange(false, ordering: .sequentiallyConsistent) { sem_post(semaphore) }
    }

    /// Returns the value once `isReady` accepts it. One waiter at a time.
    @inline(__always)
    func wait(spins: Int, until isReady: (Int) -> Bool) -> Int {
        for _ in 0..<spins {
            let v = value.load(ordering: .acquiring)
            if isReady(v) { return v }
        }
        while true {
            sleeping.store(true, ordering: .sequentiallyConsistent)
            let v = value.load(ordering: .sequentiallyConsistent)
            if isReady(v) {
                // If a publisher already took our `sleeping` flag it has posted (or
                // will): take that post, so the semaphore stays at zero.
                if !sleeping.exchange(false, ordering: .sequentiallyConsistent) {
                    while sem_wait(semaphore) != 0 {}
                }
                return v
            }
            // A publisher clears `sleeping` and posts exactly once; EINTR waits again.
            while sem_wait(semaphore) != 0 {}
        }
    }
}
