import ALSA
import LiveSession
import MappingFiles
import OSC
import WebSurface

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
    /// The font OSC and the page's channel strips look presets up in: the one the host plays, else (`--no-audio`)
    /// `--soundfont`'s (nil: the search order's).
    private let presetFont: String?

    /// Any failure ends the command with `failurePrefix` and the error.
    /// `adjust` changes the options before the host is built; `prepare` runs
    /// between building and starting it (loading a piece).
    init(soundFont: String?, mapping: ControlMapping?, input: MIDIInputOptions, audio: AudioDeviceOptions,
         synth: SynthOptions, recording: RecordOptions, log: LogOptions, failurePrefix: String = "",
         adjust: (inout LiveHost.Options) -> Void = { _ in }, prepare: (LiveHost) -> Void = { _ in }) throws {
        presetFont = soundFont ?? synth.soundfont.first
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

    /// The font each channel plays and its presets (the page's strips, the terminal's preset keys).
    var channelFont: ChannelFontLookup { HostSession.channelFont(in: presetFont, hub: host.hub) }

    /// "MIDI in at 128:0 'carillon'; connected 24:0 …", nil without a sequencer.
    var inputLine: String? { HostSession.inputLine(host, connected: connected) }

    /// Starts the web surface when `--web` asks for it.
    func startWeb(_ options: WebOptions, transport: (@Sendable () -> TransportSnapshot)? = nil) {
        surface = HostSession.startWeb(options, host: host, view: view, transport: transport, soundFont: presetFont)
    }

    /// Starts the OSC server when `--osc` asks for it: notes from `/carillon/note` go
    /// into the host's input path (`LiveHost.receive`, as a keyboard's would);
    /// `duration` (play: the piece's length) lets `/carillon/transport/seek` take seconds.
    func startOSC(_ options: OSCOptions, duration: (@Sendable () -> Double?)? = nil) {
        osc = HostSession.startOSC(options, host: host, view: view, duration: duration, soundFont: presetFont)
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
