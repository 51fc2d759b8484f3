import Analysis
import SoundFile
import Threads
import Glibc
#if canImport(Glibc)
#endif

/// What a render measured of its loudness (libebur128).
public struct LoudnessReport: Sendable, Equatable {
    /// Integrated loudness as rendered, LUFS (−∞ for silence).
    public var loudness: Double
    /// With normalisation: the true peak as rendered (dBTP), the gain applied
    /// (dB), and the integrated loudness and true peak of the file written.
    public var truePeak: Double?
    public var gain: Double?
    public var normalizedLoudness: Double?
    public var normalizedTruePeak: Double?
}

extension RenderJob {
    public enum Loudness: Sendable, Equatable {
        /// Measure nothing.
        case off
        /// Measure the integrated loudness of what is written.
        case measure
        /// Bring the file to a target with one gain.
        case normalize(LoudnessTarget)

        var normalizes: Bool { if case .normalize = self { true } else { false } }
    }

    /// Renders `input` into `output` as `render(input:output:…)` does, and
    /// measures or normalises its loudness.
    ///
    /// Normalising needs the loudness of the whole piece before the first
    /// sample of the output can be scaled. The synth is the expensive part,
    /// so it runs once: its float blocks go to a raw scratch file beside the
    /// output (no 4 GiB WAV limit, no clipping) while libebur128 measures
    /// them; a second, cheap pass reads the scratch file back, applies the
    /// gain, writes the output (its own temporary file, renamed when
    /// complete), measures it again for the report, and removes the scratch
    /// file. Interrupted or failed, neither file is left behind.
    public func render(
        input: String, output: String, format: AudioFileFormat, encoding: SampleEncoding?, loudness mode: Loudness,
        stemsDirectory: String? = nil, stemsStaging: String? = nil, augmentation: Augmentation.Draw? = nil,
        cancel: CancellationFlag? = nil, progress: ((Progress) -> Void)? = nil
    ) throws(Failure) -> (Summary, LoudnessReport?) {
        // Normalised, the mixdown is scaled after the render: the stems would no longer add up to it.
        precondition(stemsDirectory == nil || !mode.normalizes, "stems are not normalised")
        let stems = stemsDirectory.map { StemTarget(directory: $0, format: format, encoding: encoding, staging: stemsStaging) }
        let rate = options.sampleRate
        func meter(truePeak: Bool) throws(Failure) -> LoudnessMeter {
            do throws(LoudnessError) { return try LoudnessMeter(channels: 2, sampleRate: rate, truePeak: truePeak) } catch { throw .loudness(error) }
        }
        func openOutput() throws(Failure) -> AudioFileWriter {
            do throws(SoundFileError) {
                return try AudioFileWriter(path: output, format: format, encoding: encoding, sampleRate: rate, channels: 2)
            } catch { throw .audioFile(error) }
        }
        func integrated(_ m: LoudnessMeter) throws(Failure) -> Double {
            do throws(LoudnessError) { return try m.integratedLoudness() } catch { throw .loudness(error) }
        }
        func truePeak(_ m: LoudnessMeter) throws(Failure) -> Double {
            do throws(LoudnessError) { return try m.truePeak() } catch { throw .loudness(error) }
        }

        switch mode {
        case .off:
            return (try render(input: input, output: output, format: format, encoding: encoding,
                               stemsDirectory: stemsDirectory, stemsStaging: stemsStaging, augmentation: augmentation, cancel: cancel, progress: progress), nil)
        case .measure:
            // A sink, and so a meter, per attempt: a piece may be rendered again (see `render`).
            var before: LoudnessMeter? = nil
            let summary = try render(input: input, output: output, stems: stems, augmentation: augmentation, cancel: cancel, progress: progress) { () throws(Failure) -> any RenderSink in
                let m = try meter(truePeak: false)
                before = m
                return MeasuringSink(AudioFileSink(try openOutput()), meter: m)
            }
            guard let before else { preconditionFailure("the sink was made") }
            return (summary, LoudnessReport(loudness: try integrated(before)))
        case .normalize(let target):
            let clock = ContinuousClock(), start = clock.now
            var before: LoudnessMeter? = nil
            var scratch: ScratchAudio? = nil
            var summary = try render(input: input, output: output, augmentation: augmentation, cancel: cancel, progress: progress) { () throws(Failure) -> any RenderSink in
                let m = try meter(truePeak: true)
                let s = try ScratchAudio(beside: output)
                before = m; scratch = s
                return MeasuringSink(s, meter: m)
            }
            guard let scratch, let before else { preconditionFailure("the sink was made") }
            defer { scratch.discard() }
            let loudness = try integrated(before), peakBefore = try truePeak(before)
            let gainDB = target.gain(loudness: loudness, truePeak: peakBefore)
            let gain = Float(linearGain(decibels: gainDB))

            let after = try meter(truePeak: true)
            let writer = try openOutput()
            var peak: Float = 0, clipped = 0, offset = 0
            let chunk = 8192
            let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * chunk)
            defer { block.deallocate() }
            do throws(Failure) {
                while true {
                    if cancel?.isSet == true { throw .interrupted(output: output) }
                    let frames = try scratch.read(into: block, frameOffset: offset)
                    if frames == 0 { break }
                    for i in 0..<(2 * frames) {
                        let v = block[i] * gain
                        block[i] = v
                        let m = abs(v)
                        if m > peak { peak = m }
                        if m > 1 { clipped += 1 }
                    }
                    do throws(LoudnessError) { try after.add(UnsafeBufferPointer(block), frames: frames) } catch { throw .loudness(error) }
                    do throws(SoundFileError) { try writer.write(UnsafeBufferPointer(block), frames: frames) } catch { throw .audioFile(error) }
                    offset += frames
                }
                do throws(SoundFileError) { try writer.finish() } catch { throw .audioFile(error) }
            } catch {
                writer.discard()
                throw error
            }
            summary.peak = peak
            summary.clippedSamples = clipped
            summary.elapsed = Self.seconds(clock.now - start)
            let report = LoudnessReport(loudness: loudness, truePeak: decibels(peakBefore), gain: gainDB,
                                        normalizedLoudness: try integrated(after),
                                        normalizedTruePeak: decibels(try truePeak(after)))
            return (summary, report)
        }
    }
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
