import ALSA
import ArgumentParser
import Carillon
import Controls
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `carillon live`: keyboards and controllers → sampler → sound card.
struct Live: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play live: MIDI keyboards and controllers (ALSA sequencer) through the SoundFont sampler to a sound card.",
        discussion: """
            Examples:
              carillon live --autoconnect
              carillon live --connect "nanoKONTROL" --connect 24:0 --mapping mappings/korg-nanokontrol2.yaml
              carillon live -d hw:1 --period 64 --periods 2
              carillon live --no-audio --mapping mappings/general-midi.yaml

            Other programs can also play into Carillon's port (aplaymidi -p carillon:0, aconnect). \
            When a source goes away, the notes it held are released. Ctrl-C ends: all notes off, \
            the device drained, the ports closed. `carillon ports` lists sources and devices.
            """)

    @OptionGroup var input: MIDIInputOptions

    @Flag(name: .customLong("no-audio"), help: "No sound card and no sampler: the controls and the view only.")
    var noAudio = false

    @OptionGroup var audio: AudioDeviceOptions

    @Option(help: ArgumentHelp("Stop after this many seconds (default: until Ctrl-C).", valueName: "seconds"))
    var duration: Double?

    @OptionGroup var synth: SynthOptions

    func validate() throws {
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
    }

    func run() throws {
        HostSession.catchInterrupts()
        let loaded = HostSession.loadMapping(input.mapping)
        var fontPath: String?
        if !noAudio {
            do { fontPath = try synth.locateSoundFont() } catch { Diagnostics.fail("\(error)") }
        }
        var options = HostSession.options(input: input, audio: audio, synth: synth)
        options.audio = !noAudio
        let terminal = HostSession.isTerminal
        options.logParameterChanges = !terminal

        let host: LiveHost
        do { host = try LiveHost(soundFont: fontPath, mapping: loaded, options: options) } catch { Diagnostics.fail("\(error)") }
        let connected: [PortInfo]
        do { connected = try host.start() } catch { Diagnostics.fail("\(error)") }

        let view = LiveView(terminal: terminal)
        if let line = HostSession.inputLine(host, connected: connected) { view.line("carillon live: " + line) }
        if let device = host.status().device { view.line("audio: \(device)") } else { view.line("audio: none (--no-audio)") }

        _ = HostSession.watch(host, view: view) { _, seconds, _ in duration.map { seconds >= $0 } ?? false }
        // Ctrl-C ends cleanly: input stopped, all sound off, device drained, ports closed.
        host.stop()
        for line in host.takeLog() { view.line(line) }
        view.finish(status: host.status())
    }

}

/// What `live` and `play` share around a `LiveHost`: Ctrl-C, the mapping, the options, errors.
enum HostSession {
    /// Set by SIGINT/SIGTERM: the session ends cleanly at the next view refresh.
    static let interrupted = Atomic<Bool>(false)

    /// Ctrl-C and SIGTERM end the session cleanly, even when started with them
    /// blocked; the input and output threads inherit this mask.
    static func catchInterrupts() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT); sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        signal(SIGINT) { _ in HostSession.interrupted.store(true, ordering: .relaxed) }
        signal(SIGTERM) { _ in HostSession.interrupted.store(true, ordering: .relaxed) }
    }

    static var isTerminal: Bool {
        isatty(1) == 1 && (getenv("TERM").map { String(cString: $0) } ?? "dumb") != "dumb"
    }

    static func loadMapping(_ path: String?) -> ControlMapping? {
        guard let path else { return nil }
        do { return try ControlMapping.load(path: path) } catch { Diagnostics.fail("\(error)") }
    }

    static func options(input: MIDIInputOptions, audio: AudioDeviceOptions, synth: SynthOptions) -> LiveHost.Options {
        var options = LiveHost.Options()
        input.apply(to: &options)
        audio.apply(to: &options)
        options.gain = synth.gain
        options.reverb = synth.reverb
        options.chorus = synth.chorus
        return options
    }

    enum Ending: String { case interrupted, audioFailed = "audio failed", finished }

    /// The view's loop, ~20 times a second: log lines, then the refreshed view,
    /// until Ctrl-C, an audio failure, or `isDone(status, seconds, step)`.
    static func watch(_ host: LiveHost, view: LiveView, header: () -> String? = { nil },
                      isDone: (LiveHost.Status, Double, Double) -> Bool) -> Ending {
        var t = 0.0
        let step = 0.05
        while !interrupted.load(ordering: .relaxed) {
            usleep(UInt32(step * 1_000_000))
            t += step
            for line in host.takeLog() { view.line(line) }
            let status = host.status()
            if let failure = status.failure {
                view.line("audio stopped: \(failure)")
                return .audioFailed
            }
            view.refresh(status: status, controls: host.controlStates(), seconds: t, header: header())
            if isDone(status, t, step) { return .finished }
        }
        return .interrupted
    }

    /// "MIDI in at 128:0 'carillon'; connected 24:0 'Virtual Raw MIDI'", nil without a sequencer.
    static func inputLine(_ host: LiveHost, connected: [PortInfo]) -> String? {
        guard let client = host.client else { return nil }
        return "MIDI in at \(client.inputPort) '\(client.name)'"
            + (connected.isEmpty ? "" : "; connected " + connected.map { "\($0.address) '\($0.clientName)'" }.joined(separator: ", "))
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

    /// `header`: a first line (the player's position), also in the plain status line.
    func refresh(status: LiveHost.Status, controls: [ControlState], seconds: Double, header: String? = nil) {
        if !terminal {
            if seconds - lastPlain >= 2 {
                lastPlain = seconds
                print("status t=\(fmt(seconds, 1))s " + (header.map { $0 + " " } ?? "") + Self.summary(status))
                fflush(nil)
            }
            return
        }
        var lines: [String] = []
        if let header { lines.append(header) }
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

    func finish(status: LiveHost.Status, command: String = "live") {
        erase()
        print("carillon \(command): ended. " + Self.summary(status))
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

func fmt(_ x: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    return "\((x * scale).rounded() / scale)"
}
