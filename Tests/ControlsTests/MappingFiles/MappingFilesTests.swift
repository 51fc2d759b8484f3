import Controls
import Foundation
import MappingFiles
import Testing

/// The repository's `mappings/` folder, found from this file's path.
let mappingsFolder = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("mappings")

func mappingFiles() -> [String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: mappingsFolder.path)) ?? []
    return names.filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") }.sorted()
        .map { mappingsFolder.appendingPathComponent($0).path }
}

@Suite struct MappingFilesTests {
    @Test func folder_holdsTheGeneralMIDIAndThreeControllers() {
        let names = mappingFiles().map { URL(fileURLWithPath: $0).lastPathComponent }
        #expect(names.contains("general-midi.yaml"))
        #expect(names.count >= 4)
    }

    @Test(arguments: mappingFiles())
    func mappingFile_loadsWithoutErrors(_ path: String) throws {
        do {
            let mapping = try ControlMapping.load(path: path)
            #expect(!mapping.controls.isEmpty)
            #expect(mapping.name != nil)
            // And it runs: every control answers with a display string.
            let surface = ControlSurface(mapping: mapping)
            #expect(surface.states.allSatisfy { !$0.display.isEmpty })
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func readmeExample_loadsWithoutErrors() throws {
        let readme = try String(contentsOf: mappingsFolder.appendingPathComponent("README.md"), encoding: .utf8)
        // The ```yaml block after "## A full example".
        guard let section = readme.range(of: "## A full example"),
            let start = readme.range(of: "```yaml\n", range: section.upperBound..<readme.endIndex),
            let end = readme.range(of: "```", range: start.upperBound..<readme.endIndex)
        else {
            Issue.record("no yaml example in mappings/README.md")
            return
        }
        let yaml = String(readme[start.upperBound..<end.lowerBound])
        do {
            let mapping = try ControlMapping.parse(yaml: yaml, file: "README.md")
            #expect(mapping.controls.count >= 8)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func nanoKONTROL2_faderMovesItsStripAndPlayIsMomentary() throws {
        let mapping = try ControlMapping.load(path: mappingsFolder.appendingPathComponent("korg-nanokontrol2.yaml").path)
        let surface = ControlSurface(mapping: mapping)
        let r = Recorder(surface)
        surface.receive(cc(2, 127))
        #expect(r.values(.strip(.channel(2), .gain)) == [6])
        surface.receive(cc(41, 127)); surface.tick()
        #expect(r.values(.transport(.play)) == [1, 0])
        surface.receive(cc(50, 127)); surface.receive(cc(50, 0))
        #expect(r.values(.strip(.channel(2), .mute)) == [1])
    }

    @Test func miniLab_relativeEncoderStepsFromTheCurrentValue() throws {
        let mapping = try ControlMapping.load(path: mappingsFolder.appendingPathComponent("arturia-minilab-mk2.yaml").path)
        let surface = ControlSurface(mapping: mapping)
        surface.parameterDidChange(.transport(.tempo), value: 100)
        let r = Recorder(surface)
        surface.receive(cc(114, 65)); surface.receive(cc(114, 0)); surface.receive(cc(114, 65))
        #expect(r.values(.transport(.tempo)) == [101, 102])
        surface.receive(cc(114, 61))  // three steps down, accelerated: 3^2 = 9
        #expect(r.values(.transport(.tempo)).last == 93)
    }
}
