#if canImport(Glibc)
import Glibc
#endif

/// Files a render writes whole or not at all (labels, stems reports, a
/// rendering's manifest line, a manifest rewritten), and read back whole.
/// Any thread.
public enum AtomicFile {
    /// Writes `lines` (each ended by a newline) to a hidden file beside `path`,
    /// flushes it to disk and renames it over `path`: readers see the old
    /// file or the new one, never part of one.
    public static func replace(_ path: String, with lines: [String]) throws(AtomicFileError) {
        let (folder, name) = split(path)
        let temporary = folder + ".\(name).\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw AtomicFileError(path: temporary, reason: errnoText(), writing: true) }
        var text = lines.map { $0 + "\n" }.joined()
        let failure: String? = text.withUTF8 { bytes in
            if let failure = writeAll(fd, bytes) { return failure }
            return fsync(fd) == 0 ? nil : errnoText()
        }
        close(fd)
        if let failure { unlink(temporary); throw AtomicFileError(path: path, reason: failure, writing: true) }
        guard rename(temporary, path) == 0 else {
            let reason = errnoText()
            unlink(temporary)
            throw AtomicFileError(path: path, reason: reason, writing: true)
        }
    }

    /// The file's text, nil when there is none.
    public static func contents(_ path: String) throws(AtomicFileError) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw AtomicFileError(path: path, reason: errnoText(), writing: false)
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; throw AtomicFileError(path: path, reason: errnoText(), writing: false) }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Removes the temporary files `replace` left beside `path` in processes
    /// that are gone (killed while writing); a living process's stay.
    public static func removeAbandonedTemporaries(of path: String) {
        let (folder, name) = split(path)
        let prefix = "." + name + "."
        guard let dir = opendir(folder.isEmpty ? "." : folder) else { return }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let file = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            guard file.hasPrefix(prefix), file.hasSuffix(".tmp"),
                  let pid = Int32(file.dropFirst(prefix.count).dropLast(4)) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink(folder + file) }
        }
    }

    /// `bytes` written to `fd` whole (short writes and EINTR retried); the reason when a write fails.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var done = 0
        while done < bytes.count {
            let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 { if errno == EINTR { continue }; return errnoText() }
            done += n
        }
        return nil
    }

    /// `dir/song.SUFFIX` for an output `dir/song.wav`: a companion file's name
    /// (its extension replaced; a name without one gets the suffix added).
    public static func companion(of output: String, suffix: String) -> String {
        let slash = output.lastIndex(of: "/")
        let nameStart = slash.map { output.index(after: $0) } ?? output.startIndex
        let dot = output[nameStart...].lastIndex(of: ".")
        return String(output[..<(dot ?? output.endIndex)]) + suffix
    }

    /// (`dir/`, `name`) of `dir/name`; (``, `name`) without a folder.
    static func split(_ path: String) -> (String, String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        return (String(path[...slash]), String(path[path.index(after: slash)...]))
    }
}

public struct AtomicFileError: Error, Equatable, CustomStringConvertible {
    public var path: String
    public var reason: String
    /// Writing (else reading) failed.
    public var writing: Bool
    public var description: String { "cannot \(writing ? "write" : "read") \(path): \(reason)" }
}

/// Folders a render writes into.
public enum Folders {
    /// Creates `path` and its missing parents (like `mkdir -p`).
    public static func make(_ path: String) throws(FolderError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part
            if mkdir(prefix, 0o777) != 0 && errno != EEXIST { throw FolderError(path: prefix, reason: errnoText()) }
            prefix += "/"
        }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw FolderError(path: path, reason: "a file of that name is in the way")
        }
    }
}

public struct FolderError: Error, Equatable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot create folder \(path): \(reason)" }
}

/// The text of the last C call's `errno`.
public func errnoText() -> String { String(cString: strerror(errno)) }
