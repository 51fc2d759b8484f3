import ControlDefinitions
import Controls
import MappingFiles
import MIDI
import Parameters
import Testing

/// A selector on `scene.select` reaches every scene: step N is scene N
/// whatever its `steps:`, and `mapping check` says where steps or values
/// point at no scene or miss one.
@Suite struct SceneReachTests {
    final class Engine: @unchecked Sendable { var changes: [ParameterChange] = [] }

    static func rig(_ control: String, scenes: Int = 2) -> String {
        """
        controls:
          - name: Patch
            kind: selector
            source: \(control)
            targets: [scene.select]
        scenes:
        \((0..<scenes).map { "  - { name: S\($0), set: { synth.reverb.level: 0.\($0 + 1) } }" }.joined(separator: "\n"))
        """
    }

    static func errors(_ yaml: String) -> [String] {
        do { _ = try ControlMapping.parse(yaml: yaml, file: "m.yaml"); return [] } catch { return error.diagnostics.map(\.description) }
    }

    /// Before: `steps: 2` put program 1 on scene.select 127; no scene, nothing happened.
    @Test func programChange_withSteps_picksSceneN() throws {
        let mapping = try ControlMapping.parse(yaml: Self.rig("{ program-change: true, channel: 16 }\n    steps: 2"))
        let hub = ControlHub(mapping: mapping)
        _ = hub.receive(.programChange(UInt7(1), channel: Channel(15)))
        #expect(hub.currentScene == "S1")
        #expect(hub.value(of: .sceneSelect) == 1)
        _ = hub.receive(.programChange(UInt7(0), channel: Channel(15)))
        #expect(hub.currentScene == "S0")
    }

    @Test func ccBands_withSteps_pickSceneN() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.rig("{ cc: 20 }\n    steps: 3", scenes: 3)))
        for (value, scene) in [(127, "S2"), (0, "S0"), (64, "S1")] {
            _ = hub.receive(.cc(UInt7(20), value: UInt7(value), channel: Channel(0)))
            #expect(hub.currentScene == scene, "cc \(value)")
        }
    }

    /// A pad on a selector steps on, round the file's scenes (not round 128 places).
    @Test func pad_stepsRoundTheScenes() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.rig("{ note: 36 }", scenes: 3)))
        var seen: [String?] = []
        for _ in 0..<4 {
            _ = hub.receive(.noteOn(UInt7(36), velocity: UInt7(100), channel: Channel(0)))
            _ = hub.receive(.noteOff(UInt7(36), channel: Channel(0)))
            seen.append(hub.currentScene)
        }
        #expect(seen == ["S1", "S2", "S0", "S1"])
    }

    @Test func programChange_withoutSteps_stillPicksSceneN() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.rig("{ program-change: true }", scenes: 3)))
        _ = hub.receive(.programChange(UInt7(2), channel: Channel(0)))
        #expect(hub.currentScene == "S2")
    }

    @Test func check_stepsOrValuesThatMissOrOvershoot_saidAtTheirPlace() {
        #expect(Self.errors(Self.rig("{ program-change: true }\n    steps: 3")) == [
            "m.yaml:5:12: error: steps: 3 points steps 2...2 at no scene (the file has 2); give steps: 2",
        ])
        #expect(Self.errors(Self.rig("{ program-change: true }\n    steps: 2", scenes: 3)) == [
            "m.yaml:5:12: error: steps: 2 cannot reach scene 'S2' (2); give steps: 3",
        ])
        #expect(Self.errors(Self.rig("{ program-change: true }\n    values: [0, 2.5, 4]", scenes: 3)) == [
            "m.yaml:5:13: error: control 'Patch' cannot reach scene 'S1' (1), 'S2' (2); add their places to values",
            "m.yaml:5:17: error: value 2.5 points at no scene: scene.select takes a scene's place in scenes:, 0...2 here",
            "m.yaml:5:22: error: value 4 points at no scene: scene.select takes a scene's place in scenes:, 0...2 here",
        ])
        #expect(Self.errors(Self.rig("{ program-change: true }\n    values: [1, 0]")) == [])
        #expect(Self.errors(Self.rig("{ program-change: true }\n    steps: 2")) == [])
    }
}
