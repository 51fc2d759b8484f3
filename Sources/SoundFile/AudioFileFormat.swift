import CSndFile

/// A container that Carillon writes.
public enum AudioFileFormat: String, CaseIterable, Sendable {
    case wav, flac, ogg, opus, mp3, aiff, caf, w64, rf64
    /// Headerless samples, little-endian and interleaved: the format for standard output.
    case raw

    /// The format a file name's extension asks for, nil for any other extension.
    public init?(pathExtensionOf path: String) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        switch name[name.index(after: dot)...].lowercased() {
        case "wav", "wave": self = .wav
        case "flac": self = .flac
        case "ogg", "oga": self = .ogg
        case "opus": self = .opus
        case "mp3": self = .mp3
        case "aif", "aiff": self = .aiff
        case "caf": self = .caf
        case "w64": self = .w64
        case "rf64": self = .rf64
        case "raw", "pcm": self = .raw
        default: return nil
        }
    }

    public var fileExtension: String { rawValue }

    /// The sample encodings this container can hold; the first is the default.
    public var encodings: [SampleEncoding] {
        switch self {
        case .wav, .aiff, .caf, .w64, .rf64, .raw: [.pcm16, .pcm24, .float32]
        case .flac: [.pcm16, .pcm24]
        case .ogg: [.vorbis]
        case .opus: [.opus]
        case .mp3: [.mp3]
        }
    }

    /// Sample rates the codec accepts, nil for any: Opus runs at five fixed rates,
    /// MP3 (MPEG-1/2/2.5 layer III, LAME through libsndfile) at nine up to 48 kHz.
    public var sampleRates: [Int]? {
        switch self {
        case .opus: [8_000, 12_000, 16_000, 24_000, 48_000]
        case .mp3: [8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000]
        default: nil
        }
    }

    /// The rate to write at when none is asked for: `preferred` when the codec
    /// takes it, else the highest it takes (Opus: 48000).
    public func rate(preferring preferred: Int) -> Int {
        guard let rates = sampleRates, !rates.contains(preferred) else { return preferred }
        return rates.max() ?? preferred
    }

    /// Whether the libsndfile loaded at run time can write this format
    /// (MP3 needs a libsndfile built with LAME, Opus one built with libopus).
    public var isAvailable: Bool {
        var info = SF_INFO()
        info.samplerate = Int32(sampleRates?.last ?? 48_000)
        info.channels = 2
        info.format = formatWord(encodings[0])
        return sf_format_check(&info) != 0
    }

    /// The libsndfile format word for this container and encoding.
    func formatWord(_ encoding: SampleEncoding) -> Int32 {
        // Float WAV stays plain WAV (up to 4 GB; .rf64 or .w64 beyond): libsndfile
        // cannot leave out the RF64 writer's PEAK chunk, whose time of writing would
        // make two renders of the same piece differ in bytes.
        let major = self == .wav && encoding == .float32 ? Int32(SF_FORMAT_WAV) : majorFormat
        var word = major | encoding.subtype
        // Raw PCM has no header to say its byte order: fix it, whatever the machine.
        if self == .raw { word |= Int32(SF_ENDIAN_LITTLE) }
        return word
    }

    var majorFormat: Int32 {
        switch self {
        // WAV is written as RF64 that downgrades itself to plain WAV on close when
        // under 4 GB: small files stay ordinary WAV, long ones don't wrap the 32-bit sizes.
        case .wav, .rf64: Int32(SF_FORMAT_RF64)
        case .flac: Int32(SF_FORMAT_FLAC)
        case .ogg, .opus: Int32(SF_FORMAT_OGG)
        case .mp3: Int32(SF_FORMAT_MPEG)
        case .aiff: Int32(SF_FORMAT_AIFF)
        case .caf: Int32(SF_FORMAT_CAF)
        case .w64: Int32(SF_FORMAT_W64)
        case .raw: Int32(SF_FORMAT_RAW)
        }
    }

    /// The format a libsndfile format word read from a file names.
    init?(formatWord: Int32) {
        switch (formatWord & Int32(SF_FORMAT_TYPEMASK), formatWord & Int32(SF_FORMAT_SUBMASK)) {
        // WAV written by Carillon is WAVE_FORMAT_EXTENSIBLE (the downgraded RF64): still WAV.
        case (Int32(SF_FORMAT_WAV), _), (Int32(SF_FORMAT_WAVEX), _): self = .wav
        case (Int32(SF_FORMAT_RF64), _): self = .rf64
        case (Int32(SF_FORMAT_FLAC), _): self = .flac
        case (Int32(SF_FORMAT_OGG), Int32(SF_FORMAT_OPUS)): self = .opus
        case (Int32(SF_FORMAT_OGG), _): self = .ogg
        case (Int32(SF_FORMAT_MPEG), _): self = .mp3
        case (Int32(SF_FORMAT_AIFF), _): self = .aiff
        case (Int32(SF_FORMAT_CAF), _): self = .caf
        case (Int32(SF_FORMAT_W64), _): self = .w64
        case (Int32(SF_FORMAT_RAW), _): self = .raw
        default: return nil
        }
    }
}

/// How samples are stored in the file.
public enum SampleEncoding: String, Sendable, CustomStringConvertible {
    case pcm16, pcm24, float32, vorbis, opus, mp3

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
        case .opus: "Opus"
        case .mp3: "MP3"
        }
    }

    var subtype: Int32 {
        switch self {
        case .pcm16: Int32(SF_FORMAT_PCM_16)
        case .pcm24: Int32(SF_FORMAT_PCM_24)
        case .float32: Int32(SF_FORMAT_FLOAT)
        case .vorbis: Int32(SF_FORMAT_VORBIS)
        case .opus: Int32(SF_FORMAT_OPUS)
        case .mp3: Int32(SF_FORMAT_MPEG_LAYER_III)
        }
    }

    init?(subtype: Int32) {
        switch subtype {
        case Int32(SF_FORMAT_PCM_16): self = .pcm16
        case Int32(SF_FORMAT_PCM_24): self = .pcm24
        case Int32(SF_FORMAT_FLOAT): self = .float32
        case Int32(SF_FORMAT_VORBIS): self = .vorbis
        case Int32(SF_FORMAT_OPUS): self = .opus
        case Int32(SF_FORMAT_MPEG_LAYER_III): self = .mp3
        default: return nil
        }
    }
}

/// What went wrong reading or writing an audio file.
public enum SoundFileError: Error, Equatable, Sendable, CustomStringConvertible {
    case unsupported(format: AudioFileFormat, encoding: SampleEncoding)
    /// The format exists but the libsndfile loaded was built without its codec.
    case notInThisBuild(format: AudioFileFormat)
    case unsupportedRate(format: AudioFileFormat, rate: Int)
    /// Only headerless formats can be streamed to a pipe.
    case notStreamable(format: AudioFileFormat)
    case cannotCreate(path: String, reason: String)
    case cannotOpen(path: String, reason: String)
    case writeFailed(path: String, reason: String)
    case cannotFinish(path: String, reason: String)
    case readFailed(path: String, reason: String)
    /// Tracks play mono or stereo files.
    case tooManyChannels(path: String, channels: Int)

    public var description: String {
        switch self {
        case .unsupported(let format, let encoding): "\(format.rawValue.uppercased()) cannot hold \(encoding) samples"
        case .notInThisBuild(let format): "this system's libsndfile was built without \(format.rawValue.uppercased()) support"
        case .unsupportedRate(let format, let rate):
            "\(format.rawValue.uppercased()) cannot be written at \(rate) Hz (use "
                + (format.sampleRates ?? []).map(String.init).joined(separator: ", ") + ")"
        case .notStreamable(let format): "\(format.rawValue.uppercased()) cannot be written to standard output (use raw)"
        case .cannotCreate(let path, let reason): "cannot create \(path): \(reason)"
        case .cannotOpen(let path, let reason): "cannot open \(path): \(reason)"
        case .writeFailed(let path, let reason): "cannot write \(path): \(reason)"
        case .cannotFinish(let path, let reason): "cannot finish \(path): \(reason)"
        case .readFailed(let path, let reason): "cannot read \(path): \(reason)"
        case .tooManyChannels(let path, let channels):
            "\(path) has \(channels) channels; tracks play mono or stereo files (mix it down first, e.g. `ffmpeg -i IN -ac 2 OUT.wav`)"
        }
    }
}
