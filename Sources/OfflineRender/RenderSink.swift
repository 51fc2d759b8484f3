import Analysis
import SoundFile
import Glibc

/// Where a render's interleaved stereo blocks go: an audio file, memory, a
/// stream, or a scratch file measured on the way (loudness normalisation).
public protocol RenderSink: AnyObject {
    func write(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(RenderJob.Failure)
    /// Completes the output (an audio file appears under its name only now).
    func finish() throws(RenderJob.Failure)
    /// Abandons the output, leaving nothing under its name. Safe to call twice.
    func discard()
}

/// An `AudioFileWriter` as a render sink.
public final class AudioFileSink: RenderSink {
    public let writer: AudioFileWriter
    public init(_ writer: AudioFileWriter) { self.writer = writer }
    public func write(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(RenderJob.Failure) {
        do throws(SoundFileError) { try writer.write(samples, frames: frames) } catch { throw .audioFile(error) }
    }
    public func finish() throws(RenderJob.Failure) {
        do throws(SoundFileError) { try writer.finish() } catch { throw .audioFile(error) }
    }
    public func discard() { writer.discard() }
}

/// Measures the blocks on their way to another sink.
final class MeasuringSink: RenderSink {
    let inner: any RenderSink
    let meter: LoudnessMeter
    init(_ inner: any RenderSink, meter: LoudnessMeter) { self.inner = inner; self.meter = meter }
    func write(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(RenderJob.Failure) {
        do throws(LoudnessError) { try meter.add(samples, frames: frames) } catch { throw .loudness(error) }
        try inner.write(samples, frames: frames)
    }
    func finish() throws(RenderJob.Failure) { try inner.finish() }
    func discard() { inner.discard() }
}

/// Interleaved stereo floats in a hidden raw file beside the output, read
/// back by the normalising pass and then removed.
final class ScratchAudio: RenderSink {
    let path: String
    private var fd: Int32
    private var removed = false

    init(beside output: String) throws(RenderJob.Failure) {
        let slash = output.lastIndex(of: "/")
        let folder = slash.map { String(output[...$0]) } ?? ""
        let name = slash.map { String(output[output.index(after: $0)...]) } ?? output
        path = "\(folder).\(name).\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 16)).f32"
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .scratchFile(path: path, reason: errnoText()) }
    }

    deinit { discard() }

    func write(_ samples: UnsafeBufferPointer<Float>, frames: Int) throws(RenderJob.Failure) {
        let bytes = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(samples)[..<(2 * frames * 4)])
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 { if errno == EINTR { continue }; throw .scratchFile(path: path, reason: errnoText()) }
            done += n
        }
    }

    func finish() throws(RenderJob.Failure) {}

    /// Reads up to `block.count / 2` frames from frame `frameOffset`; 0 at the end.
    func read(into block: UnsafeMutableBufferPointer<Float>, frameOffset: Int) throws(RenderJob.Failure) -> Int {
        let want = block.count / 2 * 8
        var got = 0
        while got < want {
            let n = pread(fd, UnsafeMutableRawPointer(block.baseAddress!) + got, want - got, off_t(frameOffset * 8 + got))
            if n < 0 { if errno == EINTR { continue }; throw .scratchFile(path: path, reason: errnoText()) }
            if n == 0 { break }
            got += n
        }
        return got / 8
    }

    func discard() {
        guard !removed else { return }
        removed = true
        close(fd)
        unlink(path)
    }
}
