import Analysis
import Engine
import SoundFile
#if canImport(Glibc)
import Glibc
#endif

/// Writes a render's stems: one audio file per mixer strip that sounds, in
/// `directory`, named by the strip (`ch01.wav`, `osc.wav`, `track1-drums.wav`),
/// or, with `names` (`--stems-by track|program`), one per name: the sum of
/// the strips given that name (`prog000-acoustic-grand-piano.wav`, `drums.wav`).
///
/// A stem's file is opened when the strip first sounds, with the silence
/// before written first, so every stem is as long as the mixdown and a strip
/// that never sounds writes no file. Each file is written under a temporary
/// name and renamed by `finish`; `discard` (a failure, an interruption)
/// leaves none. Not on the render thread: `RenderJob` calls it between blocks.
final class StemWriter {
    let directory: String
    /// Where the files are written until the output set moves them into `directory` (`OutputSet`).
    let writingDirectory: String
    /// Each stem's name and the strips (renderer's indices) it sums.
    private let stems: [(name: String, strips: [Int])]
    private let format: AudioFileFormat
    private let encoding: SampleEncoding?
    private let sampleRate: Int
    private var writers: [AudioFileWriter?]
    /// Frames written so far (to every open stem; what a stem opened now starts with).
    private var frames = 0
    private let interleaved: UnsafeMutableBufferPointer<Float>
    private let zeros: UnsafeMutableBufferPointer<Float>
    private let blockFrames: Int
    /// Per stem: its highest sample magnitude, and its loudness meter (with `measures`).
    private(set) var peaks: [Float]
    private var meters: [LoudnessMeter?]
    private let measures: Bool
    /// The files are written directly under their names (in a staging folder), not through temporaries.
    private let inPlace: Bool

    /// `fileStems`: each strip's own stem (`Meters.fileStems`); `names`: the stem of
    /// each strip (by the renderer's strip index) that is not its own. `measures`: each stem's
    /// integrated loudness is measured (`loudness(of:)`).
    /// `staging`: the folder the files are written into, moved onto `directory` later (nil: `directory` itself).
    init(directory: String, staging: String? = nil, fileStems: [String], names: [Int: String] = [:], format: AudioFileFormat,
         encoding: SampleEncoding?, sampleRate: Int, blockFrames: Int, measures: Bool = false) {
        self.directory = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        // A staging folder is no final name: its files are written in place (the set renames them once).
        inPlace = staging != nil
        let staging = staging ?? directory
        writingDirectory = staging.hasSuffix("/") && staging.count > 1 ? String(staging.dropLast()) : staging
        var stems: [(name: String, strips: [Int])] = []
        for (s, fileStem) in fileStems.enumerated() {
            let name = names[s] ?? fileStem
            if let i = stems.firstIndex(where: { $0.name == name }) { stems[i].strips.append(s) } else { stems.append((name, [s])) }
        }
        self.stems = stems
        self.measures = measures
        peaks = Array(repeating: 0, count: stems.count)
        meters = Array(repeating: nil, count: stems.count)
        self.format = format
        self.encoding = encoding
        self.sampleRate = sampleRate
        self.blockFrames = blockFrames
        writers = Array(repeating: nil, count: stems.count)
        interleaved = .allocate(capacity: 2 * blockFrames)
        zeros = .allocate(capacity: 2 * blockFrames)
        zeros.initialize(repeating: 0)
    }

    deinit {
        discard()
        interleaved.deallocate(); zeros.deallocate()
    }

    /// The stems' names, in order (strip order of their first strip).
    var names: [String] { stems.map(\.name) }

    /// The path of stem `s`'s file.
    func path(of s: Int) -> String { "\(directory)/\(stems[s].name).\(format.fileExtension)" }

    /// Where stem `s`'s file is written (in `writingDirectory`).
    func writingPath(of s: Int) -> String { "\(writingDirectory)/\(stems[s].name).\(format.fileExtension)" }

    /// Whether stem `s` sounded (its file is written by `finish`).
    func sounded(_ s: Int) -> Bool { writers[s] != nil }

    /// The paths written by `finish` (the stems that sounded).
    var writtenPaths: [String] { writers.indices.filter { writers[$0] != nil }.map(path(of:)) }

    /// Stem `s`'s integrated loudness in LUFS (−∞ for silence; nil: not measured or not sounded).
    func loudness(of s: Int) -> Double? {
        guard let meter = meters[s] else { return nil }
        return try? meter.integratedLoudness()
    }

    /// Appends the renderer's last block from frame `skipping` on (`frames`
    /// of them) to each stem: the sum of its strips that sounded.
    func add(from renderer: Renderer, skipping: Int = 0, frames: Int) throws(RenderJob.Failure) {
        for s in writers.indices {
            var sounding = false
            for strip in stems[s].strips {
                guard let stem = renderer.stem(strip) else { continue }
                if !sounding {
                    for i in 0..<frames {
                        interleaved[2 * i] = stem.left[skipping + i]
                        interleaved[2 * i + 1] = stem.right[skipping + i]
                    }
                } else {
                    for i in 0..<frames {
                        interleaved[2 * i] += stem.left[skipping + i]
                        interleaved[2 * i + 1] += stem.right[skipping + i]
                    }
                }
                sounding = true
            }
            if sounding {
                let writer = try open(s)
                var peak = peaks[s]
                for i in 0..<2 * frames { peak = max(peak, abs(interleaved[i])) }
                peaks[s] = peak
                try write(writer, UnsafeBufferPointer(interleaved), frames: frames)
                if let meter = meters[s] {
                    do throws(LoudnessError) { try meter.add(UnsafeBufferPointer(interleaved), frames: frames) } catch { throw .loudness(error) }
                }
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
        for s in writers.indices where writers[s] != nil { unlink(writingPath(of: s)) }
    }

    /// Abandons every stem not yet finished. Safe to call twice.
    func discard() {
        for case let writer? in writers { writer.discard() }
    }

    private func open(_ s: Int) throws(RenderJob.Failure) -> AudioFileWriter {
        if let writer = writers[s] { return writer }
        let writer: AudioFileWriter
        do throws(SoundFileError) {
            writer = try AudioFileWriter(path: writingPath(of: s), format: format, encoding: encoding,
                                         sampleRate: sampleRate, channels: 2, inPlace: inPlace)
        } catch { throw .audioFile(error) }
        writers[s] = writer
        if measures {
            do throws(LoudnessError) { meters[s] = try LoudnessMeter(channels: 2, sampleRate: sampleRate, truePeak: false) }
            catch { throw .loudness(error) }
        }
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
