import CSndFile
#if canImport(Glibc)
import Glibc
#endif

/// Reads an audio file (WAV, FLAC, Ogg Vorbis, MP3, anything libsndfile
/// reads) in chunks, as stereo: a mono file is copied to both sides (played
/// centred), a file of more than two channels is refused. For a streaming
/// reader such as an audio-file track's decoder; `AudioFileReader` reads a
/// whole file at once.
///
/// Not thread-safe: one thread at a time (a decoder thread); never the render thread.
public final class AudioFileStream {
    public let path: String
    public let sampleRate: Int
    /// The file's channels (1 or 2); `read` always gives stereo.
    public let channels: Int
    /// Frames in the file.
    public let frames: Int
    private let file: OpaquePointer
    private var monoBuffer: [Float] = []

    public init(path: String) throws(SoundFileError) {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw .cannotOpen(path: path, reason: Self.plainReason(String(cString: sf_strerror(nil))))
        }
        guard (1...2).contains(info.channels) else {
            sf_close(file)
            throw .tooManyChannels(path: path, channels: Int(info.channels))
        }
        guard info.samplerate > 0, info.frames > 0 else {
            sf_close(file)
            throw .cannotOpen(path: path, reason: "no audio in the file")
        }
        self.file = file
        self.path = path
        sampleRate = Int(info.samplerate)
        channels = Int(info.channels)
        frames = Int(info.frames)
    }

    deinit { sf_close(file) }

    public var duration: Double { Double(frames) / Double(sampleRate) }

    /// Reads up to `frames` frames as interleaved stereo into `into` (at least
    /// `2 × frames` floats); returns how many were read (0 at the end).
    public func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) throws(SoundFileError) -> Int {
        guard frames > 0 else { return 0 }
        let read: Int
        if channels == 2 {
            read = Int(sf_readf_float(file, buffer, sf_count_t(frames)))
        } else {
            if monoBuffer.count < frames { monoBuffer = [Float](repeating: 0, count: frames) }
            read = monoBuffer.withUnsafeMutableBufferPointer { Int(sf_readf_float(file, $0.baseAddress, sf_count_t(frames))) }
            for i in 0..<read { buffer[2 * i] = monoBuffer[i]; buffer[2 * i + 1] = monoBuffer[i] }
        }
        if read < frames {
            let code = sf_error(file)
            if code != 0 { throw .readFailed(path: path, reason: Self.plainReason(String(cString: sf_error_number(code)))) }
        }
        return read
    }

    /// Moves the read position to frame `frame` (clamped to the file).
    public func seek(toFrame frame: Int) throws(SoundFileError) {
        let target = min(max(frame, 0), frames)
        guard sf_seek(file, sf_count_t(target), SEEK_SET) == sf_count_t(target) else {
            throw .readFailed(path: path, reason: "cannot seek to frame \(target): " + Self.plainReason(String(cString: sf_strerror(file))))
        }
    }

    static func plainReason(_ reason: String) -> String {
        var text = reason
        let prefix = "System error : "
        if text.hasPrefix(prefix) { text = String(text.dropFirst(prefix.count)) }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
