import CAllocationCounter
import MIDI
import Rig
import Testing

/// Records what the router sends.
struct Recorder: ZoneSink {
    var sent: [(MIDIMessage, RoutedDestination)] = []
    mutating func send(_ message: MIDIMessage, to destination: RoutedDestination) { sent.append((message, destination)) }
    var notes: [String] {
        sent.compactMap { m, d in
            let where_ = d == .internal ? "" : "p\(d)"
            switch m {
            case .noteOn(let n): return "on \(n.channel.intValue + 1)\(where_):\(n.note) v\(n.velocity)"
            case .noteOff(let n): return "off \(n.channel.intValue + 1)\(where_):\(n.note)"
            default: return nil
            }
        }
    }
    var ccs: [String] {
        sent.compactMap { m, d in
            guard case .controlChange(let c) = m else { return nil }
            let where_ = d == .internal ? "" : "p\(d)"
            return "cc\(c.controller)=\(c.value) \(c.channel.intValue + 1)\(where_)"
        }
    }
    mutating func clear() { sent.removeAll() }
}

/// Counts without storing: for the allocation check.
struct Counter: ZoneSink {
    var count = 0
    mutating func send(_ message: MIDIMessage, to destination: RoutedDestination) { count += 1 }
}

func zone(_ name: String, _ keys: ClosedRange<UInt7> = 0...127, to channels: Int..., transpose: Int = 0) -> Zone {
    var z = Zone(name: name, destinations: channels.map { .channel(Channel($0 - 1)) })
    z.keys = keys
    z.transpose = transpose
    return z
}

let kb: SourceID = 1

@Suite struct ZoneRouterTests {
    @Test func split_sendsEachRangeToItsChannel() {
        let r = ZoneRouter(); var out = Recorder()
        r.setZones([zone("Bass", 0...47, to: 2, transpose: 12), zone("Piano", 48...127, to: 1)], into: &out)
        #expect(r.route(.noteOn(40, velocity: 100, channel: 0), from: kb, into: &out) == .taken)
        #expect(r.route(.noteOn(60, velocity: 90, channel: 0), from: kb, into: &out) == .taken)
        #expect(out.notes == ["on 2:52 v100", "on 1:60 v90"])
    }

    @Test func layer_sendsToEveryZone() {
        let r = ZoneRouter(); var out = Recorder()
        var strings = zone("Strings", to: 3)
        strings.velocity = .linear(scale: 0.6, offset: 10)
        r.setZones([zone("Piano", to: 1), strings], into: &out)
        _ = r.route(.noteOn(60, velocity: 100, channel: 0), from: kb, into: &out)
        #expect(out.notes == ["on 1:60 v100", "on 3:60 v70"])
    }

    @Test func noteNoZoneTakes_isNotTakenAndSoIsItsNoteOff() {
        let r = ZoneRouter(); var out = Recorder()
        r.setZones([zone("Piano", 48...127, to: 1)], into: &out)
        #expect(r.route(.noteOn(30, velocity: 100, channel: 0), from: kb, into: &out) == .notTaken)
        r.setZones([zone("All", to: 1)], into: &out)
        #expect(r.route(.noteOff(30, channel: 0), from: kb, into: &out) == .notTaken)
        #expect(out.sent.isEmpty)
    }

    @Test func noteOff_followsNoteOnAcrossZoneSwap() {
        let r = ZoneRouter(); var out = Recorder()
        r.setZones([zone("Bass", to: 2, transpose: 12)], into: &out)
        _ = r.route(.noteOn(40, velocity: 100, channel: 0), from: kb, into: &out)
        r.setZones([zone("Piano", to: 1, transpose: -12)], into: &out)   // scene switch while the key is down
        out.clear()
        #expect(r.route(.noteOff(40, channel: 0), from: kb, into: &out) == .taken)
        #expect(out.notes == ["off 2:52"])
        #expect(r.heldNotes == 0)
    }

    @Test func noteOnVelocityZero_isANoteOff() {
        let r = ZoneRouter(); var out = Recorder()
        r.setZones([zone("T", to: 1, transpose: 5)], into: &out)
        _ = r.route(.noteOn(60, velocity: 100, channel: 0), from: kb, into: &out)
        _ = r.route(.noteOn(60, velocity: 0, channel: 0), from: kb, into: &out)
        #expect(out.notes == ["on 1:65 v100", "off 1:65"])
    }

    @Test func sameKeySameChannelFromTwoZones_soundsOnceAndEndsWithLastHolder() {
        let r = ZoneRouter(); var out = Recorder()
        // Zone A: C4 as is; zone B: B3 up a semitone: both put 60 on channel 1.
        r.setZones([zone("A", 60...60, to: 1), zone("B", 59...59, to: 1, transpose: 1)], into: &out)
        _ = r.route(.noteOn(60, velocity: 100, channel: 0), from: kb, into: &out)
        _ = r.route(.noteOn(59, velocity: 80, channel: 0), from: kb, into: &out)
        #expect(out.notes == ["on 1:60 v100"])
        #expect(r.stats.doubledNotes == 1)
        _ = r.route(.noteOff(60, channel: 0), from: kb, into: &out)
        #expect(out.notes == ["on 1:60 v100"])  // B still holds it: no cut
        _ = r.route(.noteOff(59, channel: 0), from: kb, into: &out)
        #expect(out.notes == ["on 1:60 v100", "off 1:60"])
    }

    @Test func transposeOutOfRange_dropsNoteAndItsNoteOff() {
        let r = ZoneRouter(); var out = Recorder()
        r.setZones([zone("Up", to: 1, transpose: 24)], into: &out)
        #expect(r.route(.noteOn(120, velocity: 100, channel: 0), from: kb, into: &out) == .taken)
        #expect(r.route(.noteOff(120, channel: 0), from: kb, into: &out) == .taken)
        #expect(out.sent.isEmpty)
        #expect(r.stats.droppedNotes == 1)
    }

    @Test func sustain_reachesChannelsHoldingNotesFromOldZones() {
        let r = ZoneRouter(); var out = Recorder()
        r.setZones([zone("Piano", to: 1)], into: &out)
        _ = r.route(.noteOn(60, velocity: 100, channel: 0), from: kb, into: &out)
        r.setZones([zone("Strings", to: 3)], into: &out)
        out.clear()
        _ = r.route(.cc(64, value: 127, channel: 0), from: kb, into: &out)
        #expect(Set(out.ccs) == ["cc64=127 3", "cc64=127 1"])
        _ = r.route(.noteOff(60, channel: 0), from: kb, into: &out)
        r.setZones([zone("Bass", to: 2)], into: &out)
        out.clear()
        _ = r.route(.cc(64, value: 0, channel: 0), from: kb, into: &out)
        // Pedal up reaches the bass zone and every channel the pedal went down on.
        #expect(Set(out.ccs) == ["cc64=0 2", "cc64=0 1", "cc64=0 3"])
    }

    @Test func sostenuto_followsHeldNotes() {
        let r = ZoneRouter(); var out = Recorder()
        r.setZones([zone("Piano", to: 1)], into: &out)
        _ = r.route(.noteOn(60, velocity: 100, channel: 0), from: kb, into: &out)
        var other = zone("Other", to: 4); other.kinds = [.notes]
        r.setZones([other], into: &out)
        out.clear()
        _ = r.route(.cc(66, value: 127, channel: 0), from: kb, into: &out)
        #expect(out.ccs == ["cc66=127 1"])
    }

    @Test func allNotesOff_reachesEveryDestinationAndPort() {
        let r = ZoneRouter(); var out = Recorder()
        var synth = Zone(name: "Synth", destinations: [.port("Hardware Synth", channel: 0)])
        synth.keys = 72...127
        r.setZones([zone("Piano", to: 1), zone("Strings", to: 3), synth], into: &out)
        _ = r.route(.cc(123, value: 0, channel: 0), from: kb, into: &out)
        #expect(Set(out.ccs) == ["cc123=0 1", "cc123=0 3", "cc123=0 1pport(0)"])
        #expect(r.portName(0) == "Hardware Synth")
        out.clear()
        _ = r.route(.cc(120, value: 0, channel: 0), from: kb, into: &out)
        #expect(out.ccs.count == 3)
    }

    @Test func releaseAll_endsASourcesNotesOnEveryDestination() {
        let r = ZoneRouter(); var out = Recorder()
        let synth = Zone(name: "Synth", destinations: [.port("Hardware Synth", channel: 0), .channel(1)])
        r.setZones([synth], into: &out)
        _ = r.route(.noteOn(60, velocity: 100, channel: 0), from: kb, into: &out)
        _ = r.route(.noteOn(64, velocity: 100, channel: 0), from: kb, into: &out)
        _ = r.route(.noteOn(67, velocity: 100, channel: 0), from: 2, into: &out)
        out.clear()
        r.releaseAll(source: kb, into: &out)
        #expect(Set(out.notes) == ["off 1pport(0):60", "off 2:60", "off 1pport(0):64", "off 2:64"])
        #expect(r.heldNotes == 1)
    }

    @Test func zonesBySourceName_takeOnlyThatSource() {
        let r = ZoneRouter(); var out = Recorder()
        var upper = zone("Upper", to: 1); upper.source = .name("Upper Manual")
        var lower = zone("Lower", to: 2); lower.source = .id(7)
        r.setZones([upper, lower], into: &out)
        #expect(r.route(.noteOn(60, velocity: 1, channel: 0), from: 3, into: &out) == .notTaken)
        r.registerSource(3, name: "Upper Manual")
        _ = r.route(.noteOn(61, velocity: 1, channel: 0), from: 3, into: &out)
        _ = r.route(.noteOn(62, velocity: 1, channel: 0), from: 7, into: &out)
        #expect(out.notes == ["on 1:61 v1", "on 2:62 v1"])
    }

    /// A source named in a zone matches as `--connect` does: within ALSA's `client:port`
    /// name, letter case aside; another port of the same client with another name does not.
    @Test func zonesBySourceName_matchWithinTheClientPortName() {
        let r = ZoneRouter(); var out = Recorder()
        var upper = zone("Upper", to: 1); upper.source = .name("upper manual")
        r.setZones([upper], into: &out)
        r.registerSource(3, name: "Organ Console:Upper Manual MIDI 1")
        r.registerSource(4, name: "Organ Console:Lower Manual MIDI 1")
        _ = r.route(.noteOn(61, velocity: 1, channel: 0), from: 3, into: &out)
        #expect(r.route(.noteOn(62, velocity: 1, channel: 0), from: 4, into: &out) == .notTaken)
        #expect(out.notes == ["on 1:61 v1"])
        // A zone set installed after the sources connected resolves them too.
        var lower = zone("Lower", to: 2); lower.source = .name("LOWER")
        r.setZones([lower], into: &out)
        out.clear()
        _ = r.route(.noteOn(63, velocity: 1, channel: 0), from: 4, into: &out)
        #expect(out.notes == ["on 2:63 v1"])
    }

    @Test func matchByChannelVelocityAndKind() {
        let r = ZoneRouter(); var out = Recorder()
        var soft = zone("Soft", to: 1); soft.velocities = 1...63; soft.channels = [1]
        var notesOnly = zone("NotesOnly", to: 2); notesOnly.kinds = [.notes]
        r.setZones([soft, notesOnly], into: &out)
        _ = r.route(.noteOn(60, velocity: 100, channel: 1), from: kb, into: &out)
        _ = r.route(.noteOn(61, velocity: 30, channel: 1), from: kb, into: &out)
        _ = r.route(.noteOn(62, velocity: 30, channel: 0), from: kb, into: &out)
        #expect(out.notes == ["on 2:60 v100", "on 1:61 v30", "on 2:61 v30", "on 2:62 v30"])
        out.clear()
        #expect(r.route(.pitchBend(100, channel: 0), from: kb, into: &out) == .notTaken)
        #expect(r.route(.pitchBend(100, channel: 1), from: kb, into: &out) == .taken)
        #expect(out.sent.count == 1)
    }

    @Test func controllers_renumberedOrDropped() {
        let r = ZoneRouter(); var out = Recorder()
        var z = zone("Z", to: 1); z.controllers = [1: 11, 7: nil]
        r.setZones([z], into: &out)
        _ = r.route(.cc(1, value: 50, channel: 0), from: kb, into: &out)
        _ = r.route(.cc(7, value: 50, channel: 0), from: kb, into: &out)
        _ = r.route(.cc(10, value: 50, channel: 0), from: kb, into: &out)
        #expect(out.ccs == ["cc11=50 1", "cc10=50 1"])
    }

    @Test func velocityShapes_fixedAndCurve() {
        #expect(VelocityShape.fixed(90).table[5] == 90)
        #expect(VelocityShape.linear(scale: 0.6, offset: 10).table[100] == 70)
        #expect(VelocityShape.linear(scale: 0, offset: -5).table[100] == 1)  // never a note-off
        let square = VelocityCurve(name: "square", shape: { $0 * $0 })
        #expect(square.table[1] == 1 && square.table[127] == 127 && square.table[64] == 33)  // 1 + 126 · (63/126)² = 32.5, rounded
    }

    /// Transposed with no zone set ever installed: the notes go to their own channel
    /// through the ledger, and pedals and All Notes Off follow them there.
    @Test func transposeWithoutZones_pedalsAndAllNotesOffFollowTheNotes() {
        let r = ZoneRouter(); var out = Recorder()
        r.transpose = 2
        #expect(r.route(.noteOn(60, velocity: 100, channel: 0), from: kb, into: &out) == .taken)
        #expect(r.route(.cc(64, value: 127, channel: 0), from: kb, into: &out) == .taken)
        _ = r.route(.cc(123, value: 0, channel: 0), from: kb, into: &out)
        // Another keyboard's same key, on the same note, sounds: All Notes Off ended the first.
        #expect(r.route(.noteOn(60, velocity: 90, channel: 0), from: 2, into: &out) == .taken)
        #expect(out.notes == ["on 1:62 v100", "on 1:62 v90"])
        #expect(out.ccs == ["cc64=127 1", "cc123=0 1"])
    }

    @Test func install_sendsBendRangeAsRPN0() {
        let r = ZoneRouter(); var out = Recorder()
        var z = zone("Z", to: 2); z.bendRange = .init(semitones: 12)
        r.setZones([z], into: &out)
        #expect(out.ccs == ["cc101=0 2", "cc100=0 2", "cc6=12 2", "cc38=0 2", "cc101=127 2", "cc100=127 2"])
    }

    @Test func route_allocatesNothing() {
        let r = ZoneRouter(); var setup = Recorder()
        var zones = (0..<8).map { zone("Z\($0)", UInt7($0 * 16)...UInt7($0 * 16 + 15), to: $0 + 1, transpose: $0 - 4) }
        zones[0].destinations.append(.port("Hardware Synth", channel: 0))
        let second = ZoneSet(zones.reversed())
        r.setZones(zones, into: &setup)
        var sink = Counter()
        // Each operation once on another router first: the Swift runtime makes a type's
        // metadata on the heap the first time it is used (once per process, as the
        // render thread's tests warm up), which is not the router's steady state.
        do {
            let warm = ZoneRouter(); var w = Counter()
            warm.setZones(zones, into: &w)
            _ = warm.route(.noteOn(60, velocity: 100, channel: 0), from: kb, into: &w)
            _ = warm.route(.cc(64, value: 127, channel: 0), from: kb, into: &w)
            warm.install(ZoneSet(zones.reversed()), into: &w)
            _ = warm.route(.cc(123, value: 0, channel: 0), from: kb, into: &w)
            _ = warm.route(.pitchBend(9000, channel: 0), from: kb, into: &w)
            _ = warm.route(.noteOff(60, channel: 0), from: kb, into: &w)
            warm.releaseAll(source: kb, into: &w)
        }
        // Phase by phase, so a failure names the operation that allocated.
        var counts: [String: Int64] = [:]
        func measure(_ name: String, _ body: () -> Void) {
            carillon_allocations_arm()
            body()
            counts[name] = carillon_allocations_disarm()
        }
        measure("note-on") { for key in 0..<128 { _ = r.route(.noteOn(UInt7(key), velocity: 100, channel: 0), from: kb, into: &sink) } }
        measure("sustain") { _ = r.route(.cc(64, value: 127, channel: 0), from: kb, into: &sink) }
        // The set it replaces comes back to be let go of off the input thread (here: after the count).
        var replaced: ZoneSet?
        measure("install") { replaced = r.install(second, into: &sink) }
        #expect(replaced != nil)
        measure("bend") { _ = r.route(.pitchBend(9000, channel: 0), from: kb, into: &sink) }
        measure("note-off") { for key in 0..<64 { _ = r.route(.noteOff(UInt7(key), channel: 0), from: kb, into: &sink) } }
        measure("release") { r.releaseAll(source: kb, into: &sink) }
        measure("note-on again") { for key in 0..<128 { _ = r.route(.noteOn(UInt7(key), velocity: 100, channel: 0), from: kb, into: &sink) } }
        measure("mode") { _ = r.route(.cc(123, value: 0, channel: 0), from: kb, into: &sink) }
        let beforeOffs = sink.count
        measure("note-off after mode") { for key in 0..<128 { _ = r.route(.noteOff(UInt7(key), channel: 0), from: kb, into: &sink) } }
        #expect(sink.count == beforeOffs)  // All Notes Off ended them: their note-offs go nowhere
        #expect(counts.values.allSatisfy { $0 == 0 }, "\(counts.sorted { $0.key < $1.key })")
        // 435: 128 note-ons twice, 128 note-offs, the pedal down and (on release) up, bend and mode to every slot.
        #expect(sink.count > 400, "\(sink.count)")
        #expect(r.heldNotes == 0)
    }
}
