#if canImport(Glibc)
import Glibc
#endif

/// One file of a batch: where it is read, its key (the path below the folder
/// argument it came from, or its name), and where its audio goes.
public struct BatchItem: Sendable, Equatable {
    public var input: String
    public var key: String
    public var output: String
    /// The folder for this input's stems (`render --stems`), nil for none.
    public var stems: String?

    public init(input: String, key: String, output: String, stems: String? = nil) {
        self.input = input; self.key = key; self.output = output; self.stems = stems
    }
}

public enum BatchPlanError: Error, Equatable, CustomStringConvertible {
    case cannotRead(path: String, reason: String)
    case sameOutput(output: String, first: String, second: String)
    case cannotCreateFolder(path: String, reason: String)

    public var description: String {
        switch self {
        case .cannotRead(let path, let reason): "cannot read \(path): \(reason)"
        case .sameOutput(let output, let first, let second): "\(first) and \(second) would both write \(output)"
        case .cannotCreateFolder(let path, let reason): "cannot create folder \(path): \(reason)"
        }
    }
}

/// Turns the command line's inputs (files, folders, list files) into the
/// batch's items, before anything renders.
public enum BatchPlan {
    /// Extensions of MIDI files looked for in folders (any case).
    public static let midiExtensions: Set<String> = ["mid", "midi", "kar", "rmi"]

    /// An input as named: a file (key: its name) or a folder walked
    /// recursively for MIDI files (key: the path below the folder), in a
    /// stable (sorted) order.
    public static func expand(_ argument: String) throws(BatchPlanError) -> [(input: String, key: String)] {
        var info = stat()
        guard stat(argument, &info) == 0 else { throw .cannotRead(path: argument, reason: errnoText()) }
        guard info.st_mode & S_IFMT == S_IFDIR else { return [(argument, baseName(argument))] }
        var found: [(String, String)] = []
        let root = argument.hasSuffix("/") ? String(argument.dropLast()) : argument
        try walk(folder: root, relative: "", into: &found)
        return found
    }

    private static func walk(folder: String, relative: String, into found: inout [(String, String)]) throws(BatchPlanError) {
        guard let dir = opendir(folder) else { throw .cannotRead(path: folder, reason: errnoText()) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(dir)
        for name in names.sorted() {
            let path = "\(folder)/\(name)", rel = relative.isEmpty ? name : "\(relative)/\(name)"
            var info = stat()
            // lstat: a symbolic link to a folder is not followed (no loops); one to a file is.
            guard lstat(path, &info) == 0 else { continue }
            if info.st_mode & S_IFMT == S_IFDIR {
                try walk(folder: path, relative: rel, into: &found)
            } else if isMIDIName(name) {
                found.append((path, rel))
            }
        }
    }

    public static func isMIDIName(_ name: String) -> Bool {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        return midiExtensions.contains(name[name.index(after: dot)...].lowercased())
    }

    /// The paths of a list file's lines (one a line; blank lines and lines
    /// starting with `#` skipped; a trailing CR dropped).
    public static func listLines(_ text: String) -> [String] {
        // "\r\n" is one Character in Swift: split on it as well as on "\n".
        text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" }).compactMap { line in
            var l = Substring(line)
            if l.hasSuffix("\r") { l = l.dropLast() }
            while l.first == " " || l.first == "\t" { l = l.dropFirst() }
            while l.last == " " || l.last == "\t" { l = l.dropLast() }
            return l.isEmpty || l.hasPrefix("#") ? nil : String(l)
        }
    }

    /// Items with their outputs in `directory` (the key's folders mirrored,
    /// the extension replaced) and, with `stems`, their stems in a folder
    /// each below it, named as the output without extension (`stems/sub/song/`).
    /// Two inputs with the same output are an error.
    public static func items(_ inputs: [(input: String, key: String)], directory: String?,
                             fileExtension: String, stems: String? = nil) throws(BatchPlanError) -> [BatchItem] {
        var byOutput: [String: String] = [:]
        var items: [BatchItem] = []
        for (input, key) in inputs {
            var stem = key
            let nameStart = key.lastIndex(of: "/").map { key.index(after: $0) } ?? key.startIndex
            if let dot = key[nameStart...].lastIndex(of: "."), dot != nameStart { stem = String(key[..<dot]) }
            let file = "\(stem).\(fileExtension)"
            let output: String
            if let directory { output = directory.hasSuffix("/") ? directory + file : "\(directory)/\(file)" } else { output = file }
            if let first = byOutput[output] { throw .sameOutput(output: output, first: first, second: input) }
            byOutput[output] = input
            let stemsFolder = stems.map { $0.hasSuffix("/") ? $0 + stem : "\($0)/\(stem)" }
            items.append(BatchItem(input: input, key: key, output: output, stems: stemsFolder))
        }
        return items
    }

    /// Creates every output's folder that is missing (like `mkdir -p`).
    public static func createFolders(for items: [BatchItem]) throws(BatchPlanError) {
        var done: Set<String> = []
        for item in items {
            guard let slash = item.output.lastIndex(of: "/") else { continue }
            let folder = String(item.output[..<slash])
            guard !folder.isEmpty, done.insert(folder).inserted else { continue }
            try makeFolders(folder)
        }
    }

    static func makeFolders(_ path: String) throws(BatchPlanError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part
            if mkdir(prefix, 0o777) != 0 && errno != EEXIST { throw .cannotCreateFolder(path: prefix, reason: errnoText()) }
            prefix += "/"
        }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw .cannotCreateFolder(path: path, reason: "a file of that name is in the way")
        }
    }

    static func baseName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}

func errnoText() -> String { String(cString: strerror(errno)) }
