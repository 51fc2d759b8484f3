import Controls
import Engine
import FluidSynth
import MIDI
import SoundFile
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Offline rendering: MIDI files through the engine's render loop, with the
/// FluidSynth sampler, into audio files, as fast as the CPU allows. The
/// sequencer is clocked by rendered samples, so the file holds exactly what
/// live playback would sound like.
///
/// One `RenderJob` loads the SoundFont once and renders any number of files
/// (each from a reset synth).
public final class RenderJob {
    public struct Options: Sendable {
        public var sampleRate: Int = 44_100
        public var sampler = SamplerOptions()
        public var tail: TailPolicy = .default
        /// Frames per block of the render loop.
        public var blockFrames: Int = 512
        public init() {}
    }

    public struct Summary: Sendable {
        public var input: String
        public var output: String
        /// Seconds of audio written.
        public var duration: Double
        /// Seconds of the piece itself (to its last event).
        public var pieceDuration: Double
        /// Highest sample magnitude (linear; 1 = full scale).
        public var peak: Float
        public var clippedSamples: Int
        /// Wall-clock seconds taken.
        public var elapsed: Double
        /// Calls the sampler refused while rendering this file (no preset on a channel, …).
        public var refusedSynthCalls: Int
        /// Sequencer events dropped (its held-note or chase tables full).
        public var droppedMessages: Int

        public var peakDBFS: Double { peak > 0 ? 20 * log10(Double(peak)) : -.infinity }
        public var speed: Double { elapsed > 0 ? duration / elapsed : .infinity }
    }

    public struct Progress: Sendable {
        public var rendered: Double
        public var pieceDuration: Double
        public var elapsed: Double
        public var inTail: Bool
    }

    public enum Failure: Error, CustomStringConvertible {
        case sampler(Sampler.Failure)
        case midiFile(MIDIFileError)
        case audioFile(SoundFileError)
        case interrupted(output: String)

        public var description: String {
            switch self {
            case .sampler(let e): "\(e)"
            case .midiFile(let e): "\(e)"
            case .audioFile(let e): "\(e)"
            case .interrupted(let output): "interrupted; \(output) was not written"
            }
        }
    }

    public let options: Options
    public let soundFontPath: String
    public var instrument: FluidSynthInstrument { sampler.instrument }
    private let sampler: Sampler
    private let renderer: Renderer
    private let buffer: UnsafeMutableBufferPointer<Float>

    /// Creates the synth and loads the SoundFont (the slow part: do it once).
    public init(soundFont path: String, options: Options = Options()) throws(Failure) {
        self.options = options
        self.soundFontPath = path
        do {
            sampler = try Sampler(soundFont: path, sampleRate: Double(options.sampleRate), options: options.sampler)
        } catch { throw .sampler(error) }
        renderer = Renderer(instrument: sampler.instrument)
        for channel in options.sampler.oscillatorChannels { renderer.route(channel: channel, to: .oscillator) }
        renderer.oscillator.a4 = options.sampler.a4
        // The same parameters as live: `--reverb-level` is the reverb return's start value.
        for change in options.sampler.startValues { renderer.parameters.set(change.address, Double(change.value)) }
        buffer = .allocate(capacity: 2 * options.blockFrames)
        buffer.initialize(repeating: 0)
    }

    deinit { buffer.deallocate() }

    /// Renders `input` into `output`. The audio goes to a temporary file beside
    /// `output`, renamed only when complete; on any failure or when `cancel`
    /// is set, nothing is left under `output`.
    public func render(
        input: String, output: String, format: AudioFileFormat, encoding: SampleEncoding?,
        cancel: CancellationFlag? = nil, progress: ((Progress) -> Void)? = nil
    ) throws(Failure) -> Summary {
        let clock = ContinuousClock()
        let start = clock.now
        let score: Score
        do throws(MIDIFileError) { score = try Score(contentsOf: input) } catch { throw .midiFile(error) }

        let writer: AudioFileWriter
        do throws(SoundFileError) {
            writer = try AudioFileWriter(path: output, format: format, encoding: encoding,
                                         sampleRate: options.sampleRate, channels: 2)
        } catch { throw .audioFile(error) }

        let rate = Double(options.sampleRate)
        _ = instrument.synth.systemReset()
        let refusedBefore = instrument.refusedCount
        renderer.prepare(sampleRate: rate, maxFrames: options.blockFrames)
        renderer.schedule(score, startingAt: 0)
        var tail = TailTracker(policy: options.tail, sampleRate: rate)
        var blocks = 0
        var finished = false

        while !finished {
            if cancel?.isSet == true {
                writer.discard()
                throw .interrupted(output: output)
            }
            var frames = options.blockFrames
            let inTail = renderer.isScoreFinished
            if inTail { frames = min(frames, tail.remainingFrames) }
            if frames > 0 {
                renderer.render(frames: frames, into: buffer)
                do throws(SoundFileError) {
                    try writer.write(UnsafeBufferPointer(buffer), frames: frames)
                } catch { throw .audioFile(error) }
            }
            if inTail { finished = frames == 0 || tail.observe(peak: renderer.blockPeak, frames: frames) }
            blocks += 1
            if let progress, blocks & 127 == 0 {
                progress(Progress(rendered: Double(renderer.sampleTime) / rate, pieceDuration: score.duration,
                                  elapsed: Self.seconds(clock.now - start), inTail: inTail))
            }
        }
        do throws(SoundFileError) { try writer.finish() } catch { throw .audioFile(error) }
        return Summary(input: input, output: output, duration: Double(renderer.sampleTime) / rate,
                       pieceDuration: score.duration, peak: renderer.peak,
                       clippedSamples: renderer.clippedSamples, elapsed: Self.seconds(clock.now - start),
                       refusedSynthCalls: instrument.refusedCount - refusedBefore,
                       droppedMessages: renderer.droppedMessages)
    }

    static func seconds(_ duration: Duration) -> Double {
        let (s, atto) = duration.components
        return Double(s) + Double(atto) * 1e-18
    }
}

/// Set from any thread (a signal handler included) to stop a render between blocks.
public final class CancellationFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    public init() {}
    public func set() { flag.store(true, ordering: .relaxed) }
    public var isSet: Bool { flag.load(ordering: .relaxed) }
}
