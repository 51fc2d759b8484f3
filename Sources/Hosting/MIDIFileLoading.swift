import Engine
import MIDI
#if canImport(Glibc)
import Glibc
#endif

/// Why a MIDI file could not be turned into a score.
public enum MIDIFileError: Error, Equatable, CustomStringConvertible {
    case cannotRead(path: String, reason: String)
    case notReadable(path: String, SMFError)

    public var description: String {
        switch self {
        case .cannotRead(let path, let reason): "cannot read \(path): \(reason)"
        case .notReadable(let path, let error): "\(path): not a readable MIDI file: \(error)"
        }
    }
}

/// Reads a whole file's bytes.
func readBytes(_ path: String) throws(MIDIFileError) -> [UInt8] {
    guard let file = fopen(path, "rb") else {
        throw .cannotRead(path: path, reason: String(cString: strerror(errno)))
    }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        if n > 0 { bytes.append(contentsOf: chunk[0..<n]) }
        if n < chunk.count {
            if ferror(file) != 0 { throw .cannotRead(path: path, reason: String(cString: strerror(errno))) }
            return bytes
        }
    }
}

extension StandardMIDIFile {
    /// Reads and parses the MIDI file at `path`.
    public init(contentsOf path: String) throws(MIDIFileError) {
        let bytes = try readBytes(path)
        do {
            try self.init(bytes: bytes)
        } catch {
            throw .notReadable(path: path, error)
        }
    }
}

extension Score {
    /// Reads and parses the MIDI file at `path`.
    public init(contentsOf path: String) throws(MIDIFileError) {
        self.init(try StandardMIDIFile(contentsOf: path))
    }
}
