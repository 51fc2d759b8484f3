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
        abstract: "Render MIDI files to audio files (WAV, FLAC, Ogg Vorbis) through the SoundFont sampler.",
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

    @Flag(name: [.customShort("q"), .long], help: "No progress bar and no summary.")
    var quiet = false

    func validate() throws {
        guard !inputs.isEmpty else { throw ValidationError("give at least one MIDI file") }
        if output != nil && outputDirectory != nil { throw ValidationError("use either -o or --output-dir, not both") }
        if inputs.count > 1 && output != nil {
            throw ValidationError("-o names one file; with several inputs use --output-dir")
        }
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
        options.gain = synth.gain
        options.reverb = synth.reverb
        options.reverbLevel = synth.reverbLevel
        options.chorus = synth.chorus
        options.chorusLevel = synth.chorusLevel
        options.tail = TailPolicy(silenceThreshold: silence, maxTail: tail)

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
                if !quiet { print(Self.line(summary)) }
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
    }
}

// MARK: - Helpers

func baseName(_ path: String) -> String {
    path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? path
}

func fail(_ error: any Error) -> Never {
    Diagnostics.error("\(error)")
    Render.exit(withError: ExitCode.failure)
}

func formatted(_ value: Double, _ decimals: Int) -> String {
    guard value.isFinite else { return value > 0 ? "inf" : "-inf" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale), fraction = Int(scaled) - whole * Int(scale)
    let sign = value < 0 && scaled > 0 ? "-" : ""
    guard decimals > 0 else { return sign + String(whole) }
    let digits = String(fraction)
    return sign + String(whole) + "." + String(repeating: "0", count: decimals - digits.count) + digits
}

/// m:ss.t
func clock(_ seconds: Double) -> String {
    let tenths = Int((seconds * 10).rounded())
    let minutes = tenths / 600, rest = tenths % 600
    let secs = rest / 10, tenth = rest % 10
    return "\(minutes):\(secs < 10 ? "0" : "")\(secs).\(tenth)"
}

/// SIGINT/SIGTERM stop a render between blocks: the job then removes its temporary file.
enum Interruption {
    static let flag = CancellationFlag()
    static let signal = Atomic<Int32>(0)

    static func install() {
        _ = flag.isSet; _ = signal.load(ordering: .relaxed)   // initialise before a handler can run
        for sig in [SIGINT, SIGTERM] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { received in
                Interruption.signal.store(received, ordering: .relaxed)
                Interruption.flag.set()
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            sigaction(sig, &action, nil)
        }
        // A parent may have started us with these signals blocked (a blocked mask is inherited).
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT); sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}

/// A one-line progress bar on stderr (a terminal only), redrawn at most 10 times a second.
final class ProgressBar {
    let label: String
    private var lastDraw = -1.0

    init(label: String) { self.label = label }

    func show(_ p: RenderJob.Progress) {
        guard p.elapsed - lastDraw >= 0.1 else { return }
        lastDraw = p.elapsed
        let fraction = p.pieceDuration > 0 ? min(1, p.rendered / p.pieceDuration) : 1
        let width = 30
        let filled = Int(fraction * Double(width))
        let speed = p.elapsed > 0 ? p.rendered / p.elapsed : 0
        let eta = speed > 0 ? max(0, p.pieceDuration - p.rendered) / speed : 0
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let status = p.inTail ? "tail" : "ETA \(clock(eta))"
        write("\r\u{1B}[2K\(label) [\(bar)] \(Int(fraction * 100))% \(formatted(speed, 1))× real time \(status)")
    }

    func clear() { write("\r\u{1B}[2K") }

    private func write(_ text: String) {
        var text = text
        text.withUTF8 { _ = Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
