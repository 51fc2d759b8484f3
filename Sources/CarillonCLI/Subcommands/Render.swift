import ArgumentParser
import Carillon
import Engine
import SoundFile
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `carillon render`: MIDI files to audio files, as fast as the CPU allows.
struct Render: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render MIDI files to audio files (WAV, FLAC, Ogg Vorbis or Opus, MP3, AIFF, CAF, W64, RF64, raw PCM) through the SoundFont sampler.",
        discussion: """
            Examples:
              carillon render song.mid -o song.wav
              carillon render song.mid -o song.flac --bits 24 -g 0.5 --no-chorus
              carillon render *.mid --output-dir out --format ogg

            After the last note, rendering goes on until the sound has died away \
            (below --silence for a quarter second), at most --tail seconds.
            """)

    @Argument(help: ArgumentHelp("Standard MIDI files to render.", valueName: "midi-file"))
    var inputs: [String]

    @Option(name: [.customShort("o"), .long], help: ArgumentHelp("The audio file to write (one input).", valueName: "file"))
    var output: String?

    @Option(name: .customLong("output-dir"), help: ArgumentHelp("Folder for the audio files, named after the inputs (several inputs).", valueName: "dir"))
    var outputDirectory: String?

    @OptionGroup var audio: AudioFileOptions
    @OptionGroup var synth: SynthOptions

    @Option(help: ArgumentHelp("Longest tail after the last event, in seconds.", valueName: "seconds"))
    var tail: Double = TailPolicy.default.maxTail

    @Option(help: ArgumentHelp("Level under which the tail counts as silent, in dBFS.", valueName: "dB"))
    var silence: Double = TailPolicy.default.silenceThreshold

    @Option(help: ArgumentHelp("FluidSynth synths rendering each file in parallel, one thread each (default: the cores).", valueName: "n"))
    var threads: Int = RenderJob.Options.cores

    @Flag(name: [.customShort("q"), .long], help: "No progress bar and no summary.")
    var quiet = false

    func validate() throws {
        guard !inputs.isEmpty else { throw ValidationError("give at least one MIDI file") }
        if output != nil && outputDirectory != nil { throw ValidationError("use either -o or --output-dir, not both") }
        if inputs.count > 1 && output != nil {
            throw ValidationError("-o names one file; with several inputs use --output-dir")
        }
        guard (1...64).contains(threads) else { throw ValidationError("--threads must be 1...64") }
        guard tail >= 0 else { throw ValidationError("--tail must not be negative") }
        guard silence < 0 else { throw ValidationError("--silence must be below 0 dBFS") }
        _ = try audio.resolve(for: output)
    }

    func run() throws {
        let (format, encoding) = try audio.resolve(for: output)
        let jobs = inputs.map { input in (input, outputPath(for: input, format: format)) }

        let fontPath: String
        do { fontPath = try synth.locateSoundFont() } catch { fail(error) }

        var options = RenderJob.Options()
        options.sampleRate = audio.rate
        options.sampler = synth.samplerOptions
        options.tail = TailPolicy(silenceThreshold: silence, maxTail: tail)
        options.threads = threads

        let job: RenderJob
        do { job = try RenderJob(soundFont: fontPath, options: options) } catch { fail(error) }

        Interruption.install()
        let terminal = isatty(STDERR_FILENO) == 1 && !quiet
        var failures = 0
        for (input, path) in jobs {
            let bar = terminal ? ProgressBar(label: baseName(input)) : nil
            do {
                let summary = try job.render(input: input, output: path, format: format, encoding: encoding,
                                             cancel: Interruption.flag, progress: bar.map { bar in { bar.show($0) } })
                bar?.clear()
                // With -o - standard output carries the audio: the summary goes to stderr.
                if !quiet && path == AudioFileWriter.standardOutput {
                    var text = Self.line(summary) + "\n"
                    text.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
                } else if !quiet { print(Self.line(summary)) }
            } catch {
                bar?.clear()
                if case .interrupted = error {
                    let signal = Interruption.signal.load(ordering: .relaxed)
                    Diagnostics.error("\(error) (\(signal == SIGTERM ? "SIGTERM" : "SIGINT"))")
                    throw ExitCode(128 + signal)
                }
                Diagnostics.error(jobs.count > 1 ? "\(input): \(error)" : "\(error)")
                failures += 1
            }
        }
        if failures > 0 { throw ExitCode.failure }
    }

    private func outputPath(for input: String, format: AudioFileFormat) -> String {
        if let output { return output }
        var name = baseName(input)
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { name = String(name[..<dot]) }
        let file = "\(name).\(format.fileExtension)"
        guard let outputDirectory else { return file }
        return outputDirectory.hasSuffix("/") ? outputDirectory + file : "\(outputDirectory)/\(file)"
    }

    static func line(_ s: RenderJob.Summary) -> String {
        let peak = s.peak > 0 ? formatted(s.peakDBFS, 1) + " dBFS" : "silent"
        return "\(s.output): \(clock(s.duration)) (piece \(clock(s.pieceDuration))), peak \(peak), "
            + "\(s.clippedSamples) clipped samples, rendered in \(formatted(s.elapsed, 2)) s "
            + "(\(formatted(s.speed, 1))× real time)"
            + (s.refusedSynthCalls > 0 ? ", \(s.refusedSynthCalls) synth calls refused" : "")
            + (s.droppedMessages > 0 ? ", \(s.droppedMessages) events dropped" : "")
    }
}
