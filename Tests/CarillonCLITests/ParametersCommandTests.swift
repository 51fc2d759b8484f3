import Controls
import Foundation
import Parameters
import Testing

/// `carillon parameters`: the table as text, JSON and Markdown; docs/parameters.md is its output.
@Suite struct ParametersCommandTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func docsParametersMd_isTheCommandsMarkdown() throws {
        let r = try RenderCommandTests.carillon(["parameters", "--markdown"])
        #expect(r.status == 0, "\(r.stderr)")
        let docs = try String(contentsOf: Self.repository.appendingPathComponent("docs/parameters.md"), encoding: .utf8)
        #expect(r.stdout == docs, "docs/parameters.md differs from `carillon parameters --markdown`: regenerate it with that command")
    }

    @Test func markdown_namesSourceFilesThatExist() throws {
        let r = try RenderCommandTests.carillon(["parameters", "--markdown"])
        #expect(r.status == 0, "\(r.stderr)")
        // Every `Sources/…` path the text names, between backticks.
        let paths = r.stdout.split(separator: "`").filter { $0.hasPrefix("Sources/") }
        #expect(!paths.isEmpty, "the text names the parameter table's source file")
        for path in paths {
            #expect(FileManager.default.fileExists(atPath: Self.repository.appendingPathComponent(String(path)).path),
                    "\(path) does not exist")
        }
    }

    @Test func json_listsEveryAddress_withItsDefaultInRange() throws {
        let r = try RenderCommandTests.carillon(["parameters", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        let entries = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(entries.count == ParameterAddress.builtIn.count)
        let addresses = Set(entries.compactMap { $0["address"] as? String })
        #expect(addresses.count == entries.count)
        for e in entries {
            let min = e["min"] as? Double ?? .nan, max = e["max"] as? Double ?? .nan, d = e["default"] as? Double ?? .nan
            #expect(min <= d && d <= max, "\(e["address"] ?? "?")")
            #expect(!(e["drives"] as? String ?? "").isEmpty)
        }
        for name in ["osc.detune", "track.8.solo", "tone.note", "channel.16.cc.127", "scene.select"] {
            #expect(addresses.contains(name), "\(name)")
        }
    }

    @Test func text_printsOneRowPerFamily_withTheCCsOwnDefaults() throws {
        let r = try RenderCommandTests.carillon(["parameters"])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("strip.N.gain ") }.count == 1)
        #expect(lines.contains { $0.hasPrefix("channel.N.cc.C ") && $0.contains("C 7: 100, C 10: 64, C 11: 127") })
        #expect(lines.contains { $0.hasPrefix("osc.detune ") && $0.contains("-1…1") && $0.contains("st") })
        #expect(!lines.contains { $0.hasPrefix("strip.3.") })
    }
}
