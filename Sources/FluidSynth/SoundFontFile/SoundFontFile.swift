#if canImport(Glibc)
import Glibc
#endif

/// Why a SoundFont file could not be read as `SoundFontFile` reads it.
public enum SoundFontFileError: Error, Equatable, Sendable, CustomStringConvertible {
    case unreadable(path: String, reason: String)
    /// Not an SF2/SF3 file as FluidSynth 2.3 reads one, or beyond this reader.
    case malformed(String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
        case .malformed(let reason): "unexpected SoundFont structure: \(reason)"
        }
    }
}

/// An SF2/SF3 file's layout and preset data, read once (its sample data is
/// not): the base of reduced views of the font (`view(keeping:)`), which
/// read their sample data from this file as long as they live.
public final class SoundFontFile: Sendable {
    public let path: String
    /// Open for the views' reads (pread: any thread, no shared position).
    let descriptor: Int32
    public let size: Int
    /// The top-level lists after the RIFF header, in file order (INFO, sdta,
    /// pdta, then any bytes after them): where each starts and how many
    /// bytes it takes (header included).
    let chunks: [Chunk]
    public let hydra: SoundFontHydra

    struct Chunk: Sendable {
        var offset: Int
        var length: Int
        var isPresetData: Bool
    }

    /// Reads the RIFF chunk list and the `pdta` list of the file at `path`.
    public init(path: String) throws(SoundFontFileError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        descriptor = fd
        do throws(SoundFontFileError) {
            var info = stat()
            guard fstat(fd, &info) == 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
            size = Int(info.st_size)
            let header = try Self.read(fd, path, at: 0, count: 12)
            guard header.starts(with: Array("RIFF".utf8)), Array(header[8..<12]) == Array("sfbk".utf8) else {
                throw .malformed("not a RIFF sfbk file")
            }
            // FluidSynth checks the RIFF size against the file's.
            guard doubleWord(header, 4) == size - 8 else { throw .malformed("RIFF size is not the file's") }
            // FluidSynth reads three lists in this order, each right after the
            // one before: no pad byte after an odd length (SF3 fonts have an
            // odd sdta list), and nothing after the preset data read.
            var chunks: [Chunk] = [], presetData: [UInt8] = [], sampleDataBytes = 0, majorVersion = 0
            var at = 12
            for expected in ["INFO", "sdta", "pdta"] {
                guard at + 12 <= size else { throw .malformed("the \(expected) list cut off at byte \(at)") }
                let head = try Self.read(fd, path, at: at, count: 12)
                guard head.starts(with: Array("LIST".utf8)), Array(head[8..<12]) == Array(expected.utf8) else {
                    throw .malformed("no \(expected) list at byte \(at), where FluidSynth expects it")
                }
                let length = doubleWord(head, 4)
                guard length >= 4, length <= size - at - 8 else { throw .malformed("the \(expected) list runs past the end of the file") }
                switch expected {
                case "INFO": majorVersion = try Self.majorVersion(in: Self.read(fd, path, at: at + 12, count: length - 4))
                case "sdta" where length >= 12:
                    // The first sub-chunk is the sample data (smpl), as FluidSynth reads it.
                    let smpl = try Self.read(fd, path, at: at + 12, count: 8)
                    guard smpl.starts(with: Array("smpl".utf8)) else { throw .malformed("sdta without smpl") }
                    sampleDataBytes = doubleWord(smpl, 4)
                    guard sampleDataBytes <= length - 12 else { throw .malformed("the smpl chunk runs past its sdta list") }
                case "pdta": presetData = try Self.read(fd, path, at: at + 12, count: length - 4)
                default: break
                }
                chunks.append(Chunk(offset: at, length: 8 + length, isPresetData: expected == "pdta"))
                at += 8 + length
            }
            // Whatever follows (a chunk FluidSynth skips, a pad byte) stays, as bytes.
            if at < size { chunks.append(Chunk(offset: at, length: size - at, isPresetData: false)) }
            self.chunks = chunks
            hydra = try SoundFontHydra(presetData, sampleDataBytes: sampleDataBytes, majorVersion: majorVersion)
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(descriptor) }

    /// Whether the file still has the size it was read at: one cut short since would
    /// leave a view's samples unreadable, which FluidSynth's on-demand loader does not
    /// notice (the preset would load silent). Any thread.
    var keepsItsSize: Bool {
        var status = stat()
        return fstat(descriptor, &status) == 0 && Int(status.st_size) == size
    }

    /// The major version of the `ifil` sub-chunk of an INFO list's body
    /// (after its "INFO" id): 2 for SF2, 3 for SF3, as FluidSynth takes them;
    /// FluidSynth reads a font without one as SF2.
    private static func majorVersion(in info: [UInt8]) throws(SoundFontFileError) -> Int {
        var at = 0
        while at + 8 <= info.count {
            let length = doubleWord(info, at + 4)
            if info[at..<at + 4].elementsEqual("ifil".utf8) {
                guard length == 4, at + 12 <= info.count else { throw .malformed("an ifil of \(length) bytes") }
                let major = word(info, at + 8)
                guard major == 2 || major == 3 else { throw .malformed("SoundFont version \(major), not 2 or 3") }
                return major
            }
            at += 8 + length
        }
        return 2
    }

    /// A view of this file keeping the zones `selection` marks: the same
    /// bytes but for the `pdta` list, rebuilt (and the RIFF size). Loaded
    /// into a synth with `Synth.loadSoundFont(_:)`.
    public func view(keeping selection: SoundFontHydra.ZoneSelection) -> VirtualSoundFont {
        VirtualSoundFont(file: self, presetData: hydra.serialized(keeping: selection, forOnDemandPadding: SoundFontHydra.onDemandPadding))
    }

    /// Reads `count` bytes at `offset`, all or nothing; false at a read error or the file's end.
    func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int) -> Bool {
        var done = 0
        while done < count {
            let n = pread(descriptor, buffer + done, count - done, off_t(offset + done))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }

    private static func read(_ fd: Int32, _ path: String, at offset: Int, count: Int) throws(SoundFontFileError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw n < 0 ? .unreadable(path: path, reason: String(cString: strerror(errno))) : .malformed("the file ends early")
            }
            done += n
        }
        return bytes
    }
}
