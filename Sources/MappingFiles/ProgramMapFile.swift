import Foundation
import MIDI
import Yams

/// `render --program-map FILE`: a YAML mapping from General MIDI programs
/// (or ranges of them) to programs, 0-based as in MIDI data (0 is Acoustic
/// Grand Piano):
///
/// ```yaml
/// 0..7: 5     # every piano → Electric Piano 2
/// 40: 41      # Violin → Viola
/// ```
///
/// Read with the mapping files' reader, so every mistake is reported at once
/// as `file:line:column: error: message`, and nothing is used from a file
/// with one.
public enum ProgramMapFile {
    public static func load(path: String) throws(MappingError) -> ProgramMap {
        try SideFile.load(path: path, kind) { text, file throws(MappingError) in try parse(yaml: text, file: file) }
    }

    public static func parse(yaml: String, file: String = "<program map>") throws(MappingError) -> ProgramMap {
        try SideFile.parse(yaml: yaml, file: file, kind, read)
    }

    static let example = "e.g. '0..7: 5' maps the pianos to program 5"
    static let kind = SideFile.Kind(
        name: "program map",
        expected: "a mapping of programs to programs",
        expectedWhenEmpty: "programs mapped to programs",
        noEntry: "the map names no program", example: example)

    private static func read(_ pairs: [(Node, Node)], _ reader: MappingReader) -> ProgramMap? {
        var map = ProgramMap()
        var mappedAt: [Int: Node] = [:]
        for (keyNode, valueNode) in pairs {
            let programs = self.programs(keyNode, reader)
            let target = reader.integer(valueNode, in: 0...127, "program")
            guard let programs else { continue }
            for p in programs {
                if let earlier = mappedAt[p] {
                    reader.error(keyNode, "program \(p) is already mapped (line \(reader.location(earlier).line))")
                    break
                }
                mappedAt[p] = keyNode
            }
            if let target { for p in programs { map[UInt7(p)] = UInt7(target) } }
        }
        return map
    }

    /// A key: a program 0...127, or a range "A..B" of them.
    private static func programs(_ node: Node, _ reader: MappingReader) -> ClosedRange<Int>? {
        guard case .scalar(let scalar) = node else {
            reader.error(node, "expected a program 0...127 or a range A..B as a key, found \(MappingReader.describe(node))")
            return nil
        }
        if node.tagName == .int {
            return reader.integer(node, in: 0...127, "program").map { $0...$0 }
        }
        let text = scalar.string
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1].isEmpty, let low = Int(parts[0]), let high = Int(parts[2]) else {
            reader.error(node, "expected a program 0...127 or a range A..B as a key, found '\(text)'")
            return nil
        }
        guard (0...127).contains(low), (0...127).contains(high) else {
            reader.error(node, "programs run 0...127 (0 is Acoustic Grand Piano), found '\(text)'")
            return nil
        }
        guard low <= high else {
            reader.error(node, "the range '\(text)' runs backwards; write the lower program first (\(high)..\(low))")
            return nil
        }
        return low...high
    }
}
