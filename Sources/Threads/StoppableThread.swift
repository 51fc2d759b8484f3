/// A thread whose body loops until `stop`: the one owner of a stop flag and a
/// thread for the hosts' helper loops (clock out, JACK transport following and
/// leading, Link). The body polls `stopping` between its steps.
public final class StoppableThread: @unchecked Sendable {
    /// Set by `stop`; the body ends its loop when it sees it.
    public let stopping = CancellationFlag()
    private var thread: JoinableThread?

    public init() {}

    /// Starts `body` on a thread of its own (once).
    public func start(name: String, _ body: @escaping (_ stopping: CancellationFlag) -> Void) throws(ThreadError) {
        precondition(thread == nil, "\(name): started twice")
        let stopping = self.stopping
        thread = try JoinableThread(name: name) { body(stopping) }
    }

    /// Sets the flag and waits for the body to end; nothing when it never started.
    public func stop() {
        stopping.set()
        thread?.join()
        thread = nil
    }
}
