import Synchronization

/// What the surface refused, dropped and served; read from any thread.
public struct WebSurfaceCounters: Sendable, Equatable {
    /// WebSocket connections accepted, and open now.
    public var connections = 0
    public var open = 0
    /// HTTP requests and upgrades answered 401 (no or wrong token).
    public var unauthorized = 0
    /// Requests refused for their Origin (another site) or Host (not loopback without a token).
    public var forbidden = 0
    /// Messages applied.
    public var accepted = 0
    /// Messages refused, by reason.
    public var refused: [WebProtocol.Refusal: Int] = [:]
    /// Updates for a client merged into a later one because it had not taken the earlier yet.
    public var coalesced = 0
    /// Replies (`refused`, `pong`) not sent because a client's reply queue was full.
    public var droppedReplies = 0

    public var refusedTotal: Int { refused.values.reduce(0, +) }
}

final class CounterBox: Sendable {
    let state = Mutex(WebSurfaceCounters())
    func update(_ body: (inout WebSurfaceCounters) -> Void) { state.withLock { body(&$0) } }
    var snapshot: WebSurfaceCounters { state.withLock { $0 } }
}
