import Foundation
import Testing

/// `carillon mapping check`, run as a user runs it.
@Suite struct MappingCommandTests {
    static let mappings = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("mappings")

    static func write(_ text: String, name: String) throws -> String {
        let path = NSTemporaryDirectory() + "carillon-mapping-\(ProcessInfo.processInfo.processIdentifier)-\(name)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func check_repositoryMappingsPass() throws {
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.mappings.path)
            .filter { $0.hasSuffix(".yaml") }.sorted().map { Self.mappings.appendingPathComponent($0).path }
        let r = try InspectTests.run(["mapping", "check"] + files)
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty)
        #expect(r.stdout.contains("korg-nanokontrol2.yaml: ok"))
        #expect(r.stdout.contains("two-tracks.yaml: ok"))   // its tracks: files exist beside it; track.N.gain faders
    }

    @Test func check_missingTrackFileNamedAtItsLine() throws {
        let path = try Self.write("tracks:\n  - nothere.wav\ncontrols: []\n", name: "tracks.yaml")
        let folder = (path as NSString).deletingLastPathComponent
        let r = try InspectTests.run(["mapping", "check", path])
        #expect(r.status == 1)
        #expect(r.stderr == "\(path):2:5: error: track file 'nothere.wav' not found (looked for \(folder)/nothere.wav; paths are relative to the mapping file)\n")
    }

    @Test func check_mistakesExitOneWithLocations() throws {
        let path = try Self.write("controls:\n  - name: A\n    kind: fadr\n    source: { cc: 1 }\n    targets: [master.gain]\n", name: "bad.yaml")
        let r = try InspectTests.run(["mapping", "check", path])
        #expect(r.status == 1)
        #expect(r.stderr == "\(path):3:11: error: unknown control kind 'fadr'; did you mean 'fader'?\n")
    }

    @Test func check_explainPrintsATable() throws {
        let r = try InspectTests.run(["mapping", "check", "--explain", Self.mappings.appendingPathComponent("arturia-minilab-mk2.yaml").path])
        #expect(r.status == 0)
        #expect(r.stdout.contains("CONTROL"))
        #expect(r.stdout.contains("encoder (offset-64"))
        #expect(r.stdout.contains("transport.tempo [20…300 bpm]"))
    }

    @Test func check_withoutFilesIsAUsageError() throws {
        let r = try InspectTests.run(["mapping", "check"])
        #expect(r.status != 0)
        #expect(!r.stderr.isEmpty)
    }
}
