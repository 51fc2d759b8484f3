import Synchronization

/// Set from any thread (a signal handler included) to stop a loop at its next
/// step: a render between blocks, an input thread between polls.
public final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    public init() {}
    public func set() { flag.store(true, ordering: .relaxed) }
    public var isSet: Bool { flag.load(ordering: .relaxed) }
}
