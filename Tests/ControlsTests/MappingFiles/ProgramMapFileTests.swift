import Controls
import Foundation
import MIDI
import MappingFiles
import Testing

/// `render --program-map`: programs to programs, 0-based, every mistake at its line and column.
@Suite struct ProgramMapFileTests {
    static func diagnostics(_ yaml: String) -> [String] {
        do {
            _ = try ProgramMapFile.parse(yaml: yaml, file: "p.yaml")
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func programMap_readsProgramsAndRanges() throws {
        let map = try ProgramMapFile.parse(yaml: """
            # the pianos (0 is Acoustic Grand Piano) to Electric Piano 2
            0..7: 5
            40: 41
            """)
        #expect((0...7).allSatisfy { map[UInt7($0)] == 5 })
        #expect(map[40] == 41 && map[8] == 8 && map[41] == 41)
    }

    @Test func mistakes_allReportedWithLineAndColumn() {
        #expect(Self.diagnostics("""
            0..7: 5
            7..2: 1
            3: 9
            violin: 41
            40: 130
            0..128: 1
            41: [5]
            """) == [
            "p.yaml:2:1: error: the range '7..2' runs backwards; write the lower program first (2..7)",
            "p.yaml:3:1: error: program 3 is already mapped (line 1)",
            "p.yaml:4:1: error: expected a program 0...127 or a range A..B as a key, found 'violin'",
            "p.yaml:5:5: error: program 130 is out of range 0...127",
            "p.yaml:6:1: error: programs run 0...127 (0 is Acoustic Grand Piano), found '0..128'",
            "p.yaml:7:5: error: expected an integer (program), found a list",
        ])
    }

    @Test func badYAMLAndEmptyFiles_areRefused() {
        #expect(Self.diagnostics("0..7: [5\n") == ["p.yaml:2:1: error: invalid YAML: did not find expected ',' or ']' (while parsing a flow sequence at 1:7)"])
        #expect(Self.diagnostics("") == ["p.yaml:1:1: error: the file is empty; expected programs mapped to programs (e.g. '0..7: 5' maps the pianos to program 5)"])
        #expect(Self.diagnostics("[1, 2]") == ["p.yaml:1:1: error: expected a mapping of programs to programs (e.g. '0..7: 5' maps the pianos to program 5), found a list"])
        #expect(Self.diagnostics("{}") == ["p.yaml:1:1: error: the map names no program (e.g. '0..7: 5' maps the pianos to program 5)"])
    }

    @Test func aMissingFile_saysWhy() {
        #expect(throws: MappingError.self) { try ProgramMapFile.load(path: "/nonexistent/pianos.yaml") }
        do { _ = try ProgramMapFile.load(path: "/nonexistent/pianos.yaml") } catch {
            #expect(error.description == "/nonexistent/pianos.yaml: error: cannot read the program map (No such file or directory)")
        }
    }
}
