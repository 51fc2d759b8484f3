import CSndFile
#if canImport(Glibc)
import Glibc
#endif

/// Writes interleaved float frames to an audio file, safely: samples go to a
/// hidden temporary file beside the target, which `finish()` renames onto the
/// target only once complete. Whatever stops the writer earlier (an error,
/// `discard()`, or the writer being released unfinished) removes the
/// temporary file, so no truncated file ever appears under the target's name.
///
/// `inPlace`: the target is itself a name nobody reads as finished (an
/// `OutputSet`'s staged name, which the set renames into place): written
/// directly, no temporary file, nothing renamed by `finish()`; abandoned, it
/// is removed.
///
/// The path `-` is standard output: raw samples only (a pipe cannot take a
/// header written last), straight to the descriptor, no temporary file.
///
/// Not for the render thread: `write` may block on the disk.
public final class AudioFileWriter {
    /// The path that means standard output.
    public static let standardOutput = "-"

    public let path: String
    public let temporaryPath: String
    public let format: AudioFileFormat
    public let encoding: SampleEncoding
    public let sampleRate: Int
    public let channels: Int
    public private(set) var framesWritten = 0
    private var file: OpaquePointer?
    private var finished = false

    public init(path: String, format: AudioFileFormat, encoding: SampleEncoding? = nil,
                sampleRate: Int, channels: Int = 2, inPlace: Bool = false) throws(SoundFileError) {
        let encoding = encoding ?? format.encodings[0]
        guard format.encodings.contains(encoding) else { throw .unsupported(format: format, encoding: encoding) }
        self.path = path; self.format = format; self.encoding = encoding
        self.sampleRate = sampleRate; self.channels = channels
        let toStandardOutput = path == Self.standardOutput
        guard !toStandardOutput || format == .raw else { throw .notStreamable(format: format) }
        temporaryPath = toStandardOutput || inPlace ? path : Self.temporaryPath(beside: path)
        guard format.isAvailable else { throw .notInThisBuild(format: format) }
        if let rates = format.sampleRates, !rates.contains(sampleRate) {
            throw .unsupportedRate(format: format, rate: sampleRate)
        }

        var info = SF_INFO()
        info.samplerate = Int32(sampleRate)
        info.channels = Int32(channels)
        info.format = format.formatWord(encoding)
        guard sf_format_check(&info) != 0 else { throw .unsupported(format: format, encoding: encoding) }
        if toStandardOutput {
            // The audio takes standard output for itself: it writes through a copy of
            // the descriptor, and descriptor 1 then points at standard error, so
            // nothing else printed later (an LV2 plugin's own printf) lands in the stream.
            fflush(nil)
            let audio = dup(STDOUT_FILENO)
            guard audio >= 0, dup2(STDERR_FILENO, STDOUT_FILENO) >= 0 else {
                throw .cannotCreate(path: "standard output", reason: String(cString: strerror(errno)))
            }
            guard let file = sf_open_fd(audio, Int32(SFM_WRITE), &info, Int32(SF_TRUE)) else {
                close(audio)
                throw .cannotCreate(path: "standard output", reason: String(cString: sf_strerror(nil)))
            }
            self.file = file
            finished = true   // nothing to rename or remove
            _ = sf_command(file, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
            return
        }
        guard let file = sf_open(temporaryPath, Int32(SFM_WRITE), &info) else {
            let reason = String(cString: sf_strerror(nil))
            unlink(temporaryPath)
            throw .cannotCreate(path: path, reason: Self.plainReason(reason, directoryOf: path))
        }
        self.file = file
        // Floats beyond ±1 clip to full scale instead of wrapping around.
        _ = sf_command(file, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        // No PEAK chunk: it carries the time of writing, so the same render would
        // not give the same bytes twice (and it is only a cache of the peak).
        _ = sf_command(file, Int32(SFC_SET_ADD_PEAK_CHUNK), nil, Int32(SF_FALSE))
        if format == .wav && encoding != .float32 {
            // Plain WAV on close unless past 4 GB (see AudioFileFormat.majorFormat).
            _ = sf_command(file, Int32(SFC_RF64_AUTO_DOWNGRADE), nil, Int32(SF_TRUE))
        }
    }

    deinit { discard() }

    /// Appends `frames` interleaved frames.
    public func write(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(SoundFileError) {
        guard let file else { throw .writeFailed(path: path, reason: "writer already closed") }
        precondition(samples.count >= frames * channels)
        let written = sf_writef_float(file, samples.baseAddress, sf_count_t(frames))
        guard written == frames else {
            let reason = String(cString: sf_strerror(file))
            discard()
            throw .writeFailed(path: path, reason: reason)
        }
        framesWritten += frames
    }

    /// Closes the temporary file and renames it onto the target (in place: closes the target).
    public func finish() throws(SoundFileError) {
        guard let file else { throw .cannotFinish(path: path, reason: "writer already closed") }
        self.file = nil
        let closed = sf_close(file)
        guard closed == 0 else {
            unlink(temporaryPath)
            throw .cannotFinish(path: path, reason: String(cString: sf_error_number(closed)))
        }
        if path == Self.standardOutput { return }
        // mkstemp-like files are 0600; give the output the usual 0666 & ~umask.
        let mask = umask(0); umask(mask)
        chmod(temporaryPath, 0o666 & ~mask)
        guard temporaryPath == path || rename(temporaryPath, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw .cannotFinish(path: path, reason: reason)
        }
        finished = true
    }

    /// Abandons the file: closes and removes the temporary file. Safe to call twice.
    public func discard() {
        if let file { sf_close(file); self.file = nil }
        if !finished { unlink(temporaryPath) }
    }

    static func temporaryPath(beside path: String) -> String {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let random = UInt32.random(in: 0...UInt32.max)
        return "\(directory).\(name).\(getpid())-\(String(random, radix: 16)).tmp"
    }

    private static func plainReason(_ reason: String, directoryOf path: String) -> String {
        // libsndfile says "System error : Permission denied." and the like.
        var text = reason
        let prefix = "System error : "
        if text.hasPrefix(prefix) { text = String(text.dropFirst(prefix.count)) }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
