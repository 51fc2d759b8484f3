import Controls
import MIDI
import MappingFiles
import Parameters
import Testing

/// Switching scenes on the hub: every value goes out in order, by a selector
/// control or by name; notes are left alone.
@Suite struct SceneSwitchTests {
    static let yaml = """
        controls:
          - name: Scene
            kind: selector
            source: { note: 60, channel: 16 }   # a pad: each press steps to the next scene
            values: [0, 1]
            targets: [scene.select]
          - name: Level
            kind: fader
            source: { cc: 7 }
            targets: [strip.1.gain]
        scenes:
          - name: Piano
            channels: { 1: { bank: 0, program: 0 } }
            set: { synth.reverb.level: 0.3 }
          - name: Organ
            channels:
              1: { bank: 8, program: 19 }
              10: { bank: 128, program: 25 }
            set: { synth.reverb.level: 0.8, synth.chorus.enabled: 0 }
            controls: { Level: -12 }
        """

    final class Engine: @unchecked Sendable {
        var changes: [ParameterChange] = []
    }

    @Test func selectScene_byName_publishesBankThenProgramThenValuesThenControls() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.yaml))
        let engine = Engine()
        hub.subscribe { engine.changes.append($0) }
        #expect(hub.sceneNames == ["Piano", "Organ"])
        #expect(hub.currentScene == nil)
        #expect(hub.selectScene(named: "Organ"))
        #expect(engine.changes == [
            ParameterChange(.channelCC(Channel(0), UInt7(0)), 8),
            ParameterChange(.channelProgram(Channel(0)), 19),
            ParameterChange(.channelProgram(Channel(9)), 25),   // bank 128 on channel 10: no bank select
            ParameterChange(.reverb(.level), 0.8),
            ParameterChange(.chorus(.enabled), 0),
            ParameterChange(.strip(.channel(0), .gain), -12),
        ])
        #expect(hub.currentScene == "Organ")
        #expect(hub.controlStates.first { $0.name == "Level" }?.value == -12)
        #expect(hub.controlStates.first { $0.name == "Scene" }?.value == 1)   // the selector follows
        #expect(!hub.selectScene(named: "Harp"))
    }

    @Test func selectorControl_pressSteps_switchesScenes_andNotesPassThrough() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.yaml))
        let engine = Engine()
        hub.subscribe { engine.changes.append($0) }
        // A note held on channel 1 is not a control's: the sampler gets it, before and after.
        #expect(!hub.receive(.noteOn(UInt7(64), velocity: UInt7(90), channel: Channel(0))))
        #expect(hub.receive(.noteOn(UInt7(60), velocity: UInt7(100), channel: Channel(15))))
        #expect(hub.currentScene == "Organ")
        #expect(engine.changes.contains(ParameterChange(.channelProgram(Channel(0)), 19)))
        #expect(!hub.receive(.noteOff(UInt7(64), channel: Channel(0))))   // its note-off reaches the sampler
        engine.changes.removeAll()
        _ = hub.receive(.noteOff(UInt7(60), channel: Channel(15)))
        #expect(engine.changes.isEmpty)   // releasing the pad does not switch
        _ = hub.receive(.noteOn(UInt7(60), velocity: UInt7(100), channel: Channel(15)))
        #expect(hub.currentScene == "Piano")
        #expect(engine.changes.contains(ParameterChange(.reverb(.level), 0.3)))
    }

    @Test func setSceneSelect_fromAUI_switches_andAReloadForgetsTheScene() throws {
        let mapping = try ControlMapping.parse(yaml: Self.yaml)
        let hub = ControlHub(mapping: mapping)
        hub.set(.sceneSelect, to: 1)
        #expect(hub.currentScene == "Organ")
        #expect(hub.value(of: .reverb(.level)) == 0.8)
        hub.set(.sceneSelect, to: 7)   // no such scene: nothing
        #expect(hub.value(of: .reverb(.level)) == 0.8)
        hub.replace(mapping: mapping)
        #expect(hub.currentScene == nil)
    }

    /// After a reload no scene is current, though `scene.select` still holds the
    /// old place: the keyboard's program change for that scene selects it again
    /// (once; a repeat of it is no switch, as before the reload).
    @Test func programChange_selectsTheSceneThatWasCurrent_afterAReload() throws {
        let mapping = try ControlMapping.parse(yaml: """
            controls:
              - { name: Patch, kind: selector, source: { program-change: true, channel: 1 }, targets: [scene.select] }
            scenes:
              - { name: Piano, set: { synth.reverb.level: 0.3 } }
              - { name: Organ, set: { synth.reverb.level: 0.8 } }
            """)
        let hub = ControlHub(mapping: mapping)
        let engine = Engine()
        hub.subscribe { engine.changes.append($0) }
        let organ = MIDIMessage.programChange(UInt7(1), channel: Channel(0))
        _ = hub.receive(organ)
        #expect(hub.currentScene == "Organ")
        hub.replace(mapping: mapping)
        #expect(hub.currentScene == nil)
        hub.set(.reverb(.level), to: 0.5)
        engine.changes.removeAll()
        _ = hub.receive(organ)
        #expect(hub.currentScene == "Organ")
        #expect(engine.changes.contains(ParameterChange(.reverb(.level), 0.8)), "\(engine.changes)")
        hub.set(.reverb(.level), to: 0.5)
        engine.changes.removeAll()
        _ = hub.receive(organ)
        #expect(!engine.changes.contains(ParameterChange(.reverb(.level), 0.8)), "a repeat switched again: \(engine.changes)")
        // Picked on the page after a reload, the scene is current: its program change is a repeat.
        hub.replace(mapping: mapping)
        #expect(hub.selectScene(named: "Organ"))
        hub.set(.reverb(.level), to: 0.5)
        engine.changes.removeAll()
        _ = hub.receive(organ)
        #expect(!engine.changes.contains(ParameterChange(.reverb(.level), 0.8)), "switched again: \(engine.changes)")
    }
}

/// A reloaded mapping's `channels:` presets are selected as a scene selects
/// them; what needs a restart (another font or instrument) is said, not done.
@Suite struct ReloadChannelsTests {
    @Test func replace_selectsChangedPresets_andNamesWhatNeedsARestart() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: """
            channels:
              1: { bank: 0, program: 0 }
              2: { soundfont: a.sf2, program: 3 }
              3: { program: 5 }
            controls: []
            """))
        var changes: [ParameterChange] = []
        hub.subscribe { changes.append($0) }
        changes.removeAll()
        let notes = hub.replace(mapping: try ControlMapping.parse(yaml: """
            channels:
              1: { bank: 8, program: 19 }
              2: { soundfont: b.sf2, program: 3 }
              3: { program: 5 }
              10: { bank: 128, program: 25 }
            controls: []
            """))
        #expect(changes == [
            ParameterChange(.channelCC(Channel(0), UInt7(0)), 8),
            ParameterChange(.channelProgram(Channel(0)), 19),
            ParameterChange(.channelProgram(Channel(9)), 25),   // unchanged channel 3: nothing
        ])
        #expect(notes == ["channel 2: a new soundfont or instrument takes effect at the next start"])
    }
}
