import MIDI
import Rig
import SeededRandom
import Testing

/// The router against a model of what its destinations hear, over random
/// streams: two keyboards on two channels, overlapping zones (layers, splits,
/// transposes that put two keys on one, external ports, zones that drop a pedal),
/// zone sets swapped while keys and pedals are down, sustain and sostenuto,
/// All Notes Off, All Sound Off, Reset All Controllers, disconnects, and the
/// keyboard's transposition moved while keys are down.
///
/// After every step:
/// - no cut note: every output a held key made (worked out from the zones
///   current at its note-on, not by the router) still sounds, unless a mode
///   message reached its channel since;
/// - no stuck note: nothing sounds that no held key made;
/// - no re-strike: no note-on reaches a key already sounding there;
/// - no cut pedal: a channel a keyboard's pedal went down on stays down while
///   that keyboard holds the pedal (unless Reset All Controllers reached it).
/// At the end, every key and pedal up: nothing sounds, no pedal is down.
@Suite struct ZoneRouterModelTests {
    @Test(arguments: 1...300) func randomStream_neitherCutsNorStrandsANoteOrAPedal(seed: UInt64) {
        var run = ModelRun(seed: seed)
        for step in 0..<600 {
            run.step()
            if let failure = run.failure { Issue.record("seed \(seed), step \(step): \(failure)\n\(run.history.suffix(12).joined(separator: "\n"))"); return }
        }
        run.finish()
        if let failure = run.failure { Issue.record("seed \(seed), at the end: \(failure)\n\(run.history.suffix(12).joined(separator: "\n"))") }
    }
}

/// A destination channel as the sink sees it: internal channel, or a port's channel.
private struct Place: Hashable, CustomStringConvertible {
    var destination: String
    var channel: UInt8
    var description: String { "\(destination) ch\(channel + 1)" }
}

private struct Sounding: Hashable, CustomStringConvertible {
    var place: Place
    var key: UInt8
    var description: String { "\(place):\(key)" }
}

private struct Held: Hashable {
    var source: SourceID
    var channel: UInt8
    var key: UInt8
}

private struct Pedal: Hashable {
    var source: SourceID
    var channel: UInt8
    var controller: UInt8
}

private struct ModelRun {
    let router = ZoneRouter()
    var rng: SeededGenerator
    var zones: [Zone] = []
    var failure: String?
    var history: [String] = []

    // What the destinations hear.
    var sounding: Set<Sounding> = []
    var pedalsDown: [Place: Set<UInt8>] = [:]   // place → controllers (64, 66) down
    // What the keyboards hold.
    var held: [Held: Set<Sounding>] = [:]       // key → the outputs it should still be sounding
    var pedals: [Pedal: Set<Place>] = [:]       // pedal down → the places it went down on

    let sources: [SourceID] = [1, 2]

    init(seed: UInt64) { rng = SeededGenerator(seed: seed) }

    mutating func step() {
        let roll = Int.random(in: 0..<100, using: &rng)
        let source = sources.randomElement(using: &rng)!
        let channel = UInt8.random(in: 0...1, using: &rng)
        switch roll {
        case 0..<36: noteOn(source, channel, UInt8.random(in: 56...68, using: &rng), UInt8.random(in: 0...127, using: &rng))
        case 36..<66:
            let mine = held.keys.filter { $0.source == source }
            if let h = mine.randomElement(using: &rng) { noteOff(h.source, h.channel, h.key) } else { noteOff(source, channel, 60) }
        case 66..<72: install(randomZones())
        case 72..<82: pedal(source, channel, 64, down: Bool.random(using: &rng))
        case 82..<88: pedal(source, channel, 66, down: Bool.random(using: &rng))
        case 88..<91: mode(source, channel, 123)
        case 91..<93: mode(source, channel, 120)
        case 93..<95: mode(source, channel, 121)
        case 95..<97: disconnect(source)
        case 97, 98: setTranspose([0, 0, 1, -1, 2, 12, -12].randomElement(using: &rng)!)
        default: noteOn(source, channel, UInt8.random(in: 56...68, using: &rng), 0)   // velocity 0: a note-off
        }
    }

    /// Every key and pedal up, then nothing may sound or stay down.
    mutating func finish() {
        for h in held.keys.sorted(by: { ($0.source, $0.channel, $0.key) < ($1.source, $1.channel, $1.key) }) where failure == nil {
            noteOff(h.source, h.channel, h.key)
        }
        for p in pedals.keys.sorted(by: { ($0.source, $0.channel, $0.controller) < ($1.source, $1.channel, $1.controller) }) where failure == nil {
            pedal(p.source, p.channel, p.controller, down: false)
        }
        guard failure == nil else { return }
        if !sounding.isEmpty { failure = "stuck after every key was let go: \(sounding.sorted { $0.description < $1.description })" }
        let down = pedalsDown.filter { !$0.value.isEmpty }
        if !down.isEmpty { failure = "pedals down after every pedal was let go: \(down)" }
    }

    // MARK: Steps

    mutating func noteOn(_ source: SourceID, _ channel: UInt8, _ key: UInt8, _ velocity: UInt8) {
        let h = Held(source: source, channel: channel, key: key)
        history.append("src \(source) ch\(channel + 1) note-on \(key) v\(velocity)")
        if velocity == 0 { held[h] = nil } else {
            held[h] = nil   // a second note-on ends the first
        }
        let sent = route(.noteOn(UInt7(key), velocity: UInt7(velocity), channel: Channel(channel)), from: source)
        if velocity > 0 { held[h] = expectedOutputs(source, channel, key, velocity) }
        check(sent)
    }

    mutating func noteOff(_ source: SourceID, _ channel: UInt8, _ key: UInt8) {
        history.append("src \(source) ch\(channel + 1) note-off \(key)")
        held[Held(source: source, channel: channel, key: key)] = nil
        check(route(.noteOff(UInt7(key), channel: Channel(channel)), from: source))
    }

    mutating func pedal(_ source: SourceID, _ channel: UInt8, _ controller: UInt8, down: Bool) {
        history.append("src \(source) ch\(channel + 1) cc\(controller) \(down ? "down" : "up")")
        let p = Pedal(source: source, channel: channel, controller: controller)
        if !down { pedals[p] = nil }
        let sent = route(.cc(UInt7(controller), value: down ? 127 : 0, channel: Channel(channel)), from: source)
        if down {
            // The places this press reached hold it (with any it held already).
            var places = pedals[p] ?? []
            for (m, d) in sent { if case .controlChange(let c) = m, c.controller.value == controller, c.value.value >= 64 { places.insert(place(d, c.channel)) } }
            pedals[p] = places
        }
        check(sent)
    }

    mutating func mode(_ source: SourceID, _ channel: UInt8, _ controller: UInt8) {
        history.append("src \(source) ch\(channel + 1) cc\(controller)")
        check(route(.cc(UInt7(controller), value: 0, channel: Channel(channel)), from: source))
    }

    mutating func disconnect(_ source: SourceID) {
        history.append("src \(source) disconnects")
        var sink = Log()
        router.releaseAll(source: source, into: &sink)
        for h in held.keys where h.source == source { held[h] = nil }
        for p in pedals.keys where p.source == source { pedals[p] = nil }
        check(sink.sent)
    }

    mutating func setTranspose(_ semitones: Int) {
        history.append("transpose \(semitones)")
        router.transpose = semitones
    }

    mutating func install(_ zones: [Zone]) {
        history.append("install \(zones.map(describe).joined(separator: "; "))")
        self.zones = zones
        var sink = Log()
        router.setZones(zones, into: &sink)
        check(sink.sent)
    }

    // MARK: The model

    private mutating func route(_ message: MIDIMessage, from source: SourceID) -> [(MIDIMessage, RoutedDestination)] {
        var sink = Log()
        _ = router.route(message, from: source, into: &sink)   // what no zone takes goes elsewhere: not the router's to check
        return sink.sent
    }

    private func place(_ d: RoutedDestination, _ channel: Channel) -> Place {
        switch d {
        case .internal: Place(destination: "internal", channel: channel.value)
        case .port(let i): Place(destination: router.portName(i), channel: channel.value)
        case .effect(let e): Place(destination: "effect \(e)", channel: channel.value)
        }
    }

    /// The outputs of a note-on, from the zones alone (not the router's tables).
    private func expectedOutputs(_ source: SourceID, _ channel: UInt8, _ key: UInt8, _ velocity: UInt8) -> Set<Sounding> {
        var outs: Set<Sounding> = []
        var taken = false
        for z in zones {
            if let s = z.source, s != .id(source) { continue }
            if let cs = z.channels, !cs.contains(Channel(channel)) { continue }
            guard z.kinds.contains(.notes), z.keys.contains(UInt7(key)), z.velocities.contains(UInt7(velocity)) else { continue }
            taken = true
            let k = Int(key) + z.transpose + router.transpose
            guard (0...127).contains(k) else { continue }
            for d in z.destinations {
                switch d {
                case .channel(let c): outs.insert(Sounding(place: Place(destination: "internal", channel: c.value), key: UInt8(k)))
                case .port(let name, let c): outs.insert(Sounding(place: Place(destination: name, channel: c.value), key: UInt8(k)))
                }
            }
        }
        // Transposed, what no zone takes goes to its own channel through the router.
        let k = Int(key) + router.transpose
        if !taken && router.transpose != 0 && (0...127).contains(k) {
            outs.insert(Sounding(place: Place(destination: "internal", channel: channel), key: UInt8(k)))
        }
        return outs
    }

    /// Applies what the destinations received, then checks the invariants.
    private mutating func check(_ sent: [(MIDIMessage, RoutedDestination)]) {
        for (m, d) in sent {
            switch m {
            case .noteOn(let n) where n.velocity.value > 0:
                let s = Sounding(place: place(d, n.channel), key: n.note.value)
                if sounding.contains(s) { failure = failure ?? "re-strike: a note-on reached \(s), already sounding" }
                sounding.insert(s)
            case .noteOn(let n):
                sounding.remove(Sounding(place: place(d, n.channel), key: n.note.value))
            case .noteOff(let n):
                sounding.remove(Sounding(place: place(d, n.channel), key: n.note.value))
            case .controlChange(let c):
                let p = place(d, c.channel)
                switch c.controller.value {
                case 64, 66:
                    if c.value.value >= 64 { pedalsDown[p, default: []].insert(c.controller.value) } else { pedalsDown[p]?.remove(c.controller.value) }
                case 120, 123:
                    // The destination's notes end (held by a pedal they ring on: the synth's business).
                    sounding = sounding.filter { $0.place != p }
                    for h in held.keys { held[h] = held[h]!.filter { $0.place != p } }
                case 121:
                    pedalsDown[p] = nil
                    for k in pedals.keys { pedals[k]!.remove(p) }
                default: break
                }
            default: break
            }
        }
        guard failure == nil else { return }
        let expected = held.values.reduce(into: Set<Sounding>()) { $0.formUnion($1) }
        if let cut = expected.subtracting(sounding).first {
            let holder = held.first { $0.value.contains(cut) }!.key
            failure = "cut: \(cut) is silent while src \(holder.source) ch\(holder.channel + 1) key \(holder.key) is held"
        } else if let stuck = sounding.subtracting(expected).first {
            failure = "stuck: \(stuck) sounds and no held key made it"
        }
        guard failure == nil else { return }
        for (p, places) in pedals {
            for place in places where !(pedalsDown[place]?.contains(p.controller) ?? false) {
                failure = "pedal cut: cc\(p.controller) is up on \(place) while src \(p.source) ch\(p.channel + 1) holds it down"
            }
        }
    }

    // MARK: Random zone sets

    private mutating func randomZones() -> [Zone] {
        (0..<Int.random(in: 0...4, using: &rng)).map { i in
            let places: [Zone.Destination] = [.channel(0), .channel(1), .channel(2), .port("Synth A", channel: 0), .port("Synth B", channel: 3)]
            var dests: [Zone.Destination] = []
            for _ in 0..<Int.random(in: 1...2, using: &rng) {
                let d = places.randomElement(using: &rng)!
                if !dests.contains(d) { dests.append(d) }
            }
            var z = Zone(name: "Z\(i)", destinations: dests)
            let lo = UInt7(UInt8.random(in: 54...66, using: &rng))
            z.keys = lo...UInt7(UInt8.random(in: lo.value...70, using: &rng))
            z.transpose = [0, 0, 0, 1, -1, 12, -3].randomElement(using: &rng)!
            z.channels = [nil, nil, [Channel(0)], [Channel(1)]].randomElement(using: &rng)!
            z.source = [nil, nil, .id(1), .id(2)].randomElement(using: &rng)!
            z.velocities = [1...127, 1...127, 1...80, 81...127].randomElement(using: &rng)!
            switch Int.random(in: 0..<8, using: &rng) {
            case 0: z.controllers = [64: nil]
            case 1: z.controllers = [66: nil]
            case 2: z.kinds = [.notes]
            default: break
            }
            return z
        }
    }

    private func describe(_ z: Zone) -> String {
        "\(z.name) keys \(z.keys) +\(z.transpose) → \(z.destinations) ch \(z.channels.map { "\($0.map(\.value))" } ?? "any") src \(z.source.map { "\($0)" } ?? "any") vel \(z.velocities) cc \(z.controllers) kinds \(z.kinds.rawValue)"
    }
}

private struct Log: ZoneSink {
    var sent: [(MIDIMessage, RoutedDestination)] = []
    mutating func send(_ message: MIDIMessage, to destination: RoutedDestination) { sent.append((message, destination)) }
}
