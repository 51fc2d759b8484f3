import Synchronization

/// Receives a token from `subscribe` or an `observe…` call, to end it.
public struct SubscriptionToken: Hashable, Sendable {
    let id: Int
    private static let counter = Atomic<Int>(0)
    /// Unique in the process, so a token ends only what it was given for.
    static func next() -> SubscriptionToken { SubscriptionToken(id: counter.add(1, ordering: .relaxed).newValue) }
}

/// The one observer mechanism of the controls: the handlers registered for
/// one kind of event (parameter changes, control states, learn events,
/// feedback), called in registration order. Not thread-safe: its owner's
/// lock or thread guards it, as it guards the state the events come from.
struct ObserverList<Event> {
    private var entries: [(token: SubscriptionToken, handler: (Event) -> Void)] = []

    mutating func add(_ handler: @escaping (Event) -> Void) -> SubscriptionToken {
        let token = SubscriptionToken.next()
        entries.append((token, handler))
        return token
    }

    mutating func remove(_ token: SubscriptionToken) { entries.removeAll { $0.token == token } }

    var isEmpty: Bool { entries.isEmpty }

    /// The handlers as they are now, to call after the owner's lock is let go.
    var handlers: [(Event) -> Void] { entries.map(\.handler) }

    func send(_ event: Event) { for entry in entries { entry.handler(event) } }
}
