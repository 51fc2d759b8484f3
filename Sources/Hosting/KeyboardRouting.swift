import Controls
import Engine
import MIDI
import Rig
import Synchronization

/// Where a zone's external destinations (`to: { port: NAME, channel: C }`)
/// go: ALSA sequencer ports of Carillon's own, or JACK `midi_out`. Both
/// calls come with `KeyboardRouting`'s lock held.
public protocol ExternalMIDIOutput: Sendable {
    /// Makes ready the ports `names` (a start or a reload; may allocate).
    func prepare(portNames names: [String])
    /// Sends `message` to the port named `name` (one `prepare` named). On the
    /// input thread: no allocation, no wait.
    func send(_ message: MIDIMessage, portName name: String)
}

/// The keyboard's way to the instruments, one for live, play and `render
/// --take`: a message goes to the controls first (a knob's CC, a pad's note);
/// what they do not use goes through the rig's zones (splits, layers,
/// transposition, velocity, external ports: `Rig.ZoneRouter`), and what no
/// zone takes goes to the render thread's queue on its own channel, as it
/// did before zones. A note-off reaches the controls (a button or pad played
/// by a key lets go) and always goes on: the zones' ledger sends it where its
/// note-on went, whatever changed in between (a scene, a reload, a transpose).
///
/// The zones follow the hub: a scene with `zones:` puts its own in place
/// while it is current, a reloaded mapping its new ones — before the switch
/// or the reload returns, so the next message is routed by them. Each
/// mapping's sets are compiled once, when it arrives.
///
/// Threads: `route` and `releaseAll` from the input threads (ALSA's, JACK's,
/// the web page's notes); the router runs under a lock of its own that only
/// those and a switch take, never the render thread.
public final class KeyboardRouting: Sendable {
    private let hub: ControlHub
    private let events: (any ChannelOutput)?
    private let external: ExternalMIDIOutput?
    private let state: Mutex<State>
    private let sceneToken = Mutex<SubscriptionToken?>(nil)
    private let transposeToken = Mutex<SubscriptionToken?>(nil)
    /// Whether any zone is in force: without, a message skips the router's lock.
    private let active = Atomic<Bool>(false)

    /// The router, and the current mapping's compiled sets: the top level's,
    /// then each scene's own (nil: the scene keeps the top level's).
    private struct State {
        let router = ZoneRouter()
        var topLevel = ZoneSet([])
        var scenes: [ZoneSet?] = []
        /// Per effect chain: the current set no longer uses it, and notes are still held in it:
        /// it is released (All Notes Off) when the last of them is.
        var draining = [Bool](repeating: false, count: ZoneRouter.maxEffects)
        var anyDraining = false
        /// The MIDI effect chains the output side runs, by number (nil: an empty slot).
        var effects: [MIDIEffectSpec?]
        /// The external ports the current mapping's chains send to.
        var effectPortNames: [String] = []
    }

    /// `effects`: the zones' MIDI effect chains `events` takes (`pushEffect`), by
    /// number; a zone with `midi-fx` goes through the chain made for it (the
    /// same scene, zone, plugins and destinations), a zone with none made for
    /// it straight to its destinations. `effectSlots`: the chain numbers
    /// `events` takes (at least `effects.count`), the ones after `effects` free
    /// for a reload's chains (`placeEffects`).
    public init(hub: ControlHub, events: (any ChannelOutput)?, external: ExternalMIDIOutput? = nil,
                effects: [MIDIEffectSpec] = [], effectSlots: Int = 0) {
        self.hub = hub
        self.events = events
        self.external = external
        let slots = min(ZoneRouter.maxEffects, max(effects.count, effectSlots))
        state = Mutex(State(effects: effects.prefix(slots).map { $0 } + Array(repeating: nil, count: slots - min(slots, effects.count))))
    }

    /// With a sample clock: the frame a message placed so plays at, fixed now, so
    /// a recording of it and the messages routed from it (`.frame` of it) agree.
    public func frame(pinning placement: EventQueueProducer.Placement) -> UInt64? {
        events?.frame(pinning: placement)
    }

    /// The effect chain numbers of `zones` (`scene`'s own, nil: the top level's):
    /// where `effects` has the chain made for the zone's spec (`specs`: the mapping's).
    private static func chains(_ zones: [Zone], scene: Int?, specs: [MIDIEffectSpec], in effects: [MIDIEffectSpec?]) -> [Int?] {
        zones.map { zone in
            guard !zone.midiFX.isEmpty, let spec = specs.first(where: { $0.scene == scene && $0.zone == zone.name }) else { return nil }
            return effects.firstIndex { $0 == spec }
        }
    }

    /// A reloaded mapping's chains (`MIDIEffectSpec.all(in:)`, before the hub
    /// takes the mapping): each keeps the number of the chain made for the
    /// same spec; the others get a number whose chain nothing needs any more —
    /// an empty slot first, then one no zone of the current mapping names,
    /// then one it names — never one that holds a key or is still to be
    /// released. Returns those that need a chain made; what finds no number is
    /// in `unplaced` (its zone plays without its `midi-fx`). Put them in place
    /// with `installEffects` once their chains are offered to their slots.
    public func placeEffects(_ specs: [MIDIEffectSpec]) -> (new: [(slot: Int, spec: MIDIEffectSpec)], unplaced: [MIDIEffectSpec]) {
        state.withLock { s in
            let kept = Set(specs.compactMap { spec in s.effects.firstIndex { $0 == spec } })
            let named = Set(s.topLevel.effectChains + s.scenes.flatMap { $0?.effectChains ?? [] })
            let idle = s.effects.indices.filter { !kept.contains($0) && !s.draining[$0] && s.router.heldNotes(inEffect: $0) == 0 }
            var free = idle.filter { s.effects[$0] == nil } + idle.filter { s.effects[$0] != nil && !named.contains($0) }
                + idle.filter { s.effects[$0] != nil && named.contains($0) }
            var new: [(slot: Int, spec: MIDIEffectSpec)] = [], unplaced: [MIDIEffectSpec] = []
            for spec in specs where !s.effects.contains(spec) {
                if free.isEmpty { unplaced.append(spec) } else { new.append((free.removeFirst(), spec)) }
            }
            return (new, unplaced)
        }
    }

    /// Puts `placed` (`placeEffects`' new chains, offered to their slots) in the table the next sets are compiled with.
    public func installEffects(_ placed: [(slot: Int, spec: MIDIEffectSpec)]) {
        state.withLock { s in
            for (slot, spec) in placed where s.effects.indices.contains(slot) { s.effects[slot] = spec }
        }
    }

    /// What the zones counted (notes doubled, dropped by transposition, …).
    public var zoneStats: ZoneRouter.Stats { state.withLock { $0.router.stats } }

    /// Whether a chain of the current mapping sends to an external port (`sendEffectPortMessages` has work).
    public var sendsEffectsToPorts: Bool { state.withLock { !$0.effectPortNames.isEmpty } }

    /// Notes the zones' ledger holds.
    public var heldNotes: Int { state.withLock { $0.router.heldNotes } }

    /// Puts the zones of the hub's mapping and current scene in place, and
    /// follows its switches and reloads until `stop`. Call once the output
    /// side is ready (a zone set sends its bend ranges when it comes in).
    public func start(at placement: EventQueueProducer.Placement = .afterLast) {
        let token = hub.observeScenes { [weak self] change in self?.follow(change, at: placement) }
        sceneToken.withLock { $0 = token }
        // `rig.transpose` (a control, a scene, the page, OSC): the notes after it move.
        let transpose = hub.subscribe { [weak self] change in
            guard change.address == .rigTranspose, let self else { return }
            self.state.withLock { s in
                s.router.transpose = Int(change.value)
                self.updateActive(&s)
            }
        }
        transposeToken.withLock { $0 = transpose }
    }

    public func stop() {
        if let token = sceneToken.withLock({ $0 }) { hub.unobserveScenes(token) }
        if let token = transposeToken.withLock({ $0 }) { hub.unsubscribe(token) }
    }

    /// Whether a message must go through the router: zones in force, notes or
    /// pedals it holds, chains to release, or the keyboard transposed.
    private func updateActive(_ s: inout State) {
        let zones = !s.router.current.zones.isEmpty
        active.store(zones || s.router.heldNotes > 0 || s.router.holdsPedals || s.anyDraining || s.router.transpose != 0,
                     ordering: .relaxed)
    }

    /// A switch or a reload (under the hub's lock): new sets compiled first,
    /// outside the router's lock, then installed.
    private func follow(_ change: SceneChange, at placement: EventQueueProducer.Placement) {
        var compiled: (ZoneSet, [ZoneSet?])? = nil
        var effectPorts: [String] = []
        if change.mappingChanged {
            // The table changes only before a reload reaches the hub, on the thread that reloads: read once.
            let effects = state.withLock { $0.effects }
            let mapping = change.mapping
            let specs = mapping.flatMap { try? MIDIEffectSpec.all(in: $0) } ?? []
            for name in specs.flatMap({ $0.ports.map(\.name) }) where !effectPorts.contains(name) { effectPorts.append(name) }
            let top = mapping?.zones ?? []
            compiled = (ZoneSet(top, effects: Self.chains(top, scene: nil, specs: specs, in: effects)),
                        mapping?.scenes.enumerated().map { s, scene in
                            scene.zones.map { ZoneSet($0, effects: Self.chains($0, scene: s, specs: specs, in: effects)) }
                        } ?? [])
        }
        state.withLock { s in
            if let (top, scenes) = compiled { s.topLevel = top; s.scenes = scenes; s.effectPortNames = effectPorts }
            let set = change.scene.flatMap { s.scenes.indices.contains($0) ? s.scenes[$0] : nil } ?? s.topLevel
            external?.prepare(portNames: set.portNames + s.effectPortNames.filter { !set.portNames.contains($0) })
            var sink = Sink(events: events, external: external, router: s.router, placement: placement)
            let old = s.router.install(set, into: &sink)
            // A chain the new set does not use: released now, or when its last held note is.
            for k in old.effectChains where !set.effectChains.contains(k) {
                s.draining[k] = true
                s.anyDraining = true
            }
            for k in set.effectChains { s.draining[k] = false }
            releaseDrained(&s)
            // Held notes and pedals keep the router in the way: their note-offs and pedal ups follow them.
            updateActive(&s)
        }
    }

    /// Releases the draining chains that hold no note now: All Notes Off goes in,
    /// and each chain sends a note-off for every note it still has on.
    private func releaseDrained(_ s: inout State) {
        guard s.anyDraining else { return }
        var left = false
        for k in 0..<s.draining.count where s.draining[k] {
            if s.router.heldNotes(inEffect: k) == 0 {
                s.draining[k] = false
                releaseEffect(k, of: k < s.effects.count ? s.effects[k] : nil, placement: .afterLast)
            } else {
                left = true
            }
        }
        s.anyDraining = left
    }

    /// All Notes Off into chain `k` (made for `spec`; nil: an empty slot), on the channel its zone's messages go in on.
    private func releaseEffect(_ k: Int, of spec: MIDIEffectSpec?, placement: EventQueueProducer.Placement) {
        guard let spec else { return }
        events?.pushEffect(k, .controlChange(123, value: 0, channel: spec.inputChannel.intValue), at: placement)
    }

    /// Sends on what the MIDI effect chains queued for external ports (`ports`:
    /// the plugin host's): from a thread that may wait (live's control loop),
    /// under the router's lock, as the zones' own port messages are sent.
    public func sendEffectPortMessages(from ports: MIDIEffectPorts) {
        guard let external else { return }
        state.withLock { _ in ports.drain { message, name in external.send(message, portName: name) } }
    }

    /// Tells the zones a source's name (zones may name the port they take).
    public func registerSource(_ id: SourceID, name: String) {
        state.withLock { $0.router.registerSource(id, name: name) }
    }

    /// One message from `source`: controls, then zones, then the queue. SysEx
    /// goes straight to the queue (GM/GS/XG resets, tuning).
    public func route(_ message: MIDIMessage, from source: SourceID, at placement: EventQueueProducer.Placement) {
        if case .sysEx(let sysEx) = message {
            events?.pushSysEx(sysEx.data, at: placement)
            return
        }
        guard message.channel != nil else { return }
        // A note-off reaches the controls too (a button or pad played by a key lets go),
        // and goes on where its note-on went in any case.
        if message.isNoteOff { _ = hub.receive(message, at: placement.frame) } else if hub.receive(message, at: placement.frame) { return }
        if active.load(ordering: .relaxed) {
            let routing = state.withLock { s in
                var sink = Sink(events: events, external: external, router: s.router, placement: placement)
                let routing = s.router.route(message, from: source, into: &sink)
                if s.anyDraining { releaseDrained(&s) }
                return routing
            }
            if routing == .taken { return }
        }
        if let events, let channelMessage = ChannelMessage(message) { events.push(channelMessage, at: placement) }
    }

    /// Releases every note `source` holds wherever the zones sent it (a source
    /// that disconnected): note-offs to each channel and external port.
    public func releaseAll(source: SourceID, at placement: EventQueueProducer.Placement = .afterLast) {
        state.withLock { s in
            var sink = Sink(events: events, external: external, router: s.router, placement: placement)
            s.router.releaseAll(source: source, into: &sink)
            // What the chains made (an echo, a held chord) ends too, where no other source holds notes.
            for k in s.effects.indices where s.router.heldNotes(inEffect: k) == 0 {
                releaseEffect(k, of: s.effects[k], placement: placement)
                s.draining[k] = false
            }
            s.anyDraining = s.draining.contains(true)
        }
    }

    /// Releases every note the zones hold, wherever it went: the session ends.
    public func releaseEverything() {
        state.withLock { s in
            var sink = Sink(events: events, external: external, router: s.router, placement: .afterLast)
            s.router.releaseEverything(into: &sink)
            for k in s.effects.indices { releaseEffect(k, of: s.effects[k], placement: .afterLast) }
        }
    }

    /// The router's output: Carillon's channels through the queue, external ports through `external`.
    private struct Sink: ZoneSink {
        let events: (any ChannelOutput)?
        let external: ExternalMIDIOutput?
        let router: ZoneRouter
        let placement: EventQueueProducer.Placement

        mutating func send(_ message: MIDIMessage, to destination: RoutedDestination) {
            switch destination {
            case .internal:
                if let events, let channelMessage = ChannelMessage(message) { events.push(channelMessage, at: placement) }
            case .port(let port):
                external?.send(message, portName: router.portName(port))
            case .effect(let k):
                if let events, let channelMessage = ChannelMessage(message) { events.pushEffect(k, channelMessage, at: placement) }
            }
        }
    }
}
