import Foundation

/// A producer for the two-thread queue tests, on a thread of its own: Swift
/// concurrency's pool has as many threads as cores (2 in CI), and two tests
/// whose consumers spin on it while their producers wait for a pool thread
/// never end.
final class ProducerThread: Sendable {
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () -> Void) {
        let done = self.done
        Thread { body(); done.signal() }.start()
    }

    /// Waits for the producer to finish.
    func join() { done.wait() }
}
