import ALSA
import Controls
import Hosting
import LiveSession
import MIDI
import OSC
import Parameters
import Sampling
import Synchronization
import WebSurface
import Glibc
#if canImport(Glibc)
#endif

/// The one skeleton of `live` and `play`: the host built from the shared
/// options and started, the view, the web surface, the watch loop, and the
/// clean end (pages closed, host stopped, its last log lines, the summary).
/// Each command adds only what is its own (a piece, learn keys, its banner).
final class Session {
    let host: LiveHost
    let view: LiveView
    /// The sources connected at start (`--connect`, `--autoconnect`).
    let connected: [PortInfo]
    private var surface: WebSurface?
    private var osc: OSCServer?

    /// Any failure ends the command with `failurePrefix` and the error.
    /// `adjust` changes the options before the host is built; `prepare` runs
    /// between building and starting it (loading a piece).
    init(soundFont: String?, mapping: ControlMapping?, input: MIDIInputOptions, audio: AudioDeviceOptions,
         synth: SynthOptions, recording: RecordOptions, log: LogOptions, failurePrefix: String = "",
         adjust: (inout LiveHost.Options) -> Void = { _ in }, prepare: (LiveHost) -> Void = { _ in }) throws {
        var options = HostSession.options(input: input, audio: audio, synth: synth, mapping: mapping)
        adjust(&options)
        try recording.apply(to: &options)
        // Each value a control moves: only when asked (-v); a page's fader is hundreds a second.
        options.logParameterChanges = log.verbose
        do { host = try LiveHost(soundFont: soundFont, mapping: mapping, options: options) } catch {
            Diagnostics.fail(failurePrefix + "\(error)")
        }
        prepare(host)
        do { connected = try host.start() } catch { Diagnostics.fail(failurePrefix + "\(error)") }
        view = LiveView(terminal: HostSession.isTerminal, statusInterval: log.statusInterval)
    }

    /// "MIDI in at 128:0 'carillon'; connected 24:0 …", nil without a sequencer.
    var inputLine: String? { HostSession.inputLine(host, connected: connected) }

    /// Starts the web surface when `--web` asks for it.
    func startWeb(_ options: WebOptions, transport: (@Sendable () -> TransportSnapshot)? = nil) {
        surface = HostSession.startWeb(options, host: host, view: view, transport: transport)
    }

    /// Starts the OSC server when `--osc` asks for it: notes from `/carillon/note` go
    /// into the host's input path (`LiveHost.receive`, as a keyboard's would);
    /// `duration` (play: the piece's length) lets `/carillon/transport/seek` take seconds.
    func startOSC(_ options: OSCOptions, duration: (@Sendable () -> Double?)? = nil) {
        osc = HostSession.startOSC(options, host: host, view: view, duration: duration)
    }

    /// The view's loop until Ctrl-C, an audio failure or `isDone` (HostSession.watch).
    /// An end while the output is gone (and being reopened) is `.audioFailed` too.
    func watch(header: () -> String? = { nil }, isDone: (LiveHost.Status, Double, Double) -> Bool) -> HostSession.Ending {
        HostSession.watch(host, view: view, web: surface, osc: osc, header: header, isDone: isDone)
    }

    /// Ctrl-C's clean end: pages closed, input stopped, all sound off, device
    /// drained, ports closed; then the host's last log lines, `lastLine`, and the summary.
    func end(command: String, lastLine: String? = nil) {
        surface?.stop()
        if let osc {
            osc.stop()
            for line in osc.takeLog() { view.line(line) }
            let c = osc.counters
            view.line("osc: \(c.applied) messages applied, \(c.sent) sent; \(c.malformed) malformed, \(c.unknownPaths) unknown paths, "
                      + "\(c.wrongArguments) wrong arguments, \(c.refusedSources) from refused sources")
        }
        host.stop()
        for line in host.takeLog() { view.line(line) }
        if let lastLine { view.line(lastLine) }
        view.finish(status: host.status(), command: command)
    }
}

/// What the sessions share around a `LiveHost`: Ctrl-C, the mapping, the options, the loop.
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

    /// The mapping at `path`, read after the plugins' controls (`--instrument`,
    /// `--insert`, its own `lv2:` channels and `inserts:`) are parameters it may name.
    static func loadMapping(_ path: String?, synth: SynthOptions) -> ControlMapping? {
        PluginHost.checkMIDIEffectsAtLoad()
        synth.plugins.registerParameters(adding: path.map(ControlMapping.plugins(path:)) ?? ([], []),
                                         midiEffects: path.map { MIDIEffectSpec.all(in: ControlMapping.midiEffects(path: $0)) } ?? [])
        guard let path else { return nil }
        do { return try ControlMapping.load(path: path) } catch { Diagnostics.fail("\(error)") }
    }

    /// The host's options; the tracks are the mapping's `tracks:` then `--track`.
    static func options(input: MIDIInputOptions, audio: AudioDeviceOptions, synth: SynthOptions,
                        mapping: ControlMapping?) -> LiveHost.Options {
        var options = LiveHost.Options()
        input.apply(to: &options)
        audio.apply(to: &options)
        // One shared reverb and chorus unless --channel-effects (SynthOptions.hostOptions).
        options.host = synth.hostOptions
        options.host.tracks = (mapping?.tracks ?? []) + synth.track
        if options.host.tracks.count > HostOptions.maxTracks {
            Diagnostics.fail("at most \(HostOptions.maxTracks) tracks: the mapping's tracks: and --track give \(options.host.tracks.count)")
        }
        return options
    }

    enum Ending: String { case interrupted, audioFailed = "audio failed", finished }

    /// The view's loop, ~20 times a second: log lines (and a line when web pages
    /// open or close), then the refreshed view, until Ctrl-C, an audio failure,
    /// or `isDone(status, seconds, step)`.
    static func watch(_ host: LiveHost, view: LiveView, web: WebSurface? = nil, osc: OSCServer? = nil, header: () -> String? = { nil },
                      isDone: (LiveHost.Status, Double, Double) -> Bool) -> Ending {
        var t = 0.0
        let step = 0.05
        var pagesOpen = 0, refusals = 0
        var outage: String?
        defer { if outage != nil { view.line("ended without audio") } }
        while !interrupted.load(ordering: .relaxed) {
            usleep(UInt32(step * 1_000_000))
            t += step
            for line in host.takeLog() { view.line(line) }
            for line in osc?.takeLog() ?? [] { view.line(line) }
            if let counters = web?.counters {
                if counters.open != pagesOpen {
                    pagesOpen = counters.open
                    view.line("web: \(pagesOpen) page\(pagesOpen == 1 ? "" : "s") open (\(counters.connections) since the start)")
                }
                if counters.unauthorized + counters.forbidden != refusals {
                    refusals = counters.unauthorized + counters.forbidden
                    view.line("web: \(refusals) request\(refusals == 1 ? "" : "s") refused so far "
                              + "(\(counters.unauthorized) without the token, \(counters.forbidden) from another site or host name)")
                }
            }
            let status = host.status()
            if let failure = status.failure {
                view.line("audio stopped: \(failure)")
                return .audioFailed
            }
            // Every session that ends while its output is gone ends as a failure (the status line said why).
            outage = status.outage
            view.follow(host.hub)
            view.refresh(status: status, controls: host.controlStates(), seconds: t, header: header())
            if isDone(status, t, step) { return outage == nil ? .finished : .audioFailed }
        }
        return outage == nil ? .interrupted : .audioFailed
    }

    /// Starts the web surface in front of the host's controls when `--web` asks for it,
    /// and prints where (with the token); any failure ends the command.
    static func startWeb(_ options: WebOptions, host: LiveHost, view: LiveView,
                         transport: (@Sendable () -> TransportSnapshot)? = nil) -> WebSurface? {
        let config: WebSurfaceConfiguration
        do { guard let c = try options.configuration else { return nil }; config = c } catch { Diagnostics.fail("--web: \(error)") }
        let status: @Sendable () -> SurfaceStatus = { SurfaceStatus(host.status()) }
        do {
            let surface = try WebSurface(hub: host.hub, configuration: config, status: status, transport: transport)
            try surface.start()
            view.line("web: \(surface.url)" + (config.isLoopback ? "" : " (token \(config.token ?? ""); reachable from the network)"))
            return surface
        } catch {
            host.stop()
            Diagnostics.fail("\(error)")
        }
    }

    /// Starts the OSC server in front of the host's hub when `--osc` asks for it, and
    /// prints where it listens; any failure (a port in use, a bad address) ends the command.
    static func startOSC(_ options: OSCOptions, host: LiveHost, view: LiveView,
                         duration: (@Sendable () -> Double?)? = nil) -> OSCServer? {
        let config: OSCConfiguration
        do { guard let c = try options.configuration else { return nil }; config = c } catch { Diagnostics.fail("--osc: \(error)") }
        do {
            let server = try OSCServer(hub: host.hub, configuration: config,
                                       notes: { message in host.receive(message) }, duration: duration,
                                       audio: { host.audioOutage })
            try server.start()
            view.line("osc: listening on udp \(server.listening)"
                      + (config.endpoint.isLoopback ? "" : " (taking packets from loopback and \(config.allowed.map(\.description).joined(separator: ", ")))"))
            return server
        } catch {
            host.stop()
            Diagnostics.fail("--osc: \(error)")
        }
    }

    /// "MIDI in at 128:0 'carillon'; connected 24:0 'Virtual Raw MIDI'", nil without a sequencer.
    static func inputLine(_ host: LiveHost, connected: [PortInfo]) -> String? {
        guard let client = host.client else { return nil }
        return "MIDI in at \(client.inputPort) '\(client.name)'"
            + (connected.isEmpty ? "" : "; connected " + connected.map { "\($0.address) '\($0.clientName)'" }.joined(separator: ", "))
    }

}

extension SurfaceStatus {
    /// The part of the host's status the web page shows.
    init(_ s: LiveHost.Status) {
        self.init(load: s.load, xruns: s.xruns, blocks: s.blocks, voices: s.voices, peak: s.peak, rms: s.rms,
                  stripPeaks: s.stripPeaks, stripNames: s.stripNames, stripKeys: s.stripKeys, spectrum: s.spectrum,
                  queueOverflows: s.queueOverflows, refusedParameters: s.refusedParameters, sync: s.sync, audio: s.outage)
    }
}
