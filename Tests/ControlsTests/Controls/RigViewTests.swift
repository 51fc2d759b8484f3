import Controls
import MIDI
import MappingFiles
import Parameters
import Rig
import Testing

/// What the web page and `live`'s view show of the rig: the current scene and
/// its zones in short (`ZoneSummary`), following the hub's switches and reloads.
@Suite struct RigViewTests {
    static func stagePiano() throws -> ControlMapping {
        try ControlMapping.load(path: mappingsFolder.appendingPathComponent("stage-piano.yaml").path)
    }

    @Test func stagePiano_zonesInShort_layersStacked() throws {
        let zones = ZoneSummary.list(try Self.stagePiano().zones)
        #expect(zones.map(\.line) == [
            "Bass C-1..B2 → ch 2 +12",
            "Piano C3..G9 → ch 1",
            "Strings C3..G9 → ch 3 vel ×0.6+10",
            "Synth C5..G9 → Hardware Synth ch 1",
        ])
        // The split shares a row; the strings layer over the piano, the synth over both.
        #expect(zones.map(\.row) == [0, 0, 1, 2])
        #expect(zones.map(\.low) == [0, 48, 48, 72])
        #expect(zones.map(\.high) == [47, 127, 127, 127])
        #expect(zones[3].destinations == [ZoneSummary.Destination(port: "Hardware Synth", channel: 1)])
        #expect(zones[0].spoken == "Bass: keys C-1 to B2, to channel 2, transposed +12 semitones")
        #expect(zones[3].spoken == "Synth: keys C5 to G9, to port Hardware Synth channel 1")
    }

    @Test func everyFeature_saidInShort() throws {
        let mapping = try ControlMapping.parse(yaml: """
            zones:
              - { name: Soft, velocities: 1..79, to: [5, 6] }
              - { name: Hard, velocities: 80..127, to: 6, velocity: 127 }
              - { name: Heavy, keys: C6..G9, to: 7, velocity: { curve: exponential, shape: 4 } }
              - { name: Low, keys: C4, to: 4, octaves: -1 }
              - { name: Upper, source: "Upper Manual", channels: [2, 3], to: 8, messages: [notes, cc] }
              - { name: Quiet, keys: 0..11, to: 9, velocity: { scale: 0.5 } }
            """)
        let zones = ZoneSummary.list(mapping.zones)
        #expect(zones.map(\.line) == [
            "Soft C-1..G9 vel 1..79 → ch 5 + ch 6",
            "Hard C-1..G9 vel 80..127 → ch 6 vel =127",
            "Heavy C6..G9 → ch 7 vel exponential 4",
            "Low C4 → ch 4 -12",
            "Upper C-1..G9 from Upper Manual in ch 2,3 notes,cc only → ch 8",
            "Quiet C-1..B-1 → ch 9 vel ×0.5",
        ])
        // Low and Quiet fit in the row Heavy leaves free below C6; the others take every key.
        #expect(zones.map(\.row) == [0, 1, 2, 2, 3, 2])
        #expect(zones[0].takes == "vel 1..79" && zones[2].takes.isEmpty)
    }

    @Test func hub_followsScenesAndReloads() throws {
        let hub = ControlHub(mapping: try Self.stagePiano())
        let start = hub.rigState
        #expect(start.scene == nil)
        #expect(hub.rigView.sceneNames == ["Split", "Piano only"])
        #expect(hub.rigView.sceneName == nil)
        #expect(hub.rigView.zones.map(\.name) == ["Bass", "Piano", "Strings", "Synth"])
        // A program change on the selector's channel picks "Piano only": its own zones.
        #expect(hub.receive(.programChange(1, channel: Channel(15))))
        #expect(hub.rigState == RigState(generation: start.generation, scene: 1))
        let pianoOnly = hub.rigView
        #expect(pianoOnly.sceneName == "Piano only")
        #expect(pianoOnly.zones.map(\.line) == ["Piano C-1..G9 → ch 1 vel s-curve 2"])
        // "Split" keeps the top level's.
        #expect(hub.selectScene(named: "Split"))
        #expect(hub.rigView.zones.map(\.name) == ["Bass", "Piano", "Strings", "Synth"])
        // A reload: a new generation, no scene current, the new file's zones.
        var edited = try Self.stagePiano()
        edited.zones.removeLast()
        hub.replace(mapping: edited)
        #expect(hub.rigState == RigState(generation: start.generation + 1, scene: nil))
        #expect(hub.rigView.zones.map(\.name) == ["Bass", "Piano", "Strings"])
    }

    @Test func noMapping_nothingToShow() {
        let view = ControlHub(mapping: nil).rigView
        #expect(view.isEmpty && view.sceneName == nil)
    }
}
