import MIDI

/// Where a routed message goes: Carillon's own channels (the message's channel),
/// or an external output port (index into `ZoneRouter.portName(_:)`, stable for the router's life).
public enum RoutedDestination: Hashable, Sendable {
    case `internal`
    case port(Int)
    /// A zone's MIDI effect chain (`midi-fx`), by the number `ZoneSet(_:effects:)` gave it:
    /// the message is on the zone's first destination's channel; the chain sends its output on.
    case effect(Int)
}

/// What receives the router's messages. Called on the input thread, inside `route`:
/// the conformer must not allocate, lock or log either.
public protocol ZoneSink {
    mutating func send(_ message: MIDIMessage, to destination: RoutedDestination)
}

/// Whether the zones took a message. `.notTaken`: the caller sends it where it went before zones.
public enum Routing: Hashable, Sendable {
    case taken
    case notTaken
}

/// The input thread's zone router: (source, message) → routed messages to a sink.
///
/// Thread rule: one owner, the input thread. `init` and `ZoneSet(_:)` allocate;
/// `route`, `install`, `releaseAll` and `registerSource` do not (fixed tables,
/// sized in `init`). `setZones` compiles and installs (it allocates: not for the input thread).
///
/// Guarantees (each tested in RigTests):
/// - A note-off goes where its note-on went, through the ledger of held notes
///   ((source, channel, key) → the exact slots and transformed keys), whatever zone
///   set or transpose is current by then.
/// - Two zones that put the same key on the same destination channel: the first
///   note-on sounds, later ones are counted (`stats.doubledNotes`) and not sent
///   again (no re-strike); the note-off is sent when the last holder releases.
/// - Sustain (CC 64) and sostenuto (CC 66) reach the destinations of the zones that
///   take them and every slot holding notes from that source and channel. Each
///   (source, channel) holds the pedal down on the slots it sent it down to; a pedal
///   up reaches those and is sent where no other (source, channel) still holds that
///   pedal down there (two keyboards' sustain pedals on one channel are counted,
///   as notes are). A source that disconnects lets its pedals up too.
/// - Channel mode messages (CC 120–127) reach every destination of the current set
///   and every slot holding notes or a pedal. All Sound Off and All Notes Off (120,
///   123) end every note there: the ledger forgets their outputs (a later note-on
///   sounds again; the held keys' note-offs are taken and go nowhere), as an effect
///   chain and x42's MIDI plugins forget theirs. Reset All Controllers (121) lets every pedal up there.
/// - A transposed key outside 0…127 is dropped with its note-off (`stats.droppedNotes`).
/// - A note-on no zone takes is not kept: its note-off finds nothing and is not taken either
///   (unless the keyboard is transposed: then it goes to its own channel through the ledger).
public final class ZoneRouter {
    public static let maxPorts = 32
    public static let maxSources = 64
    /// Every key on every channel of one source.
    public static let maxHeldNotes = 16 * 128
    public static let maxOutputsPerNote = 32
    /// MIDI effect chains a zone set may name (`ZoneSet(_:effects:)`: 0..<maxEffects).
    public static let maxEffects = 32
    /// (source, channel) pairs holding a pedal down at once; beyond them a pedal still
    /// goes down, uncounted (a later pedal up from anyone lets it up).
    public static let maxPedalOwners = 64
    static let noSlot: UInt16 = .max
    static let effectBase = 16 + maxPorts * 16
    static let slotCount = effectBase + maxEffects * 16

    public struct Stats: Hashable, Sendable {
        /// Note-ons (and their note-offs) dropped because transposition left 0…127.
        public var droppedNotes = 0
        /// Note-ons that found their key already sounding on a destination (not sent again).
        public var doubledNotes = 0
        /// Note-ons not routed because the ledger was full (returned `.notTaken`).
        public var ledgerFull = 0
        /// Destinations dropped: a note routed to more than `maxOutputsPerNote`, or a port beyond `maxPorts`.
        public var droppedDestinations = 0
    }

    public private(set) var stats = Stats()
    /// The zone set in force: an empty one until a set is installed, so pedals and
    /// mode messages still follow the notes the ledger holds (`transpose`'s).
    public private(set) var current = ZoneSet([])
    /// The keyboard's transposition (`rig.transpose`), in semitones: added to
    /// every note-on from now on, on top of its zones' own. While it is not 0, a
    /// note no zone takes is routed here too (to its own channel, transposed), so
    /// its note-off follows it. Held notes keep the keys they sounded on.
    public var transpose = 0

    // Ports and sources known to the router (capacity reserved in init).
    private var ports: [String] = []
    private var sourceIDs: [SourceID] = []
    private var sourceNames: [String] = []

    // The ledger: held notes, outputs at a fixed stride.
    private var heldCount = 0
    private let heldSource: FixedTable<SourceID>
    private let heldChannel: FixedTable<UInt8>
    private let heldKey: FixedTable<UInt8>
    private let heldOutCount: FixedTable<Int>
    private let outSlot: FixedTable<UInt16>
    private let outKey: FixedTable<UInt8>
    private let outPedals: FixedTable<UInt8>   // bit 0: sustain passes, bit 1: sostenuto passes, bit 2: pressure passes

    /// Per slot and key: how many held notes sound there (up to `maxHeldNotes`).
    private let sounding: FixedTable<UInt16>
    /// Per slot and pedal (`slot * 2`: sustain, `+ 1`: sostenuto): the pedal owners holding it down there.
    private let pedalHolders: FixedTable<UInt64>
    /// Pedal owners: a (source, channel) with a pedal down, and which (bit 0 sustain, bit 1 sostenuto; 0 = free).
    private let ownerSource: FixedTable<SourceID>
    private let ownerChannel: FixedTable<UInt8>
    private let ownerPedals: FixedTable<UInt8>
    /// Per slot: the message stamp that last reached it (no slot gets one message twice).
    private let stamps: FixedTable<UInt32>
    private var stamp: UInt32 = 0
    /// Per effect chain: the keys sounding in it (its slots' `sounding` entries above 0).
    private let effectKeys: FixedTable<Int>

    public init() {
        ports.reserveCapacity(Self.maxPorts)
        sourceIDs.reserveCapacity(Self.maxSources)
        sourceNames.reserveCapacity(Self.maxSources)
        heldSource = FixedTable(repeating: 0, count: Self.maxHeldNotes)
        heldChannel = FixedTable(repeating: 0, count: Self.maxHeldNotes)
        heldKey = FixedTable(repeating: 0, count: Self.maxHeldNotes)
        heldOutCount = FixedTable(repeating: 0, count: Self.maxHeldNotes)
        outSlot = FixedTable(repeating: 0, count: Self.maxHeldNotes * Self.maxOutputsPerNote)
        outKey = FixedTable(repeating: 0, count: Self.maxHeldNotes * Self.maxOutputsPerNote)
        outPedals = FixedTable(repeating: 0, count: Self.maxHeldNotes * Self.maxOutputsPerNote)
        sounding = FixedTable(repeating: 0, count: Self.slotCount * 128)
        pedalHolders = FixedTable(repeating: 0, count: Self.slotCount * 2)
        ownerSource = FixedTable(repeating: 0, count: Self.maxPedalOwners)
        ownerChannel = FixedTable(repeating: 0, count: Self.maxPedalOwners)
        ownerPedals = FixedTable(repeating: 0, count: Self.maxPedalOwners)
        stamps = FixedTable(repeating: 0, count: Self.slotCount)
        effectKeys = FixedTable(repeating: 0, count: Self.maxEffects)
    }

    deinit {
        heldSource.release(); heldChannel.release(); heldKey.release(); heldOutCount.release()
        outSlot.release(); outKey.release(); outPedals.release()
        sounding.release(); pedalHolders.release(); stamps.release(); effectKeys.release()
        ownerSource.release(); ownerChannel.release(); ownerPedals.release()
    }

    /// The external port a `.port(i)` destination names.
    public func portName(_ index: Int) -> String { ports[index] }
    public var portNames: [String] { ports }
    /// Notes held in the ledger (note-ons a zone took whose note-offs have not come).
    public var heldNotes: Int { heldCount }

    /// Whether a pedal the router sent down is still held by its keyboard (its pedal up must come through the router).
    public var holdsPedals: Bool {
        for o in 0..<Self.maxPedalOwners where ownerPedals[o] != 0 { return true }
        return false
    }

    /// Keys held in effect chain `effect` (note-ons the ledger sent it whose note-offs it has not).
    public func heldNotes(inEffect effect: Int) -> Int {
        effect >= 0 && effect < Self.maxEffects ? effectKeys[effect] : 0
    }

    // MARK: - Zone sets

    /// Compiles and installs `zones` (allocates: call off the input thread's hot path, or use `install`).
    @discardableResult
    public func setZones<S: ZoneSink>(_ zones: [Zone], into sink: inout S) -> ZoneSet {
        install(ZoneSet(zones), into: &sink)
    }

    /// Makes `set` current, safe while notes are held (their note-offs follow the ledger),
    /// and sends each zone's pitch-bend range (RPN 0) to its destinations. Returns the
    /// previous set, for the caller to release off the input thread. No allocation while
    /// the router knows fewer than `maxPorts` ports.
    @discardableResult
    public func install<S: ZoneSink>(_ set: ZoneSet, into sink: inout S) -> ZoneSet {
        for d in 0..<set.destPort.count {
            let p = set.destPort[d]
            let channel = UInt16(set.destChannel[d])
            if p == -2 {
                let effect = set.destEffect[d]
                if effect >= 0 && effect < Self.maxEffects {
                    set.destSlot[d] = UInt16(Self.effectBase + effect * 16) + channel
                } else {
                    set.destSlot[d] = Self.noSlot
                    stats.droppedDestinations += 1
                }
            } else if p < 0 {
                set.destSlot[d] = channel
            } else if let port = portIndex(set.portNames[p]) {
                set.destSlot[d] = UInt16(16 + port * 16) + channel
            } else {
                set.destSlot[d] = Self.noSlot
                stats.droppedDestinations += 1
            }
        }
        resolveSources(set)
        let old = current
        current = set
        for z in 0..<set.bendRanges.count {
            guard let bend = set.bendRanges[z] else { continue }
            let c = set.compiled[z]
            for d in c.destStart..<(c.destStart + c.destCount) where set.destSlot[d] != Self.noSlot {
                let slot = set.destSlot[d], ch = Channel(unchecked: UInt8(slot & 15))
                emit(.cc(101, value: 0, channel: ch), slot, &sink)
                emit(.cc(100, value: 0, channel: ch), slot, &sink)
                emit(.cc(6, value: bend.semitones, channel: ch), slot, &sink)
                emit(.cc(38, value: bend.cents, channel: ch), slot, &sink)
                emit(.cc(101, value: 127, channel: ch), slot, &sink)  // RPN null: later data entry goes nowhere
                emit(.cc(100, value: 127, channel: ch), slot, &sink)
            }
        }
        return old
    }

    private func portIndex(_ name: String) -> Int? {
        for i in 0..<ports.count where ports[i] == name { return i }
        guard ports.count < Self.maxPorts else { return nil }
        ports.append(name)
        return ports.count - 1
    }

    /// Tells the router a source's name (ALSA's `client:port`), so zones that
    /// name their source take it: a zone's `source` matches every source whose
    /// name contains it, letter case aside, as `--connect` finds ports.
    /// Called when a source connects, not per message (the lowercased copy allocates).
    public func registerSource(_ id: SourceID, name: String) {
        let name = name.lowercased()
        if let i = sourceIDs.firstIndex(of: id) {
            sourceNames[i] = name
        } else {
            guard sourceIDs.count < Self.maxSources else { return }
            sourceIDs.append(id); sourceNames.append(name)
        }
        resolveSources(current)
    }

    private func resolveSources(_ set: ZoneSet) {
        for z in 0..<set.compiled.count {
            guard let name = set.sourceNames[z] else { continue }
            var mask: UInt64 = 0
            for i in 0..<sourceNames.count where sourceNames[i].contains(name) { mask |= 1 << UInt64(i) }
            set.compiled[z].sourceMask = mask
        }
    }

    // MARK: - Routing (input thread)

    /// Routes one message from `source`. Safe on the input thread: no allocation, no lock.
    public func route<S: ZoneSink>(_ message: MIDIMessage, from source: SourceID, into sink: inout S) -> Routing {
        switch message {
        case .noteOn(let m):
            if m.velocity.value == 0 { return noteOff(source, m.channel.value, m.note.value, 0, &sink) }
            return noteOn(source, m.channel.value, m.note.value, m.velocity.value, &sink)
        case .noteOff(let m):
            return noteOff(source, m.channel.value, m.note.value, m.velocity.value, &sink)
        case .polyPressure(let m):
            return polyPressure(source, m, &sink)
        case .controlChange(let m):
            return controlChange(source, m, &sink)
        case .programChange(let m):
            return channelWide(source, m.channel.value, MessageKinds.program.rawValue, &sink) { .programChange(m.program, channel: $0) }
        case .channelPressure(let m):
            return channelWide(source, m.channel.value, MessageKinds.pressure.rawValue, &sink) { .channelPressure(m.pressure, channel: $0) }
        case .pitchBend(let m):
            return channelWide(source, m.channel.value, MessageKinds.pitchBend.rawValue, &sink) { .pitchBend(m.value, channel: $0) }
        default:
            return .notTaken
        }
    }

    /// Releases every note `source` holds, wherever it went (external ports too),
    /// then lets its pedals up: for a source that disconnected. No allocation.
    public func releaseAll<S: ZoneSink>(source: SourceID, into sink: inout S) {
        var i = heldCount - 1
        while i >= 0 {
            if heldSource[i] == source { release(i, velocity: 0, &sink) }
            i -= 1
        }
        for o in 0..<Self.maxPedalOwners where ownerPedals[o] != 0 && ownerSource[o] == source { releasePedals(of: o, &sink) }
    }

    /// Releases every note the ledger holds, and every pedal, from every source
    /// (the session ends: nothing it started may hang on another synth). No allocation.
    public func releaseEverything<S: ZoneSink>(into sink: inout S) {
        while heldCount > 0 { release(heldCount - 1, velocity: 0, &sink) }
        for o in 0..<Self.maxPedalOwners where ownerPedals[o] != 0 { releasePedals(of: o, &sink) }
    }

    // MARK: - Internals

    private func sourceSlot(_ source: SourceID) -> Int {
        for i in 0..<sourceIDs.count where sourceIDs[i] == source { return i }
        return -1
    }

    @inline(__always)
    private func takes(_ c: ZoneSet.Compiled, _ source: SourceID, _ sourceSlot: Int, _ channel: UInt8, _ kind: UInt8) -> Bool {
        guard c.kinds & kind != 0, c.channelMask & (1 << UInt16(channel)) != 0 else { return false }
        if c.anySource { return true }
        if let id = c.sourceID { return id == source }
        return sourceSlot >= 0 && c.sourceMask & (1 << UInt64(sourceSlot)) != 0
    }

    @inline(__always)
    private func emit<S: ZoneSink>(_ message: MIDIMessage, _ slot: UInt16, _ sink: inout S) {
        sink.send(message, to: slot < 16 ? .internal
                  : Int(slot) >= Self.effectBase ? .effect((Int(slot) - Self.effectBase) >> 4) : .port(Int(slot - 16) >> 4))
    }

    @inline(__always)
    private func nextStamp() -> UInt32 {
        stamp &+= 1
        if stamp == 0 {
            for i in 0..<stamps.count { stamps[i] = 0 }
            stamp = 1
        }
        return stamp
    }

    /// True the first time `slot` is marked for the current stamp.
    @inline(__always)
    private func mark(_ slot: UInt16, _ s: UInt32) -> Bool {
        if stamps[Int(slot)] == s { return false }
        stamps[Int(slot)] = s
        return true
    }

    private func find(_ source: SourceID, _ channel: UInt8, _ key: UInt8) -> Int? {
        for i in 0..<heldCount where heldKey[i] == key && heldChannel[i] == channel && heldSource[i] == source { return i }
        return nil
    }

    private func noteOn<S: ZoneSink>(_ source: SourceID, _ channel: UInt8, _ key: UInt8, _ velocity: UInt8, _ sink: inout S) -> Routing {
        if let old = find(source, channel, key) { release(old, velocity: 0, &sink) }
        guard heldCount < Self.maxHeldNotes else {
            stats.ledgerFull += 1
            return .notTaken
        }
        let h = heldCount
        heldSource[h] = source; heldChannel[h] = channel; heldKey[h] = key
        heldCount += 1
        var outs = 0
        var taken = false
        do {
            let set = current
            let sourceSlot = set.namesSources ? self.sourceSlot(source) : -1
            for z in 0..<set.compiled.count {
                let c = set.compiled[z]
                guard takes(c, source, sourceSlot, channel, MessageKinds.notes.rawValue),
                      key >= c.keyLo, key <= c.keyHi, velocity >= c.velLo, velocity <= c.velHi else { continue }
                taken = true
                let k = Int(key) + c.transpose + transpose
                guard k >= 0, k <= 127 else { stats.droppedNotes += 1; continue }
                let v = set.velocityTables[z * 128 + Int(velocity)]
                let pedals: UInt8 = (c.passesSustain ? 1 : 0) | (c.passesSostenuto ? 2 : 0) | (c.kinds & MessageKinds.pressure.rawValue != 0 ? 4 : 0)
                for d in c.destStart..<(c.destStart + c.destCount) where set.destSlot[d] != Self.noSlot {
                    addOutput(h, &outs, slot: set.destSlot[d], key: k, velocity: v, pedals: pedals, &sink)
                }
            }
        }
        if !taken && transpose != 0 {
            // No zone takes it: its own channel, as without zones, moved by the keyboard's transposition.
            taken = true
            let k = Int(key) + transpose
            if k >= 0 && k <= 127 {
                addOutput(h, &outs, slot: UInt16(channel), key: k, velocity: velocity, pedals: 7, &sink)
            } else {
                stats.droppedNotes += 1
            }
        }
        guard taken else { heldCount -= 1; return .notTaken }   // nothing to follow: its note-off is not taken either
        heldOutCount[h] = outs
        return .taken
    }

    /// One output of held note `h` (its `outs`-th): kept in the ledger, counted on
    /// its slot and key, and sent when it is the first there.
    @inline(__always)
    private func addOutput<S: ZoneSink>(_ h: Int, _ outs: inout Int, slot: UInt16, key k: Int, velocity v: UInt8, pedals: UInt8, _ sink: inout S) {
        guard outs < Self.maxOutputsPerNote else { stats.droppedDestinations += 1; return }
        let o = h * Self.maxOutputsPerNote + outs
        outSlot[o] = slot; outKey[o] = UInt8(k); outPedals[o] = pedals
        outs += 1
        let s = Int(slot) * 128 + k
        sounding[s] &+= 1
        if sounding[s] == 1 {
            if Int(slot) >= Self.effectBase { effectKeys[(Int(slot) - Self.effectBase) >> 4] += 1 }
            emit(.noteOn(UInt7(unchecked: UInt8(k)), velocity: UInt7(unchecked: v), channel: Channel(unchecked: UInt8(slot & 15))), slot, &sink)
        } else {
            stats.doubledNotes += 1
        }
    }

    private func noteOff<S: ZoneSink>(_ source: SourceID, _ channel: UInt8, _ key: UInt8, _ velocity: UInt8, _ sink: inout S) -> Routing {
        guard let i = find(source, channel, key) else { return .notTaken }
        release(i, velocity: velocity, &sink)
        return .taken
    }

    /// Sends held note `i`'s note-offs (where it was the last holder) and removes it from the ledger.
    private func release<S: ZoneSink>(_ i: Int, velocity: UInt8, _ sink: inout S) {
        let base = i * Self.maxOutputsPerNote
        for o in 0..<heldOutCount[i] {
            let slot = outSlot[base + o], k = outKey[base + o]
            let s = Int(slot) * 128 + Int(k)
            sounding[s] &-= 1
            if sounding[s] == 0 {
                if Int(slot) >= Self.effectBase { effectKeys[(Int(slot) - Self.effectBase) >> 4] -= 1 }
                emit(.noteOff(UInt7(unchecked: k), velocity: UInt7(unchecked: velocity), channel: Channel(unchecked: UInt8(slot & 15))), slot, &sink)
            }
        }
        let last = heldCount - 1
        if i != last {
            heldSource[i] = heldSource[last]; heldChannel[i] = heldChannel[last]; heldKey[i] = heldKey[last]
            heldOutCount[i] = heldOutCount[last]
            let from = last * Self.maxOutputsPerNote
            for o in 0..<heldOutCount[last] {
                outSlot[base + o] = outSlot[from + o]; outKey[base + o] = outKey[from + o]; outPedals[base + o] = outPedals[from + o]
            }
        }
        heldCount = last
    }

    private func polyPressure<S: ZoneSink>(_ source: SourceID, _ m: MIDIMessage.PolyPressure, _ sink: inout S) -> Routing {
        guard let i = find(source, m.channel.value, m.note.value) else { return .notTaken }
        let base = i * Self.maxOutputsPerNote
        for o in 0..<heldOutCount[i] where outPedals[base + o] & 4 != 0 {
            let slot = outSlot[base + o]
            emit(.polyPressure(UInt7(unchecked: outKey[base + o]), pressure: m.pressure, channel: Channel(unchecked: UInt8(slot & 15))), slot, &sink)
        }
        return .taken
    }

    private func channelWide<S: ZoneSink>(_ source: SourceID, _ channel: UInt8, _ kind: UInt8, _ sink: inout S,
                                          _ make: (Channel) -> MIDIMessage) -> Routing {
        let set = current
        let sourceSlot = self.sourceSlot(source)
        let s = nextStamp()
        var taken = false
        for z in 0..<set.compiled.count {
            let c = set.compiled[z]
            guard takes(c, source, sourceSlot, channel, kind) else { continue }
            taken = true
            for d in c.destStart..<(c.destStart + c.destCount) {
                let slot = set.destSlot[d]
                if slot != Self.noSlot, mark(slot, s) { emit(make(Channel(unchecked: UInt8(slot & 15))), slot, &sink) }
            }
        }
        return taken ? .taken : .notTaken
    }

    private func controlChange<S: ZoneSink>(_ source: SourceID, _ m: MIDIMessage.ControlChange, _ sink: inout S) -> Routing {
        let set = current
        let sourceSlot = self.sourceSlot(source)
        let channel = m.channel.value, controller = m.controller.value, value = m.value
        let s = nextStamp()
        var taken = false
        let cc = MessageKinds.controllers.rawValue

        if controller >= 120 {
            // Mode messages: everywhere the keyboard's notes, pedals or zones can be.
            for z in 0..<set.compiled.count where takes(set.compiled[z], source, sourceSlot, channel, cc) { taken = true }
            for d in 0..<set.destSlot.count {
                let slot = set.destSlot[d]
                if slot != Self.noSlot, mark(slot, s) { emit(.cc(m.controller, value: value, channel: Channel(unchecked: UInt8(slot & 15))), slot, &sink) }
            }
            for i in 0..<heldCount {
                let base = i * Self.maxOutputsPerNote
                for o in 0..<heldOutCount[i] {
                    let slot = outSlot[base + o]
                    if mark(slot, s) { emit(.cc(m.controller, value: value, channel: Channel(unchecked: UInt8(slot & 15))), slot, &sink) }
                }
            }
            for slot in 0..<Self.slotCount where pedalHolders[slot * 2] | pedalHolders[slot * 2 + 1] != 0 {
                let sl = UInt16(slot)
                if mark(sl, s) { emit(.cc(m.controller, value: value, channel: Channel(unchecked: UInt8(sl & 15))), sl, &sink) }
            }
            // Every slot holding a note or a pedal got it: what it ended, the ledger forgets.
            if controller == 120 || controller == 123 { forgetSoundingNotes() }
            if controller == 121 { for h in 0..<pedalHolders.count { pedalHolders[h] = 0 } }
            return taken ? .taken : .notTaken
        }

        let pedalBit: UInt8 = controller == 64 ? 1 : controller == 66 ? 2 : 0
        let down = value.value >= 64
        // The (source, channel) a pedal belongs to; -1: none (a pedal up it never sent down, or the table is full).
        let owner = pedalBit == 0 ? -1 : pedalOwner(source, channel, creating: down)
        if down && owner >= 0 { ownerPedals[owner] |= pedalBit }
        for z in 0..<set.compiled.count {
            let c = set.compiled[z]
            guard takes(c, source, sourceSlot, channel, cc) else { continue }
            taken = true
            let out = set.controllerTables[z * 128 + Int(controller)]
            guard out != 255 else { continue }
            for d in c.destStart..<(c.destStart + c.destCount) {
                let slot = set.destSlot[d]
                guard slot != Self.noSlot, mark(slot, s) else { continue }
                if pedalBit != 0 && out == controller {
                    sendPedal(m.controller, value, pedalBit, owner, slot, &sink)
                } else {
                    emit(.cc(UInt7(unchecked: out), value: value, channel: Channel(unchecked: UInt8(slot & 15))), slot, &sink)
                }
            }
        }
        guard pedalBit != 0 else { return taken ? .taken : .notTaken }
        // Pedals also reach the slots holding this source and channel's notes, and a pedal up every slot it holds down.
        for i in 0..<heldCount where heldSource[i] == source && heldChannel[i] == channel {
            let base = i * Self.maxOutputsPerNote
            for o in 0..<heldOutCount[i] where outPedals[base + o] & pedalBit != 0 {
                let slot = outSlot[base + o]
                guard mark(slot, s) else { continue }
                sendPedal(m.controller, value, pedalBit, owner, slot, &sink)
                taken = true
            }
        }
        if !down && owner >= 0 {
            let bit: UInt64 = 1 << UInt64(owner), pedal = Int(pedalBit >> 1)
            for slot in 0..<Self.slotCount where pedalHolders[slot * 2 + pedal] & bit != 0 {
                let sl = UInt16(slot)
                guard mark(sl, s) else { continue }
                sendPedal(m.controller, value, pedalBit, owner, sl, &sink)
                taken = true
            }
            ownerPedals[owner] &= ~pedalBit   // 0: the entry is free again
        }
        return taken ? .taken : .notTaken
    }

    /// Sends a pedal to `slot` for `owner`: down always (values above 64 vary on a
    /// half-pedal); up only where no other owner still holds that pedal down.
    @inline(__always)
    private func sendPedal<S: ZoneSink>(_ controller: UInt7, _ value: UInt7, _ pedalBit: UInt8, _ owner: Int, _ slot: UInt16, _ sink: inout S) {
        let h = Int(slot) * 2 + Int(pedalBit >> 1)
        if value.value >= 64 {
            if owner >= 0 { pedalHolders[h] |= 1 << UInt64(owner) }
        } else {
            if owner >= 0 { pedalHolders[h] &= ~(1 << UInt64(owner)) }
            guard pedalHolders[h] == 0 else { return }
        }
        emit(.cc(controller, value: value, channel: Channel(unchecked: UInt8(slot & 15))), slot, &sink)
    }

    /// The pedal-owner entry of (source, channel); with `creating`, made if missing. -1 when none (or the table is full).
    private func pedalOwner(_ source: SourceID, _ channel: UInt8, creating: Bool) -> Int {
        var free = -1
        for o in 0..<Self.maxPedalOwners {
            if ownerPedals[o] != 0 {
                if ownerSource[o] == source && ownerChannel[o] == channel { return o }
            } else if free < 0 { free = o }
        }
        guard creating, free >= 0 else { return -1 }
        ownerSource[free] = source; ownerChannel[free] = channel
        return free
    }

    /// Lets up every pedal `owner` holds down, where no other owner holds it; frees the entry.
    private func releasePedals<S: ZoneSink>(of owner: Int, _ sink: inout S) {
        let bit: UInt64 = 1 << UInt64(owner)
        for slot in 0..<Self.slotCount {
            for pedal in 0..<2 where pedalHolders[slot * 2 + pedal] & bit != 0 {
                sendPedal(pedal == 0 ? 64 : 66, 0, UInt8(1 << pedal), owner, UInt16(slot), &sink)
            }
        }
        ownerPedals[owner] = 0
    }

    /// After All Sound Off or All Notes Off reached every slot
    /// holding a note: those notes have ended. Held keys stay in the ledger (their
    /// note-offs are taken, and go nowhere); the keys they sounded are free.
    private func forgetSoundingNotes() {
        for i in 0..<heldCount {
            let base = i * Self.maxOutputsPerNote
            for o in 0..<heldOutCount[i] { sounding[Int(outSlot[base + o]) * 128 + Int(outKey[base + o])] = 0 }
            heldOutCount[i] = 0
        }
        for e in 0..<Self.maxEffects { effectKeys[e] = 0 }
    }
}
