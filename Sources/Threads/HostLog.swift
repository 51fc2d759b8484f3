import Synchronization

/// Lines for the host's log (connections, releases, failures), taken by the view. Thread-safe.
public final class HostLog: Sendable {
    private let lines = Mutex<[String]>([])
    public init() {}
    public func append(_ line: String) { lines.withLock { $0.append(line) } }
    /// The lines since the last call.
    public func take() -> [String] { lines.withLock { let l = $0; $0.removeAll(); return l } }
}
