import ALSA
import ArgumentParser
import Carillon
import Controls
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Set by SIGINT/SIGTERM: `carillon live` ends cleanly at the next view refresh.
private let interrupted = Atomic<Bool>(false)

/// `carillon live`: keyboards and controllers → sampler → sound card.
struct Live: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play live: MIDI keyboards and controllers (ALSA sequencer) through the SoundFont sampler to a sound card.",
        discussion: """
            Examples:
              carillon live --autoconnect
              carillon live --connect "nanoKONTROL" --connect 24:0 --mapping mappings/nanokontrol2.yaml
              carillon live -d hw:1 --period 64 --periods 2
              carillon live --no-audio --mapping mappings/general-midi.yaml

            Other programs can also play into Carillon's port (aplaymidi -p carillon:0, aconnect). \
            When a source goes away, the notes it held are released. Ctrl-C ends: all notes off, \
            the device drained, the ports closed. `carillon ports` lists sources and devices.
            """)

    @Option(name: .customLong("connect"), help: ArgumentHelp(
        "A source to connect: client:port or part of its name, any case (repeatable).", valueName: "source"))
    var connect: [String] = []

    @Flag(help: "Connect every MIDI source now and each one that appears later.")
    var autoconnect = false

    @Option(help: ArgumentHelp("A mapping file: controls and what they drive (its port: pattern connects the controller).", valueName: "file"))
    var mapping: String?

    @Flag(name: .customLong("no-audio"), help: "No sound card and no sampler: the controls and the view only.")
    var noAudio = false

    @Option(name: [.customShort("d"), .long], help: ArgumentHelp("ALSA PCM playback device.", valueName: "device"))
    var device = "default"

    @Option(name: [.customShort("r"), .customLong("rate")], help: ArgumentHelp("Sample rate in Hz.", valueName: "hz"))
    var sampleRate = 48_000

    @Option(help: ArgumentHelp("Frames per period (the block size).", valueName: "frames"))
    var period = 256

    @Option(help: ArgumentHelp("Periods in the device buffer.", valueName: "count"))
    var periods = 2

    @Option(name: .customLong("client-name"), help: ArgumentHelp("The sequencer client's name.", valueName: "name"))
    var clientName = "carillon"

    @Flag(name: .customLong("no-realtime"), help: "Do not ask for real-time (SCHED_FIFO) scheduling.")
    var noRealtime = false

    @Option(help: ArgumentHelp("Stop after this many seconds (default: until Ctrl-C).", valueName: "seconds"))
    var duration: Double?

    @OptionGroup var synth: SynthOptions

    func validate() throws {
        guard (8_000...192_000).contains(sampleRate) else { throw ValidationError("--rate must be 8000…192000 Hz") }
        guard (16...8192).contains(period) else { throw ValidationError("--period must be 16…8192 frames") }
        guard (2...32).contains(periods) else { throw ValidationError("--periods must be 2…32") }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
    }

    func run() throws {
        // Ctrl-C and SIGTERM end the session cleanly, even when started with them blocked;
        // the input and output threads inherit this mask.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT); sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        signal(SIGINT) { _ in interrupted.store(true, ordering: .relaxed) }
        signal(SIGTERM) { _ in interrupted.store(true, ordering: .relaxed) }

        var loaded: ControlMapping?
        if let mapping {
            do { loaded = try ControlMapping.load(path: mapping) } catch {
                fail("\(error)")
            }
        }
        var fontPath: String?
        if !noAudio {
            do { fontPath = try synth.locateSoundFont() } catch { fail("\(error)") }
        }
        var options = LiveHost.Options()
        options.clientName = clientName
        options.connect = connect
        options.autoconnect = autoconnect
        options.audio = !noAudio
        options.device = device
        options.sampleRate = sampleRate
        options.periodFrames = period
        options.periods = periods
        options.gain = synth.gain
        options.reverb = synth.reverb
        options.chorus = synth.chorus
        options.realtime = !noRealtime
        let terminal = isatty(1) == 1 && (getenv("TERM").map { String(cString: $0) } ?? "dumb") != "dumb"
        options.logParameterChanges = !terminal

        let host: LiveHost
        do { host = try LiveHost(soundFont: fontPath, mapping: loaded, options: options) } catch { fail("\(error)") }
        let connected: [PortInfo]
        do { connected = try host.start() } catch { fail("\(error)") }

        let view = LiveView(terminal: terminal)
        if let client = host.client {
            view.line("carillon live: MIDI in at \(client.inputPort) '\(client.name)'"
                + (connected.isEmpty ? "" : "; connected " + connected.map { "\($0.address) '\($0.clientName)'" }.joined(separator: ", ")))
        }
        if let device = host.status().device { view.line("audio: \(device)") } else { view.line("audio: none (--no-audio)") }

        var t = 0.0
        let step = 0.05
        while !interrupted.load(ordering: .relaxed) {
            usleep(UInt32(step * 1_000_000))
            t += step
            for line in host.takeLog() { view.line(line) }
            let status = host.status()
            if let failure = status.failure {
                view.line("audio stopped: \(failure)")
                break
            }
            view.refresh(status: status, controls: host.controlStates(), seconds: t)
            if let duration, t >= duration { break }
        }
        // Ctrl-C ends cleanly: input stopped, all sound off, device drained, ports closed.
        host.stop()
        for line in host.takeLog() { view.line(line) }
        view.finish(status: host.status())
    }

    private func fail(_ message: String) -> Never {
        let bytes = Array("carillon: error: \(message)\n".utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        Glibc.exit(1)
    }
}

/// The live view: on a terminal a block of lines redrawn ~20 times a second
/// (controls as bars, MIDI activity per source, DSP load, xruns, meters);
/// otherwise plain log lines and a status line every 2 seconds.
final class LiveView {
    let terminal: Bool
    private var drawnLines = 0
    private var lastPlain = 0.0

    init(terminal: Bool) { self.terminal = terminal }

    func line(_ text: String) {
        erase()
        print(text)
        fflush(nil)
    }

    func refresh(status: LiveHost.Status, controls: [ControlState], seconds: Double) {
        if !terminal {
            if seconds - lastPlain >= 2 {
                lastPlain = seconds
                print("status t=\(fmt(seconds, 1))s " + Self.summary(status))
                fflush(nil)
            }
            return
        }
        var lines: [String] = []
        lines.append("── " + Self.summary(status))
        lines.append("   peak \(Self.bar(Double(status.peak), width: 30)) rms \(Self.bar(Double(status.rms), width: 30))")
        let sources = status.messagesBySource.sorted { $0.key < $1.key }
        if !sources.isEmpty {
            lines.append("   MIDI: " + sources.map { "\($0.key) \($0.value)" + (status.sources.contains($0.key) ? "" : " (gone)") }
                .joined(separator: "  "))
        }
        for c in controls.prefix(24) {
            let name = c.name.count > 18 ? String(c.name.prefix(18)) : c.name.padding(toLength: 18, withPad: " ", startingAt: 0)
            lines.append("   \(name) \(Self.bar(c.position, width: 24)) \(c.display)\(c.awaitingPickup ? " (pick up)" : "")")
        }
        erase()
        for l in lines { print(l + "\u{1B}[K") }
        drawnLines = lines.count
        fflush(nil)
    }

    func finish(status: LiveHost.Status) {
        erase()
        print("carillon live: ended. " + Self.summary(status))
        let perSource = status.messagesBySource.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        if !perSource.isEmpty { print("messages by source: " + perSource.joined(separator: " ")) }
        fflush(nil)
    }

    private func erase() {
        guard terminal, drawnLines > 0 else { return }
        print("\u{1B}[\(drawnLines)A\u{1B}[J", terminator: "")
        drawnLines = 0
    }

    static func summary(_ s: LiveHost.Status) -> String {
        var parts: [String] = []
        if s.budget > 0 {
            parts.append("blocks=\(s.blocks) xruns=\(s.xruns) load=\(fmt(s.load * 100, 1))%"
                + " render mean=\(fmt(s.renderMean * 1000, 3))ms worst=\(fmt(s.renderWorst * 1000, 3))ms budget=\(fmt(s.budget * 1000, 3))ms")
            parts.append("realtime: \(s.realtime)")
        }
        let total = s.messagesBySource.values.reduce(0, +)
        parts.append("midi=\(total)")
        if s.queueOverflows > 0 { parts.append("queue-overflows=\(s.queueOverflows)") }
        return parts.joined(separator: " ")
    }

    static func bar(_ fraction: Double, width: Int) -> String {
        let f = min(max(fraction, 0), 1)
        let filled = Int((f * Double(width)).rounded())
        return "[" + String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled) + "]"
    }
}

private func fmt(_ x: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    return "\((x * scale).rounded() / scale)"
}
