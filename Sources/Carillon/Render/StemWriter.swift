import Engine
import SoundFile
#if canImport(Glibc)
import Glibc
#endif

/// Writes a render's stems: one audio file per mixer strip that sounds, in
/// `directory`, named by the strip (`ch01.wav`, `osc.wav`, `track1-drums.wav`).
///
/// A strip's file is opened when the strip first sounds, with the silence
/// before written first, so every stem is as long as the mixdown and a strip
/// that never sounds writes no file. Each file is written under a temporary
/// name and renamed by `finish`; `discard` (a failure, an interruption)
/// leaves none. Not on the render thread: `RenderJob` calls it between blocks.
final class StemWriter {
    let directory: String
    private let strips: [MixerStrip]
    private let format: AudioFileFormat
    private let encoding: SampleEncoding?
    private let sampleRate: Int
    private var writers: [AudioFileWriter?]
    /// Frames written so far (to every open stem; what a stem opened now starts with).
    private var frames = 0
    private let interleaved: UnsafeMutableBufferPointer<Float>
    private let zeros: UnsafeMutableBufferPointer<Float>
    private let blockFrames: Int

    init(directory: String, strips: [MixerStrip], format: AudioFileFormat, encoding: SampleEncoding?,
         sampleRate: Int, blockFrames: Int) {
        self.directory = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        self.strips = strips
        self.format = format
        self.encoding = encoding
        self.sampleRate = sampleRate
        self.blockFrames = blockFrames
        writers = Array(repeating: nil, count: strips.count)
        interleaved = .allocate(capacity: 2 * blockFrames)
        zeros = .allocate(capacity: 2 * blockFrames)
        zeros.initialize(repeating: 0)
    }

    deinit {
        discard()
        interleaved.deallocate(); zeros.deallocate()
    }

    /// The path of strip `s`'s stem.
    func path(of s: Int) -> String { "\(directory)/\(strips[s].fileStem).\(format.fileExtension)" }

    /// The paths written by `finish` (the strips that sounded).
    var writtenPaths: [String] { writers.indices.filter { writers[$0] != nil }.map(path(of:)) }

    /// Appends the renderer's last block (`frames` frames) to each strip's stem.
    /// The renderer's last block from frame `skipping` on (`frames` of them).
    func add(from renderer: Renderer, skipping: Int = 0, frames: Int) throws(RenderJob.Failure) {
        for s in writers.indices {
            if let stem = renderer.stem(s) {
                let writer = try open(s)
                for i in 0..<frames {
                    interleaved[2 * i] = stem.left[skipping + i]
                    interleaved[2 * i + 1] = stem.right[skipping + i]
                }
                try write(writer, UnsafeBufferPointer(interleaved), frames: frames)
            } else if let writer = writers[s] {
                try write(writer, UnsafeBufferPointer(zeros), frames: frames)
            }
        }
        self.frames += frames
    }

    /// Renames every stem onto its name. On a failure the stems not yet
    /// renamed are discarded and the error thrown.
    func finish() throws(RenderJob.Failure) {
        for s in writers.indices {
            guard let writer = writers[s] else { continue }
            do throws(SoundFileError) { try writer.finish() } catch {
                for later in writers[(s + 1)...] { later?.discard() }
                throw .audioFile(error)
            }
        }
    }

    /// Removes the stems `finish` wrote (the mixdown failed after them).
    func removeFinished() {
        for path in writtenPaths { unlink(path) }
    }

    /// Abandons every stem not yet finished. Safe to call twice.
    func discard() {
        for case let writer? in writers { writer.discard() }
    }

    private func open(_ s: Int) throws(RenderJob.Failure) -> AudioFileWriter {
        if let writer = writers[s] { return writer }
        let writer: AudioFileWriter
        do throws(SoundFileError) {
            writer = try AudioFileWriter(path: path(of: s), format: format, encoding: encoding,
                                         sampleRate: sampleRate, channels: 2)
        } catch { throw .audioFile(error) }
        writers[s] = writer
        try writeZeros(writer, frames: frames)
        return writer
    }

    private func writeZeros(_ writer: AudioFileWriter, frames: Int) throws(RenderJob.Failure) {
        var left = frames
        while left > 0 {
            let n = min(left, blockFrames)
            try write(writer, UnsafeBufferPointer(zeros), frames: n)
            left -= n
        }
    }

    private func write(_ writer: AudioFileWriter, _ samples: UnsafeBufferPointer<Float>, frames: Int) throws(RenderJob.Failure) {
        do throws(SoundFileError) { try writer.write(samples, frames: frames) } catch { throw .audioFile(error) }
    }
}
