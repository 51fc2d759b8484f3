import MIDI
import Rig
import Testing

/// A zone with `midi-fx`: its messages, matched and changed by the zone, go
/// to its effect chain (`RoutedDestination.effect`) on its first channel; the
/// ledger keeps the chain a held note went to.
@Suite struct ZoneEffectRoutingTests {
    func fx(_ name: String, _ keys: ClosedRange<UInt7> = 0...127, to channels: Int..., transpose: Int = 0) -> Zone {
        var z = Zone(name: name, destinations: channels.map { .channel(Channel($0 - 1)) })
        z.keys = keys
        z.transpose = transpose
        z.midiFX = ["urn:example:fx"]
        return z
    }

    @Test func zoneWithEffect_sendsItsChangedMessagesToTheChainOnItsFirstChannel() {
        let r = ZoneRouter(); var out = Recorder()
        r.install(ZoneSet([fx("Chords", 0...59, to: 3, 5, transpose: 2), zone("Piano", 60...127, to: 1)], effects: [7, nil]), into: &out)
        _ = r.route(.noteOn(48, velocity: 100, channel: 0), from: kb, into: &out)
        _ = r.route(.noteOn(72, velocity: 90, channel: 0), from: kb, into: &out)
        #expect(out.sent.map(\.1) == [.effect(7), .internal])
        #expect(out.notes == ["on 3p\(RoutedDestination.effect(7)):50 v100", "on 1:72 v90"])
        #expect(r.heldNotes(inEffect: 7) == 1 && r.heldNotes(inEffect: 0) == 0)
    }

    @Test func noteOff_reachesTheChainItsNoteOnWentTo_afterAnotherSetCameIn() {
        let r = ZoneRouter(); var out = Recorder()
        r.install(ZoneSet([fx("A", to: 2)], effects: [0]), into: &out)
        _ = r.route(.noteOn(60, velocity: 100, channel: 0), from: kb, into: &out)
        let old = r.install(ZoneSet([fx("B", to: 2)], effects: [1]), into: &out)
        #expect(old.effectChains == [0] && r.current.effectChains == [1])
        out.clear()
        _ = r.route(.noteOff(60, channel: 0), from: kb, into: &out)
        #expect(out.sent.map(\.1) == [.effect(0)])
        #expect(r.heldNotes(inEffect: 0) == 0)
    }

    /// A disconnect ends a chain's notes with note-offs; All Notes Off reaches the
    /// chain (which ends what it holds itself) and the ledger forgets them, so a
    /// disconnect after it sends the chain nothing more.
    @Test func modeMessages_reachChainsHoldingNotes_andReleaseAllEndsTheirNotes() {
        let r = ZoneRouter(); var out = Recorder()
        r.install(ZoneSet([fx("A", to: 2)], effects: [3]), into: &out)
        _ = r.route(.noteOn(60, velocity: 100, channel: 0), from: kb, into: &out)
        r.install(ZoneSet([zone("Plain", to: 4)]), into: &out)
        out.clear()
        r.releaseAll(source: kb, into: &out)
        #expect(out.notes == ["off 2p\(RoutedDestination.effect(3)):60"])
        #expect(r.heldNotes(inEffect: 3) == 0 && r.heldNotes == 0)

        r.install(ZoneSet([fx("A", to: 2)], effects: [3]), into: &out)
        _ = r.route(.noteOn(61, velocity: 100, channel: 0), from: kb, into: &out)
        r.install(ZoneSet([zone("Plain", to: 4)]), into: &out)
        out.clear()
        _ = r.route(.cc(123, value: 0, channel: 0), from: kb, into: &out)
        #expect(out.sent.contains { $0.1 == .effect(3) })
        #expect(r.heldNotes(inEffect: 3) == 0 && r.heldNotes == 1)
        out.clear()
        r.releaseAll(source: kb, into: &out)
        #expect(out.notes.isEmpty && r.heldNotes == 0)
    }

    @Test func effectNumberBeyondTheTables_isDropped() {
        let r = ZoneRouter(); var out = Recorder()
        r.install(ZoneSet([fx("A", to: 2)], effects: [ZoneRouter.maxEffects]), into: &out)
        _ = r.route(.noteOn(60, velocity: 100, channel: 0), from: kb, into: &out)
        #expect(out.sent.isEmpty && r.stats.droppedDestinations == 1)
    }
}
