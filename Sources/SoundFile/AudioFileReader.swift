import CSndFile

/// Reads a whole audio file as interleaved floats (for tests and tools).
public struct AudioFileReader: Sendable {
    public let sampleRate: Int
    public let channels: Int
    public let frames: Int
    /// The raw libsndfile format word (major | subtype).
    public let formatCode: Int32
    public let samples: [Float]

    public init(path: String) throws(SoundFileError) {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw .cannotOpen(path: path, reason: String(cString: sf_strerror(nil)))
        }
        defer { sf_close(file) }
        sampleRate = Int(info.samplerate); channels = Int(info.channels); formatCode = info.format
        var samples = [Float](repeating: 0, count: Int(info.frames) * Int(info.channels))
        let read = samples.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, info.frames) }
        frames = Int(read)
        samples.removeLast(samples.count - frames * channels)
        self.samples = samples
    }

    public var format: AudioFileFormat? { AudioFileFormat(formatWord: formatCode) }

    public var encoding: SampleEncoding? { SampleEncoding(subtype: formatCode & Int32(SF_FORMAT_SUBMASK)) }

    public var duration: Double { Double(frames) / Double(sampleRate) }
}
