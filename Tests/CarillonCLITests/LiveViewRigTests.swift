import Controls
import Foundation
import MappingFiles
import Parameters
import Testing
@testable import CarillonCommands

/// `live`'s view of the rig: the current scene and a line per zone in force,
/// following scene switches and reloads.
@Suite struct LiveViewRigTests {
    static func stagePianoHub() throws -> ControlHub {
        let hub = ControlHub(mapping: try ControlMapping.load(
            path: MappingCommandTests.mappings.appendingPathComponent("stage-piano.yaml").path))
        hub.set(.sceneSelect, to: 0)   // as live starts (HostAssembly.makeHub)
        return hub
    }

    @Test func terminal_sceneThenALinePerZone() throws {
        let hub = try Self.stagePianoHub()
        #expect(LiveView.rigLines(hub.rigView) == [
            "   scene 1/2: Split",
            "   zone Bass    C-1..B2 → ch 2 +12",
            "   zone Piano   C3..G9  → ch 1",
            "   zone Strings C3..G9  → ch 3 vel ×0.6+10",
            "   zone Synth   C5..G9  → Hardware Synth ch 1",
        ])
        hub.selectScene(named: "Piano only")
        #expect(LiveView.rigLines(hub.rigView) == [
            "   scene 2/2: Piano only",
            "   zone Piano C-1..G9 → ch 1 vel s-curve 2",
        ])
        hub.replace(mapping: try #require(hub.mapping))
        #expect(LiveView.rigLines(hub.rigView).first == "   scene: none of 2 (the mapping's own zones)")
    }

    @Test func offATerminal_aLineAtEachChange() throws {
        let hub = try Self.stagePianoHub()
        #expect(LiveView.rigLogLine(hub.rigView)
            == "scene: Split; zones: Bass C-1..B2 → ch 2 +12, Piano C3..G9 → ch 1, Strings C3..G9 → ch 3 vel ×0.6+10, Synth C5..G9 → Hardware Synth ch 1")
        let view = LiveView(terminal: true)
        view.follow(hub)
        let first = try #require(view.rig)
        view.follow(hub)
        #expect(view.rig == first)
        hub.selectScene(named: "Piano only")
        view.follow(hub)
        #expect(view.rig?.sceneName == "Piano only")
    }

    @Test func noRig_noLines() {
        #expect(LiveView.rigLines(ControlHub(mapping: nil).rigView).isEmpty)
    }
}
