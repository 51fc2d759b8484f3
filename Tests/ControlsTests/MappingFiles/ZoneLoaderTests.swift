import Controls
import MIDI
import MappingFiles
import Rig
import Testing

/// `zones:` in a mapping file (top level and scenes): read as the rig's data, every mistake at its place.
@Suite struct ZoneLoaderTests {
    @Test func stagePiano_loadsAndMeansWhatItsCommentsSay() throws {
        let mapping = try ControlMapping.load(path: mappingsFolder.appendingPathComponent("stage-piano.yaml").path)
        #expect(mapping.zones.map(\.name) == ["Bass", "Piano", "Strings", "Synth"])
        let bass = mapping.zones[0], piano = mapping.zones[1], strings = mapping.zones[2], synth = mapping.zones[3]
        #expect(bass.keys == 0...47 && bass.destinations == [.channel(Channel(1))] && bass.transpose == 12)
        #expect(piano.keys == 48...127 && piano.destinations == [.channel(Channel(0))] && piano.velocity == .unchanged)
        #expect(strings.destinations == [.channel(Channel(2))] && strings.velocity == .linear(scale: 0.6, offset: 10))
        #expect(synth.keys == 72...127 && synth.destinations == [.port("Hardware Synth", channel: Channel(0))])
        // The scenes: "Split" keeps the top level's zones, "Piano only" has its own.
        #expect(mapping.zones(inScene: 0) == mapping.zones)
        #expect(mapping.zones(inScene: 1).map(\.name) == ["Piano"])
        #expect(mapping.zones(inScene: 1)[0].keys == 0...127)
        #expect(mapping.zones(inScene: nil) == mapping.zones)
    }

    @Test func stagePiano_routesAsDescribed() throws {
        let mapping = try ControlMapping.load(path: mappingsFolder.appendingPathComponent("stage-piano.yaml").path)
        struct Out: ZoneSink {
            var sent: [String] = []
            mutating func send(_ m: MIDIMessage, to d: RoutedDestination) {
                if case .noteOn(let n) = m { sent.append("\(d == .internal ? "ch" : "port")\(n.channel.intValue + 1):\(n.note):\(n.velocity)") }
            }
        }
        let router = ZoneRouter(); var out = Out()
        router.setZones(mapping.zones, into: &out)
        _ = router.route(.noteOn(40, velocity: 100, channel: 0), from: 1, into: &out)  // E2: bass, an octave up
        _ = router.route(.noteOn(60, velocity: 100, channel: 0), from: 1, into: &out)  // C4: piano + strings
        _ = router.route(.noteOn(84, velocity: 100, channel: 0), from: 1, into: &out)  // C6: + the synth
        #expect(out.sent == ["ch2:52:100", "ch1:60:100", "ch3:60:70", "ch1:84:100", "ch3:84:70", "port1:84:100"])
    }

    @Test func zones_everyKey_readsIntoTheModel() throws {
        let mapping = try ControlMapping.parse(yaml: """
            zones:
              - name: Lead
                source: Upper Manual
                channels: [1, 2]
                keys: Db4..c#6
                velocities: 20..127
                messages: [notes, pitch-bend]
                to: [4, { port: Synth, channel: 10 }]
                transpose: -2
                octaves: 1
                velocity: { curve: exponential, shape: 4 }
                cc: { 1: 11, 7: drop }
                bend-range: { semitones: 12, cents: 50 }
                midi-fx: ["urn:example:arp"]
            """)
        let z = try #require(mapping.zones.first)
        #expect(z.source == .name("Upper Manual"))
        #expect(z.channels == [Channel(0), Channel(1)])
        #expect(z.keys == 61...85)
        #expect(z.velocities == 20...127)
        #expect(z.kinds == [.notes, .pitchBend])
        #expect(z.destinations == [.channel(Channel(3)), .port("Synth", channel: Channel(9))])
        #expect(z.transpose == 10)
        let controllers: [UInt7: UInt7?] = [1: 11, 7: nil]   // 7 kept, with no number: dropped
        #expect(z.controllers == controllers)
        #expect(z.bendRange == Zone.BendRange(semitones: 12, cents: 50))
        #expect(z.midiFX == ["urn:example:arp"])
        guard case .curve(let c) = z.velocity else { Issue.record("not a curve"); return }
        #expect(c.name == "exponential 4")
        #expect(c.table[1] == 1 && c.table[127] == 127 && c.table[64] < 30)  // slow start: the same shape as a control's
    }

    @Test func zones_mistakes_allReportedWithLineAndColumn() {
        let yaml = """
            zones:
              - { name: A, keys: C3..C2, to: 1 }
              - { name: B, keys: 0..130, to: 17 }
              - { name: C, keys: H4..C5, to: [] }
              - { name: D, keyz: C4, to: 1, velocity: { curve: wobbly } }
              - { name: E, to: { port: X }, velocity: { scale: 2, fixed: 3 } }
              - { name: F }
            scenes:
              - name: S
                zones:
                  - { name: G, keys: C4, to: 0 }
            """
        #expect(diagnostics(yaml) == [
            "m.yaml:2:22: error: key range is backwards: C3 (48) is above C2 (36)",
            "m.yaml:3:22: error: key 130 is out of range 0...127",
            "m.yaml:3:34: error: channel 17 is out of range 1...16",
            "m.yaml:4:22: error: unknown note 'H4' (a number 0...127, or a name from C-1 to G9 with middle C = C4 = 60, e.g. C#4, Db4)",
            "m.yaml:4:34: error: 'to:' is empty; give a channel 1...16, a port { port: NAME, channel: N }, or a list of them",
            "m.yaml:5:16: error: unknown key 'keyz' in a zone; did you mean 'keys'?",
            "m.yaml:5:52: error: unknown curve 'wobbly' (one of linear, exponential, logarithmic, s-curve, table)",
            "m.yaml:6:20: error: missing key 'channel' in a port destination",
            "m.yaml:6:55: error: a velocity shape is one of: fixed, scale + offset, or a curve",
            "m.yaml:7:5: error: zone 'F' has no 'to:' (a channel 1...16, a port { port: NAME, channel: N }, or a list of them)",
            "m.yaml:11:34: error: channel 0 is out of range 1...16",
        ])
    }
}
