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

    /// Renders `input` into the audio file `file`, and measures or
    /// normalises its loudness (`summary.loudness`).
    ///
    /// Normalising needs the loudness of the whole piece before the first
    /// sample of the output can be scaled. The synth is the expensive part,
    /// so it runs once: its float blocks go to a raw scratch file beside the
    /// output (no 4 GiB WAV limit, no clipping) while libebur128 measures
    /// them; a second, cheap pass reads the scratch file back, applies the
    /// gain, writes the output (whole or not at all, as `file` says), measures
    /// it again for the report, and removes the scratch file. Interrupted or
    /// failed, neither file is left behind.
    func renderFile(
        input: String, midi: [UInt8]?, file: AudioFileTarget, loudness mode: Loudness, stems folder: StemFolder?,
        augmentation: Augmentation.Draw?, cancel: CancellationFlag?, progress: ((Progress) -> Void)?
    ) throws(Failure) -> Summary {
        // Normalised, the mixdown is scaled after the render: the stems would no longer add up to it.
        precondition(folder == nil || !mode.normalizes, "stems are not normalised")
        let stems = folder.map { StemTarget(folder: $0, format: file.format, encoding: file.encoding) }
        let output = file.path
        let rate = options.sampleRate
        func meter(truePeak: Bool) throws(Failure) -> LoudnessMeter {
            do throws(LoudnessError) { return try LoudnessMeter(channels: 2, sampleRate: rate, truePeak: truePeak) } catch { throw .loudness(error) }
        }
        func integrated(_ m: LoudnessMeter) throws(Failure) -> Double {
            do throws(LoudnessError) { return try m.integratedLoudness() } catch { throw .loudness(error) }
        }
        func truePeak(_ m: LoudnessMeter) throws(Failure) -> Double {
            do throws(LoudnessError) { return try m.truePeak() } catch { throw .loudness(error) }
        }

        switch mode {
        case .off:
            return try render(input: input, midi: midi, output: output, stems: stems, augmentation: augmentation,
                              cancel: cancel, progress: progress) { () throws(Failure) -> any RenderSink in
                AudioFileSink(try file.open())
            }
        case .measure:
            // A sink, and so a meter, per attempt: a piece may be rendered again (see `render`).
            var before: LoudnessMeter? = nil
            var summary = try render(input: input, midi: midi, output: output, stems: stems, augmentation: augmentation,
                                     cancel: cancel, progress: progress) { () throws(Failure) -> any RenderSink in
                let m = try meter(truePeak: false)
                before = m
                return MeasuringSink(AudioFileSink(try file.open()), meter: m)
            }
            guard let before else { preconditionFailure("the sink was made") }
            summary.loudness = LoudnessReport(loudness: try integrated(before))
            return summary
        case .normalize(let target):
            let clock = ContinuousClock(), start = clock.now
            var before: LoudnessMeter? = nil
            var scratch: ScratchAudio? = nil
            var summary = try render(input: input, midi: midi, output: output, stems: nil, augmentation: augmentation,
                                     cancel: cancel, progress: progress) { () throws(Failure) -> any RenderSink in
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
            let writer = try file.open()
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
            summary.loudness = LoudnessReport(loudness: loudness, truePeak: decibels(peakBefore), gain: gainDB,
                                              normalizedLoudness: try integrated(after),
                                              normalizedTruePeak: decibels(try truePeak(after)))
            return summary
        }
    }
}

/// The audio file a render writes: its name, format and rate, and whether
/// the name is a staging name (`OutputSet`) written directly, rather than a
/// final one reached through a temporary file of the writer's own.
struct AudioFileTarget {
    var path: String
    var format: AudioFileFormat
    var encoding: SampleEncoding?
    var sampleRate: Int
    var staged: Bool

    func open() throws(RenderJob.Failure) -> AudioFileWriter {
        do throws(SoundFileError) {
            return try AudioFileWriter(path: path, format: format, encoding: encoding, sampleRate: sampleRate, channels: 2,
                                       inPlace: staged)
        } catch { throw .audioFile(error) }
    }
}
