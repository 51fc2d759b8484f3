import CSndFile

/// A container that Carillon writes.
public enum AudioFileFormat: String, CaseIterable, Sendable {
    case wav, flac, ogg

    /// The format a file name's extension asks for, nil for any other extension.
    public init?(pathExtensionOf path: String) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        switch name[name.index(after: dot)...].lowercased() {
        case "wav", "wave": self = .wav
        case "flac": self = .flac
        case "ogg", "oga": self = .ogg
        default: return nil
        }
    }

    public var fileExtension: String { rawValue }

    /// The sample encodings this container can hold; the first is the default.
    public var encodings: [SampleEncoding] {
        switch self {
        case .wav: [.pcm16, .pcm24, .float32]
        case .flac: [.pcm16, .pcm24]
        case .ogg: [.vorbis]
        }
    }

    var majorFormat: Int32 {
        switch self {
        case .wav: Int32(SF_FORMAT_WAV)
        case .flac: Int32(SF_FORMAT_FLAC)
        case .ogg: Int32(SF_FORMAT_OGG)
        }
    }
}

/// How samples are stored in the file.
public enum SampleEncoding: String, Sendable, CustomStringConvertible {
    case pcm16, pcm24, float32, vorbis

    /// The encoding for a `--bits` value: 16, 24 or 32 (float).
    public init?(bits: Int) {
        switch bits {
        case 16: self = .pcm16
        case 24: self = .pcm24
        case 32: self = .float32
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .pcm16: "16-bit"
        case .pcm24: "24-bit"
        case .float32: "32-bit float"
        case .vorbis: "Vorbis"
        }
    }

    var subtype: Int32 {
        switch self {
        case .pcm16: Int32(SF_FORMAT_PCM_16)
        case .pcm24: Int32(SF_FORMAT_PCM_24)
        case .float32: Int32(SF_FORMAT_FLOAT)
        case .vorbis: Int32(SF_FORMAT_VORBIS)
        }
    }
}

/// What went wrong reading or writing an audio file.
public enum SoundFileError: Error, Equatable, Sendable, CustomStringConvertible {
    case unsupported(format: AudioFileFormat, encoding: SampleEncoding)
    case cannotCreate(path: String, reason: String)
    case cannotOpen(path: String, reason: String)
    case writeFailed(path: String, reason: String)
    case cannotFinish(path: String, reason: String)

    public var description: String {
        switch self {
        case .unsupported(let format, let encoding): "\(format.rawValue.uppercased()) cannot hold \(encoding) samples"
        case .cannotCreate(let path, let reason): "cannot create \(path): \(reason)"
        case .cannotOpen(let path, let reason): "cannot open \(path): \(reason)"
        case .writeFailed(let path, let reason): "cannot write \(path): \(reason)"
        case .cannotFinish(let path, let reason): "cannot finish \(path): \(reason)"
        }
    }
}
