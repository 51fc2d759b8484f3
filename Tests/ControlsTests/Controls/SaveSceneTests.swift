import Controls
import Foundation
import MIDI
import MappingFiles
import Parameters
import Testing

/// "Save as scene" on the hub: what plays now goes into the mapping file (the
/// old text kept as FILE.bak); the file read again plays it back.
@Suite struct SaveSceneTests {
    static func copyOfStagePiano() throws -> (folder: String, path: String, text: String) {
        let folder = NSTemporaryDirectory() + "carillon-save-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let text = try String(contentsOfFile: MappingPatchTests.folder.appendingPathComponent("stage-piano.yaml").path, encoding: .utf8)
        let path = folder + "/stage.yaml"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return (folder, path, text)
    }

    /// A hub whose file a watcher reloads takes a save in only through that
    /// reload; a second save before it (the hub still holds the old mapping)
    /// adds its scene after the first, and the scene selector reaches both.
    @Test func twoSaves_beforeTheWatchersReload_bothKept_andReached() throws {
        let (folder, path, _) = try Self.copyOfStagePiano()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let hub = ControlHub(mapping: try ControlMapping.load(path: path))
        hub.reloadsFromItsWatcher()   // no watcher here: nothing reloads
        try hub.saveScene(named: "One")
        #expect(hub.sceneNames == ["Split", "Piano only"])   // not swapped in by the hub itself
        let second = try hub.saveScene(named: "Two")
        #expect(second.scenes.map(\.name) == ["Split", "Piano only", "One", "Two"])
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("    values: [0, 1, 2, 3]\n"))
    }

    /// The terminal's `w` twice before the watcher's reload: `Saved 1`, then
    /// `Saved 2` (named from the file, not from the hub's scenes, which do not
    /// have the first yet), so the second does not replace the first.
    @Test func twoNewScenes_beforeTheWatchersReload_getTwoNames() throws {
        let (folder, path, _) = try Self.copyOfStagePiano()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let hub = ControlHub(mapping: try ControlMapping.load(path: path))
        hub.reloadsFromItsWatcher()   // no watcher here: nothing reloads
        #expect(try hub.saveNewScene().name == "Saved 1")
        let second = try hub.saveNewScene()
        #expect(second.name == "Saved 2")
        #expect(second.mapping.scenes.map(\.name) == ["Split", "Piano only", "Saved 1", "Saved 2"])
    }

    @Test func save_thenReload_theScenePlaysTheSavedPresetsAndValues() throws {
        let (folder, path, original) = try Self.copyOfStagePiano()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let hub = ControlHub(mapping: try ControlMapping.load(path: path))
        hub.selectScene(named: "Piano only")   // its own zones are saved with the scene
        hub.selectPreset(onChannel: Channel(2), bank: 0, program: 89)
        hub.selectPreset(onChannel: Channel(1), bank: 8, program: 33)
        hub.set(.strip(.channel(Channel(0)), .gain), to: -7.5)
        hub.set(.reverb(.level), to: 0.6)

        let saved = try hub.saveScene(named: "Gig")
        #expect(saved.scenes.map(\.name) == ["Split", "Piano only", "Gig"])
        // The file keeps every line it had (comments too) but the scene selector's values, which reach the new
        // scene too; the old text is beside it.
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("    values: [0, 1, 2]\n"))
        #expect(MappingPatchTests.isSubsequence(original.components(separatedBy: "\n").filter { !$0.contains("values: [0, 1]") },
                                                of: text.components(separatedBy: "\n")))
        #expect(try String(contentsOfFile: path + ".bak", encoding: .utf8) == original)
        #expect(!(try FileManager.default.contentsOfDirectory(atPath: folder)).contains { $0.hasSuffix(".tmp") })

        // Elsewhere, then a reload as the watcher does, then the scene: everything comes back, in order.
        hub.selectPreset(onChannel: Channel(2), bank: 0, program: 0)
        hub.set(.strip(.channel(Channel(0)), .gain), to: 0)
        hub.set(.reverb(.level), to: 0.2)
        let reloaded = ControlHub(mapping: try ControlMapping.load(path: path))
        var sent: [ParameterChange] = []
        reloaded.subscribe { sent.append($0) }
        sent.removeAll()
        #expect(reloaded.selectScene(named: "Gig"))
        #expect(reloaded.channelPresets[Channel(2)] == .init(bank: 0, program: 89))
        #expect(reloaded.channelPresets[Channel(1)] == .init(bank: 8, program: 33))
        #expect(reloaded.channelPresets[Channel(0)] == .init(bank: 0, program: 0))
        #expect(reloaded.value(of: .strip(.channel(Channel(0)), .gain)) == -7.5)
        #expect(abs(reloaded.value(of: .reverb(.level)) - 0.6) < 1e-9)
        #expect(sent.contains { $0.address == .channelProgram(Channel(2)) && $0.value == 89 })
        let zones = reloaded.rigView.zones.map(\.name)
        #expect(zones == ["Piano"], "the current scene's own zones were saved with it: \(zones)")
    }

    @Test func saveAgain_replacesTheScene_andWithoutAFileSaysWhy() throws {
        let (folder, path, _) = try Self.copyOfStagePiano()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let hub = ControlHub(mapping: try ControlMapping.load(path: path))
        hub.selectPreset(onChannel: Channel(0), bank: 0, program: 5)
        try hub.saveScene(named: "Gig")
        hub.selectPreset(onChannel: Channel(0), bank: 0, program: 6)
        let saved = try hub.saveScene(named: "Gig")
        #expect(saved.scenes.map(\.name) == ["Split", "Piano only", "Gig"])
        #expect(saved.scenes[2].channels.first { $0.channel == Channel(0) }?.program == 6)
        #expect(throws: SceneSaveError.self) { try ControlHub(mapping: nil).saveScene(named: "X") }
        // What a save killed between write and rename left (its process gone) is swept by the next; a live one's is not.
        let dead = folder + "/.stage.yaml.save-999999.tmp", alive = folder + "/.stage.yaml.save-1.tmp"
        for f in [dead, alive] { try "half".write(toFile: f, atomically: false, encoding: .utf8) }
        try hub.saveScene(named: "Gig")
        #expect(!FileManager.default.fileExists(atPath: dead) && FileManager.default.fileExists(atPath: alive))
    }
}
