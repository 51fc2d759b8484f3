import Foundation
import Testing

/// `carillon plugins`: the installed LV2 plugins where LV2_PATH says, as text and JSON.
@Suite struct PluginsCommandTests {
    /// A folder holding mda-lv2's bundle and the LV2 specifications that name
    /// its classes and units (links), for LV2_PATH: no other plugin.
    static func mdaOnly() throws -> String {
        let dir = RenderCommandTests.scratch()
        for bundle in ["mda.lv2", "core.lv2", "units.lv2"] {
            try FileManager.default.createSymbolicLink(atPath: dir + "/" + bundle, withDestinationPath: "/usr/lib/lv2/" + bundle)
        }
        return dir
    }

    @Test func lv2Path_isHonoured_andJSONListsItsPlugins() throws {
        let dir = try Self.mdaOnly()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try RenderCommandTests.carillon(["plugins", "--json"], environment: ["LV2_PATH": dir])
        #expect(r.status == 0, "\(r.stderr)")
        let plugins = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(plugins.count >= 30)
        #expect(plugins.allSatisfy { ($0["uri"] as? String ?? "").hasPrefix("http://drobilla.net/plugins/mda/") })
        let piano = plugins.first { $0["uri"] as? String == "http://drobilla.net/plugins/mda/Piano" }
        #expect(piano?["kind"] as? String == "instrument" && piano?["midi-inputs"] as? Int == 1)
        let controls = piano?["controls"] as? [[String: Any]] ?? []
        #expect(controls.contains { $0["symbol"] as? String == "env_decay" && $0["default"] as? Double == 0.5 })
    }

    @Test func filter_picksByNameOrClass_andTextShowsRanges() throws {
        let dir = try Self.mdaOnly()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try RenderCommandTests.carillon(["plugins", "delay"], environment: ["LV2_PATH": dir])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("http://drobilla.net/plugins/mda/Delay\n  MDA Delay: effect (Delay Plugin), audio 2 in, 2 out"))
        #expect(r.stdout.contains("l_delay             0…1 (default 0.5)  L Delay"))
        #expect(!r.stdout.contains("mda/Piano"))
    }

    @Test func nothingFound_isOneClearLine_andExitStatus1() throws {
        let empty = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let none = try RenderCommandTests.carillon(["plugins"], environment: ["LV2_PATH": empty])
        #expect(none.status == 1 && none.stdout.isEmpty)
        #expect(none.stderr == "carillon: error: no LV2 plugins are installed (LV2_PATH=\(empty)) — e.g. sudo apt install mda-lv2\n")
        let dir = try Self.mdaOnly()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let nomatch = try RenderCommandTests.carillon(["plugins", "nosuch"], environment: ["LV2_PATH": dir])
        #expect(nomatch.status == 1 && nomatch.stderr.hasPrefix("carillon: error: no installed LV2 plugin matches 'nosuch'"))
    }
}
