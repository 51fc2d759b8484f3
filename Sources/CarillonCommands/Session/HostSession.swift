import ALSA
import Controls
import Hosting
import LiveSession
import MIDI
import MappingFiles
import OSC
import Parameters
import Sampling
import Synchronization
import WebSurface
#if canImport(Glibc)
import Glibc
#endif

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

    /// `/carillon/channel/N/preset s NAME`'s lookup: in the channel's own font
    /// (the mapping's `soundfont:` for it) or else the session's `font` (nil,
    /// `--no-audio`: the one the search order finds).
    static func presetNamed(in font: String?, hub: ControlHub) -> @Sendable (String, Channel) -> Result<FontPreset, PresetNameError> {
        { name, channel in
            let own = hub.mapping?.channels.first { $0.channel == channel }?.soundFont
            return PresetCatalog.font(own, sessionFont: font).flatMap { found in
                FontPreset.named(name, in: found.presets, channel: channel, font: found.path)
            }
        }
    }

    /// The page's channel strips' lookup: the font a channel plays (the mapping's
    /// `soundfont:` for it, else the session's `font`) with its presets.
    static func channelFont(in font: String?, hub: ControlHub) -> ChannelFontLookup {
        { channel in
            let own = hub.mapping?.channels.first { $0.channel == channel }?.soundFont
            return PresetCatalog.font(own, sessionFont: font).map { ChannelFont(path: $0.path, presets: $0.presets) }
        }
    }

    /// The mapping at `path`, read after the plugins' controls (`--instrument`,
    /// `--insert`, its own `lv2:` channels and `inserts:`) are parameters it may name.
    static func loadMapping(_ path: String?, synth: SynthOptions) -> ControlMapping? {
        PluginHost.checkMIDIEffectsAtLoad()
        // Presets named by name are the session's font's (render: the first --soundfont's).
        PresetCatalog.lookUpMappingPresets(sessionFont: synth.soundfont.first)
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
                         transport: (@Sendable () -> TransportSnapshot)? = nil, soundFont: String? = nil) -> WebSurface? {
        let config: WebSurfaceConfiguration
        do { guard let c = try options.configuration else { return nil }; config = c } catch { Diagnostics.fail("--web: \(error)") }
        let status: @Sendable () -> SurfaceStatus = { SurfaceStatus(host.status()) }
        do {
            let surface = try WebSurface(hub: host.hub, configuration: config, status: status, transport: transport,
                                         fonts: channelFont(in: soundFont, hub: host.hub))
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
                         duration: (@Sendable () -> Double?)? = nil, soundFont: String? = nil) -> OSCServer? {
        let config: OSCConfiguration
        do { guard let c = try options.configuration else { return nil }; config = c } catch { Diagnostics.fail("--osc: \(error)") }
        do {
            let server = try OSCServer(hub: host.hub, configuration: config,
                                       notes: { message in host.receive(message) }, duration: duration,
                                       presetNamed: presetNamed(in: soundFont, hub: host.hub),
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
