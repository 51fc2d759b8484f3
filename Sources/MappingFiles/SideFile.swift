import Foundation
import Yams

/// A small YAML (or JSON) file `render` reads beside a mapping — `--program-map`,
/// `--timbres` —: a mapping at the top, read with the mapping files' reader,
/// so every mistake is reported at once as `file:line:column: error: message`
/// and nothing is used from a file with one.
enum SideFile {
    /// What the messages say of a file of one kind.
    struct Kind {
        /// "program map": "cannot read the program map (…)".
        var name: String
        /// What the top level must be, e.g. "a mapping of programs to programs".
        var expected: String
        /// Said of an empty file, after "the file is empty; expected ".
        var expectedWhenEmpty: String
        /// Said of a mapping with no entry, e.g. "the map names no program".
        var noEntry: String
        /// An example, given in each of those messages.
        var example: String
    }

    /// The file at `path` read whole, then as `parse` reads its text.
    static func load<T>(path: String, _ kind: Kind,
                        _ parse: (_ text: String, _ file: String) throws(MappingError) -> T) throws(MappingError) -> T {
        func unreadable(_ reason: String) -> MappingError {
            MappingError([MappingDiagnostic(SourceLocation(file: path, line: 0, column: 0), "cannot read the \(kind.name) (\(reason))")])
        }
        // fopen first: its errno names the reason (no such file, permission) in the system's words.
        guard let handle = fopen(path, "r") else { throw unreadable(String(cString: strerror(errno))) }
        fclose(handle)
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch { throw unreadable(ControlMapping.reason(error)) }
        return try parse(text, path)
    }

    /// `yaml`'s top-level pairs, in order, handed to `read` with the reader;
    /// what `read` makes of them, or every mistake either found, in file order.
    static func parse<T>(yaml: String, file: String, _ kind: Kind,
                         _ read: (_ pairs: [(Node, Node)], _ reader: MappingReader) -> T?) throws(MappingError) -> T {
        let reader = MappingReader(file: file, registry: .standard)
        let value = pairs(yaml, kind, reader).flatMap { read($0, reader) }
        guard reader.diagnostics.isEmpty, let value else {
            throw MappingError(reader.diagnostics.sorted {
                ($0.location.line, $0.location.column) < ($1.location.line, $1.location.column)
            })
        }
        return value
    }

    private static func pairs(_ yaml: String, _ kind: Kind, _ reader: MappingReader) -> [(Node, Node)]? {
        let root: Node?
        do { root = try Yams.compose(yaml: yaml) } catch let e as YamlError {
            reader.reportYAML(e)
            return nil
        } catch {
            reader.error(at: SourceLocation(file: reader.file, line: 1, column: 1), "cannot read YAML (\(error))")
            return nil
        }
        guard let root else {
            reader.error(at: SourceLocation(file: reader.file, line: 1, column: 1),
                         "the file is empty; expected \(kind.expectedWhenEmpty) (\(kind.example))")
            return nil
        }
        guard case .mapping(let pairs) = root else {
            reader.expected("\(kind.expected) (\(kind.example))", root)
            return nil
        }
        if pairs.isEmpty { reader.error(root, "\(kind.noEntry) (\(kind.example))") }
        return Array(pairs)
    }
}
