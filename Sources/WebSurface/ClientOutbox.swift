import Synchronization

/// One page's pending output, bounded whatever the page does: a new `hello`
/// (the whole set of controls after the hub swapped in another mapping), the
/// latest scene switched to (with its zones), the latest state of each changed control (a newer change replaces an unsent
/// one), the latest status, and a few replies. The hub side only ever stores here under
/// a short lock and never waits for the network; the client's own sender task
/// takes everything pending when it is free to write, so a page that stops
/// reading holds back nobody but itself.
final class ClientOutbox: Sendable {
    struct Pending {
        var hello: String?
        var scene: String?
        var sounds: String?
        var controls: [Int: ControlMessage] = [:]
        var status: String?
        var replies: [String] = []
        var closed = false
    }

    static let maxReplies = 16
    private let pending = Mutex(Pending())
    private let wake: AsyncStream<Void>.Continuation
    let wakeups: AsyncStream<Void>
    private let counters: CounterBox

    init(counters: CounterBox) {
        self.counters = counters
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Every control anew: replaces an unsent hello, an unsent scene (the
    /// hello carries the rig too) and the unsent control changes, which were
    /// keyed by the old mapping's order.
    func offer(hello: String) {
        pending.withLock { p in
            p.hello = hello
            p.scene = nil
            p.sounds = nil
            p.controls = [:]
        }
        wake.yield()
    }

    /// The scene switched to and its zones: replaces an unsent one.
    func offer(scene: String) {
        let replaced = pending.withLock { p -> Bool in
            defer { p.scene = scene }
            return p.scene != nil
        }
        if replaced { counters.update { $0.coalesced += 1 } }
        wake.yield()
    }

    /// What every channel strip plays: replaces an unsent one.
    func offer(sounds: String) {
        let replaced = pending.withLock { p -> Bool in
            defer { p.sounds = sounds }
            return p.sounds != nil
        }
        if replaced { counters.update { $0.coalesced += 1 } }
        wake.yield()
    }

    /// Changed controls, keyed by their index in the mapping.
    func offer(controls: [(Int, ControlMessage)]) {
        guard !controls.isEmpty else { return }
        let merged = pending.withLock { p -> Int in
            var merged = 0
            for (i, c) in controls { if p.controls.updateValue(c, forKey: i) != nil { merged += 1 } }
            return merged
        }
        if merged > 0 { counters.update { $0.coalesced += merged } }
        wake.yield()
    }

    func offer(status: String) {
        let replaced = pending.withLock { p -> Bool in
            defer { p.status = status }
            return p.status != nil
        }
        if replaced { counters.update { $0.coalesced += 1 } }
        wake.yield()
    }

    func offer(reply: String) {
        let dropped = pending.withLock { p -> Bool in
            guard p.replies.count < Self.maxReplies else { return true }
            p.replies.append(reply)
            return false
        }
        if dropped { counters.update { $0.droppedReplies += 1 } } else { wake.yield() }
    }

    /// Everything pending, in the order to send: a hello, the scene, the sounds, replies, controls (mapping order), status.
    func take() -> [String] {
        let p = pending.withLock { p -> Pending in
            defer { p.hello = nil; p.scene = nil; p.sounds = nil; p.controls = [:]; p.status = nil; p.replies = [] }
            return p
        }
        var out = (p.hello.map { [$0] } ?? []) + (p.scene.map { [$0] } ?? []) + (p.sounds.map { [$0] } ?? []) + p.replies
        if !p.controls.isEmpty {
            out.append(JSON.encode(ControlsMessage(controls: p.controls.sorted { $0.key < $1.key }.map(\.value))))
        }
        if let s = p.status { out.append(s) }
        return out
    }

    var pendingControlCount: Int { pending.withLock { $0.controls.count } }

    func close() { wake.finish() }
}

/// A token bucket per client: `rate` messages a second, up to `burst` at once.
struct RateLimit {
    let rate: Double, burst: Double
    private var tokens: Double
    private var last: ContinuousClock.Instant

    init(rate: Double, burst: Double) {
        self.rate = rate; self.burst = burst; tokens = burst; last = .now
    }

    mutating func allow() -> Bool {
        let now = ContinuousClock.now
        let elapsed = now - last
        last = now
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        tokens = min(burst, tokens + seconds * rate)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
