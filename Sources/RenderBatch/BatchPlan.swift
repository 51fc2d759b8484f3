import OfflineRender
#if canImport(Glibc)
import Glibc
#endif

/// One rendering of a batch: where its file is read, its key (its path
/// relative to the batch's root, `BatchPlan.gather`), where its audio goes
/// and the SoundFont it plays with. An input is one item, or one per font
/// with `--soundfont-pick all` (`SoundFontSet.renderings`).
public struct BatchItem: Sendable, Equatable {
    public var input: String
    public var key: String
    public var output: String
    /// The folder for this rendering's stems (`render --stems`), nil for none.
    public var stems: String?
    /// The font it renders with: an index in the batch's `SoundFontSet.fonts`.
    public var soundFont: Int

    public init(input: String, key: String, output: String, stems: String? = nil, soundFont: Int = 0) {
        self.input = input; self.key = key; self.output = output; self.stems = stems; self.soundFont = soundFont
    }
}

public enum BatchPlanError: Error, Equatable, CustomStringConvertible {
    case cannotRead(path: String, reason: String)
    case sameOutput(output: String, first: String, second: String)
    case cannotCreateFolder(path: String, reason: String)
    case outsideRoot(path: String, root: String)
    case rootIsNotAFolder(path: String)
    case outputIsAnInput(output: String, input: String)

    public var description: String {
        switch self {
        case .cannotRead(let path, let reason): "cannot read \(path): \(reason)"
        case .sameOutput(let output, let first, let second): "\(first) and \(second) would both write \(output)"
        case .cannotCreateFolder(let path, let reason): "cannot create folder \(path): \(reason)"
        case .outsideRoot(let path, let root): "\(path) is not under the input root \(root) (--input-root)"
        case .rootIsNotAFolder(let path): "--input-root \(path) is not a folder"
        case .outputIsAnInput(let output, let input):
            "the output \(output) is the input \(input) itself; name another output (rendering would overwrite the MIDI file)"
        }
    }
}

/// Turns the command line's inputs (files, folders, list files) into the
/// batch's items, before anything renders.
public enum BatchPlan {
    /// Extensions of MIDI files looked for in folders (any case).
    public static let midiExtensions: Set<String> = ["mid", "midi", "kar", "rmi"]

    /// The batch's files from the names given (files, and folders walked
    /// recursively for MIDI files, in a stable sorted order), each keyed by
    /// its path relative to one root: `root` when given (every name must lie
    /// under it), otherwise the deepest folder holding every name — a folder
    /// name counts as itself, a file name as the folder it is in. So
    /// `corpus/` walked and `corpus/a.mid corpus/sub/b.mid` listed (with root
    /// `corpus`) give the same keys, `a.mid` and `sub/b.mid`, whatever the
    /// names' order, and equal file names in different folders get different
    /// keys. Paths are compared as written, made absolute against the
    /// current folder with `.` and `..` taken out; symbolic links are not
    /// resolved. A file reached twice is taken once.
    public static func gather(_ names: [String], root: String? = nil) throws(BatchPlanError) -> [(input: String, key: String)] {
        let cwd = currentFolder()
        // (the path as it will be read, its normalised components)
        var files: [(input: String, parts: [String])] = []
        var holders: [[String]] = []
        for name in names {
            var info = stat()
            guard stat(name, &info) == 0 else { throw .cannotRead(path: name, reason: errnoText()) }
            let parts = components(name, in: cwd)
            if info.st_mode & S_IFMT == S_IFDIR {
                holders.append(parts)
                var found: [(String, String)] = []
                let folder = name.count > 1 && name.hasSuffix("/") ? String(name.dropLast()) : name
                try walk(folder: folder, relative: "", into: &found)
                files += found.map { ($0.0, parts + $0.1.split(separator: "/").map(String.init)) }
            } else {
                holders.append(Array(parts.dropLast()))
                files.append((name, parts))
            }
        }
        let rootParts: [String]
        if let root {
            var info = stat()
            guard stat(root, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { throw .rootIsNotAFolder(path: root) }
            rootParts = components(root, in: cwd)
            if let outside = zip(names, holders).first(where: { !$0.1.starts(with: rootParts) }) {
                throw .outsideRoot(path: outside.0, root: root)
            }
        } else {
            rootParts = holders.dropFirst().reduce(holders.first ?? []) { common, parts in
                Array(zip(common, parts).prefix(while: { $0.0 == $0.1 }).map(\.0))
            }
        }
        var seen: Set<String> = []
        var keyed: [(input: String, key: String)] = []
        for file in files {
            let key = file.parts.dropFirst(rootParts.count).joined(separator: "/")
            if seen.insert(key).inserted { keyed.append((file.input, key)) }
        }
        return keyed
    }

    /// `path`'s components as an absolute path: relative to `cwd` unless it
    /// starts with `/`, without empty, `.` and `..` components (`..` takes
    /// the one before it away, as `realpath -s` does).
    static func components(_ path: String, in cwd: String) -> [String] {
        var parts: [String] = []
        for part in ((path.hasPrefix("/") ? "" : cwd + "/") + path).split(separator: "/") {
            switch part {
            case ".": continue
            case "..": if !parts.isEmpty { parts.removeLast() }
            default: parts.append(String(part))
            }
        }
        return parts
    }

    static func currentFolder() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
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

    /// Refuses a batch where an output is one of the inputs (`-o song.mid --format
    /// wav`): the same file by device and inode, so other spellings and links count.
    public static func refuseOverwritingInputs(_ items: [BatchItem]) throws(BatchPlanError) {
        struct FileID: Hashable { var device: UInt64, inode: UInt64 }
        func id(_ path: String) -> FileID? {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            return FileID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        }
        var inputs: [FileID: String] = [:]
        for item in items { if let i = id(item.input) { inputs[i] = item.input } }
        for item in items {
            if let o = id(item.output), let input = inputs[o] { throw .outputIsAnInput(output: item.output, input: input) }
        }
    }

    /// Creates every output's folder that is missing (like `mkdir -p`).
    public static func createFolders(for items: [BatchItem]) throws(BatchPlanError) {
        var done: Set<String> = []
        for item in items {
            guard let slash = item.output.lastIndex(of: "/") else { continue }
            let folder = String(item.output[..<slash])
            guard !folder.isEmpty, done.insert(folder).inserted else { continue }
            do throws(FolderError) { try Folders.make(folder) } catch {
                throw .cannotCreateFolder(path: error.path, reason: error.reason)
            }
        }
    }
}
