import ControlDefinitions
import Controls
import Foundation
import MIDI
import MappingFiles
import Parameters
import Testing

/// The hub holds one truth: what the controls show is what the engine was told.
@Suite struct ControlHubTests {
    static let nanoKONTROL2 = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("mappings/korg-nanokontrol2.yaml").path

    /// What an engine subscriber is handed, by address.
    final class Engine: @unchecked Sendable {
        var values: [ParameterAddress: Float] = [:]
        var changes: [ParameterChange] = []
        func take(_ change: ParameterChange) { values[change.address] = change.value; changes.append(change) }
    }

    /// Before: the fader showed "-inf dB" (its range's bottom) while its strip played at 0 dB.
    @Test func nanoKONTROL2Fader_atStart_showsTheStripsGain() throws {
        let hub = ControlHub(mapping: try ControlMapping.load(path: Self.nanoKONTROL2))
        let fader = try #require(hub.controlStates.first { $0.name == "Fader 1" })
        #expect(fader.display == "+0.0 dB")
        #expect(fader.value == 0)
        #expect(fader.awaitingPickup)   // the hardware's position is unknown: soft takeover waits
        #expect(hub.value(of: .strip(.channel(0), .gain)) == 0)
        // The engine is told nothing that differs from the table: it plays at 0 dB too.
        let engine = Engine()
        hub.subscribe(engine.take)
        #expect(engine.values[.strip(.channel(0), .gain)] == nil)
    }

    @Test func mappingDefault_isPublishedToTheEngine() throws {
        let mapping = try ControlMapping.parse(yaml: """
            name: Defaults
            controls:
              - name: Level
                kind: fader
                source: { cc: 7 }
                default: -6
                targets: [strip.2.gain]
              - name: Room
                kind: knob
                source: { cc: 8 }
                targets: [synth.reverb.room-size]
            """)
        let hub = ControlHub(mapping: mapping)
        let engine = Engine()
        hub.subscribe(engine.take)
        #expect(engine.values[.strip(.channel(1), .gain)] == -6)
        #expect(hub.value(of: .strip(.channel(1), .gain)) == -6)
        #expect(hub.controlStates.first { $0.name == "Level" }?.display == "-6.0 dB")
        // No default: the knob shows the table's (FluidSynth's) 0.2 and nothing is sent.
        #expect(hub.controlStates.first { $0.name == "Room" }?.value == 0.2)
        #expect(engine.values[.reverb(.roomSize)] == nil)
    }

    @Test func startValues_overrideTheMappingAndShowOnItsControls() throws {
        let mapping = try ControlMapping.parse(yaml: """
            name: Reverb
            controls:
              - name: Reverb
                kind: knob
                source: { cc: 91 }
                default: 0.5
                targets: [synth.reverb.level]
            """)
        let hub = ControlHub(mapping: mapping, startValues: [ParameterChange(.reverb(.level), 0.3)])
        let engine = Engine()
        hub.subscribe(engine.take)
        #expect(abs(Double(engine.values[.reverb(.level)] ?? 0) - 0.3) < 1e-6)
        #expect(abs(hub.controlStates[0].value - 0.3) < 1e-6)
    }

    @Test func set_reachesSubscribersAndControlsFollow() throws {
        let hub = ControlHub(mapping: try ControlMapping.load(path: Self.nanoKONTROL2))
        let engine = Engine()
        hub.subscribe(engine.take)
        #expect(hub.set(.strip(.channel(0), .gain), to: -12))
        #expect(engine.values[.strip(.channel(0), .gain)] == -12)
        #expect(hub.controlStates.first { $0.name == "Fader 1" }?.display == "-12.0 dB")
        #expect(!hub.set(.strip(.channel(0), .gain), to: .nan))
        #expect(hub.set(.strip(.channel(0), .gain), to: 100))   // clamped to the top of the range
        #expect(engine.values[.strip(.channel(0), .gain)] == 6)
    }

    @Test func controlMessage_movesTheParameter() throws {
        let hub = ControlHub(mapping: try ControlMapping.load(path: Self.nanoKONTROL2))
        let engine = Engine()
        hub.subscribe(engine.take)
        // Knob 1 (pan) waits for pickup at the centre the strip plays at, then moves it.
        #expect(hub.receive(.cc(16, value: 127, channel: 0)))
        #expect(engine.values[.strip(.channel(0), .pan)] == nil)
        #expect(hub.receive(.cc(16, value: 64, channel: 0)))
        #expect(hub.receive(.cc(16, value: 127, channel: 0)))
        #expect(engine.values[.strip(.channel(0), .pan)] == 1)
        #expect(!hub.receive(.cc(100, value: 1, channel: 0)))      // no control: for the sampler
    }
}

/// A mapping swapped in at once (a reload of the file).
@Suite struct ControlHubReplaceTests {
    static func mapping(_ yaml: String) throws -> ControlMapping { try ControlMapping.parse(yaml: yaml) }

    static let first = """
        name: First
        controls:
          - name: Level
            kind: fader
            source: { cc: 7 }
            soft-takeover: false
            targets: [strip.1.gain]
          - name: Hold
            kind: button
            source: { cc: 64 }
            targets: [channel.1.cc.64]
        """

    @Test func sameName_keepsItsValue_andNewControlsWork() throws {
        let hub = ControlHub(mapping: try Self.mapping(Self.first))
        final class Log: @unchecked Sendable { var changes: [ParameterChange] = [] }
        let log = Log()
        hub.subscribe { log.changes.append($0) }
        #expect(hub.receive(.cc(7, value: 64, channel: 0)))
        let level = hub.value(of: .strip(.channel(0), .gain))
        hub.replace(mapping: try Self.mapping("""
            name: Second
            controls:
              - name: Level
                kind: fader
                source: { cc: 11 }
                soft-takeover: false
                targets: [strip.1.gain]
              - name: Pan
                kind: knob
                source: { cc: 10 }
                soft-takeover: false
                targets: [strip.1.pan]
            """))
        #expect(hub.mapping?.name == "Second")
        #expect(hub.value(of: .strip(.channel(0), .gain)) == level)
        #expect(abs((hub.controlStates.first { $0.name == "Level" }?.value ?? 0) - level) < 1e-9)
        #expect(!hub.receive(.cc(7, value: 100, channel: 0)))     // the old source: now for the sampler
        #expect(hub.receive(.cc(10, value: 127, channel: 0)))     // the new control drives the engine
        #expect(log.changes.last == ParameterChange(.strip(.channel(0), .pan), 1))
    }

    @Test func heldButton_goingAway_isReleased() throws {
        let hub = ControlHub(mapping: try Self.mapping(Self.first))
        final class Log: @unchecked Sendable { var changes: [ParameterChange] = [] }
        let log = Log()
        hub.subscribe { log.changes.append($0) }
        #expect(hub.receive(.cc(64, value: 127, channel: 0)))     // sustain held through the button
        #expect(log.changes.last == ParameterChange(.channelCC(0, 64), 127))
        hub.replace(mapping: try Self.mapping("name: Empty\ncontrols: []\n"))
        #expect(log.changes.last == ParameterChange(.channelCC(0, 64), 0))
        #expect(hub.value(of: .channelCC(0, 64)) == 0)
        #expect(hub.controlStates.isEmpty)
    }
}

/// One copy of the values, one observer mechanism.
@Suite struct ControlHubSharedStateTests {
    /// A surface given a store reads and writes it: no second copy to drift.
    @Test func surface_readsAndWritesTheValuesItIsGiven() {
        let values = ParameterValues()
        values[.masterGain] = -6
        let surface = ControlSurface(controls: [
            ControlDefinition(name: "Vol", kind: .fader, source: .init(.cc(7), channel: 0),
                              targets: [.init(.strip(.channel(0), .gain))], softTakeover: false)
        ], values: values)
        #expect(surface.value(of: .masterGain) == -6)
        surface.receive(cc(7, 127))
        #expect(values[.strip(.channel(0), .gain)] == 6)
    }

    /// Tokens are unique across the hub's lists: ending one subscription
    /// leaves an observer with the same place in another list alone.
    @Test func tokens_endOnlyTheirOwnSubscription() {
        let hub = ControlHub(mapping: nil)
        nonisolated(unsafe) var changes = 0, feedback = 0
        let change = hub.subscribe { _ in changes += 1 }
        let fed = hub.observeFeedback { _ in feedback += 1 }
        #expect(change != fed)
        hub.unsubscribe(fed)  // the wrong list: nothing happens
        hub.set(.masterGain, to: -3)
        #expect(changes == 1)
        hub.unsubscribe(change)
        hub.set(.masterGain, to: -4)
        #expect(changes == 1)
        _ = feedback
    }
}
