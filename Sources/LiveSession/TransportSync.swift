import ALSA
import Engine
import Glibc
import JACK
import Sync
import Synchronization
import Threads

/// The transport in time with other gear: MIDI clock out (`--clock-out`),
/// MIDI clock in (`play --sync clock`), the JACK transport followed (`play
/// --sync jack`) or led (`--transport-master`), the Ableton Link session
/// (`--link`). Each is set up before the output starts (`prepare`: what the
/// render thread feeds after each block), its threads started with the input
/// (`start`) and stopped before the output finishes (`stop`).
///
/// Threads: `useTempoMap`, `prepare`, `start` and `stop` from the host's owner
/// thread; `description` and `clockFollowing` from any. Its state is in `parts` (a `Mutex`).
final class TransportSync: Sendable {
    private let options: LiveHost.Options
    private let log: HostLog

    private struct Parts {
        /// The piece's beats (`useTempoMap`; 120 bpm 4/4 without one): clock out counts
        /// them, clock in turns the master's beats into seconds, the JACK transport's bars.
        var beats = BeatMap(beatsPerMinute: 120)
        var clockSender: ClockSender?
        var clockFollowing: ClockFollowing?
        var jackFollowing: JACKTransportFollowing?
        var jackLeading: JACKTransportLeading?
        var link: LinkFollowing?
    }
    private let parts = Mutex(Parts())

    /// What the render thread feeds after each block (`LiveAudio.start`).
    struct Taps {
        var clockOut: ClockOutTap?
        var link: LinkFollowing?
    }

    init(options: LiveHost.Options, log: HostLog) {
        self.options = options; self.log = log
    }

    /// The piece's tempo map and time signatures. Before `prepare`.
    func useTempoMap(_ beats: BeatMap) { parts.withLock { $0.beats = beats } }

    /// `play --sync clock`: what follows the master (nil otherwise).
    var clockFollowing: ClockFollowing? { parts.withLock { $0.clockFollowing } }

    /// Before the output starts: the clock port connected to its destinations
    /// and its tap (ALSA: a sender thread scheduling on the sequencer; JACK: the
    /// process callback writes the clock itself), the JACK transport followed or
    /// led, the Link peer, the followed clock source connected. Live (no piece)
    /// loads an empty piece for the transport to run the clock, JACK and Link on.
    func prepare(_ output: LiveOutput, client: SequencerClient?) throws(LiveHost.Failure) -> Taps {
        var taps = Taps()
        taps.clockOut = try prepareClockOut(output, client: client)
        try prepareJACKFollowing(output)
        try prepareJACKLeading(output)
        taps.link = try prepareLink(output)
        try prepareClockFollowing(output, client: client)
        return taps
    }

    /// Starts the clock sender's and the Link peer's threads (after the output).
    func start() throws(LiveHost.Failure) {
        let (sender, link) = parts.withLock { ($0.clockSender, $0.link) }
        do { try sender?.start() } catch { throw .thread(error) }
        do { try link?.start() } catch { throw .thread(error) }
    }

    /// Ends every thread (the JACK transport stopped and its timebase given up) and logs what was sent.
    func stop() {
        let p = parts.withLock { $0 }
        p.clockSender?.stop()
        p.jackFollowing?.stop()
        p.jackLeading?.stop()
        p.link?.stop()
        if let s = p.clockSender { log.append(s.summary) }
        if let l = p.link, l.failedCalls > 0 { log.append("Link: \(l.failedCalls) calls to the session failed") }
    }

    private func prepareClockOut(_ output: LiveOutput, client: SequencerClient?) throws(LiveHost.Failure) -> ClockOutTap? {
        guard !options.clockOut.isEmpty else { return nil }
        let audio = output.audio
        if let jack = audio.output as? JACKOutput {
            // JACK: the `clock` MIDI output, written by the process callback at each event's frame.
            guard jack.midiOutputs.clockPort == nil else { return nil }
            do {
                let port = try jack.midiOutputs.port(named: "clock")
                for spec in options.clockOut {
                    for d in try jack.midiOutputs.connect(port, to: spec) { log.append("MIDI clock out from \(port.port.fullName) to \(d)") }
                }
                jack.midiOutputs.clockPort = port
            } catch { throw .jack(error) }
            output.loadTransportPiece()
            return ClockOutTap(beats: parts.withLock { $0.beats })
        }
        guard parts.withLock({ $0.clockSender == nil }) else { return nil }
        guard let client else {
            throw .alsa(ALSAError(kind: .sequencerUnavailable, function: "snd_seq_open", code: -ENODEV,
                                  context: "--clock-out needs the ALSA sequencer"))
        }
        guard let clock = audio.clock else { return nil }
        do {
            let port = try ScheduledOutput(client: client, name: "clock")
            for spec in options.clockOut {
                for d in try port.connect(destination: spec) {
                    log.append("MIDI clock out from \(port.address) to \(d.address) '\(d.clientName)'")
                }
            }
            output.loadTransportPiece()
            let tap = ClockOutTap(beats: parts.withLock { $0.beats })
            let latency = max(audio.output.prefillFrames - audio.output.maxFrames, audio.output.maxFrames)
            let sender = ClockSender(tap: tap, output: port, clock: clock, latencyFrames: latency)
            parts.withLock { $0.clockSender = sender }
            return tap
        } catch { throw .alsa(error) }
    }

    /// `play --sync jack`: the transport follower on the JACK client (with `-a jack` only).
    private func prepareJACKFollowing(_ output: LiveOutput) throws(LiveHost.Failure) {
        guard options.syncJACK, parts.withLock({ $0.jackFollowing == nil }) else { return }
        guard let jack = output.audio.output as? JACKOutput else {
            throw .jack(JACKError(kind: .call, function: "jack_transport_query", code: -1))
        }
        let f = JACKTransportFollowing(client: { jack.client }, transport: output.transport, beats: parts.withLock { $0.beats })
        output.transport.stop()
        do { try f.start() } catch { throw .thread(error) }
        parts.withLock { $0.jackFollowing = f }
        log.append("following the JACK transport")
    }

    /// `--transport-master`: the timebase master and its thread on the JACK client (`-a jack` only).
    /// `play` leads with the piece's bars and tempo; `live` with an empty piece at 120 bpm in 4/4
    /// whose tempo is `transport.tempo`, the same beats `--clock-out` counts.
    private func prepareJACKLeading(_ output: LiveOutput) throws(LiveHost.Failure) {
        guard options.transportMaster, parts.withLock({ $0.jackLeading == nil }) else { return }
        guard let jack = output.audio.output as? JACKOutput else {
            throw .jack(JACKError(kind: .call, function: "jack_set_timebase_callback", code: -1))
        }
        output.loadTransportPiece()
        let live = output.piece?.isFile != true
        let leading = JACKTransportLeading(client: { jack.client }, transport: output.transport, beats: parts.withLock { $0.beats })
        try leading.start()
        parts.withLock { $0.jackLeading = leading }
        log.append("leading the JACK transport (timebase master: bar, beat, tick and tempo from "
                   + (live ? "transport.tempo" : "the piece") + ")")
    }

    /// `--link`: the Link peer, its thread started with the others; the piece (an
    /// empty one for live, for the transport to run) waits stopped for the session's bar.
    private func prepareLink(_ output: LiveOutput) throws(LiveHost.Failure) -> LinkFollowing? {
        guard options.link, parts.withLock({ $0.link == nil }), let clock = output.audio.clock else { return nil }
        output.loadTransportPiece()
        let sharesStartStop = output.piece?.isFile == true   // play's piece; live's empty one only runs the clock
        let transport = output.transport, audio = output.audio
        let start = output.piece?.start ?? 0, beats = parts.withLock { $0.beats }
        transport.stop()
        let latency = max(audio.output.prefillFrames - audio.output.maxFrames, audio.output.maxFrames)
        let f: LinkFollowing
        do {
            f = try LinkFollowing(transport: transport, clock: clock, latencyFrames: latency, beats: beats, start: start,
                                  beatsPerMinute: beats.beatsPerMinute(atSeconds: start) * transport.tempoScale,
                                  sharesStartStop: sharesStartStop, log: log)
        } catch { throw .link(error) }
        parts.withLock { $0.link = f }
        log.append("joined the Ableton Link session (quantum 4\(sharesStartStop ? ", start and stop shared" : ""))")
        return f
    }

    /// `play --sync clock[=PORT]`: the followed source connected; the piece waits for the master's Start (or Continue).
    private func prepareClockFollowing(_ output: LiveOutput, client: SequencerClient?) throws(LiveHost.Failure) {
        guard let spec = options.syncClock, parts.withLock({ $0.clockFollowing == nil }) else { return }
        guard let client else {
            throw .alsa(ALSAError(kind: .sequencerUnavailable, function: "snd_seq_open", code: -ENODEV,
                                  context: "--sync clock needs the ALSA sequencer"))
        }
        var source: PortInfo?
        if !spec.isEmpty {
            do { source = try client.connect(source: spec).first } catch { throw .alsa(error) }
        }
        let name = source.map { "\($0.address) '\($0.clientName)'" } ?? "any source's clock"
        let following = ClockFollowing(source: source?.address, sourceName: name, transport: output.transport,
                                       beats: parts.withLock { $0.beats }, clock: output.audio.clock)
        parts.withLock { $0.clockFollowing = following }
        output.transport.stop()
    }

    /// What the transport is in time with, for the view's and the web page's status line:
    /// "following 24:0 'Master' at 120.0 BPM" (`--sync clock`), "following the JACK
    /// transport at 90.0 BPM" (`--sync jack`: the file's tempo where the piece is, times
    /// the scale the master set), "leading the JACK transport at 80.0 BPM", "Link: 1 peer
    /// at 120.0 BPM, phase +0.2 ms" (`--link`); nil otherwise.
    func description(transport: Transport?) -> String? {
        func shown(_ bpm: Double) -> String { ((bpm * 10).rounded() / 10).description }
        let p = parts.withLock { $0 }
        if let l = p.link {
            let ms = (l.phaseErrorMilliseconds * 10).rounded() / 10 + 0  // + 0: no "-0.0"
            return "Link: \(l.peers) peer\(l.peers == 1 ? "" : "s") at \(l.beatsPerMinute.map(shown) ?? "–") BPM, phase \(ms >= 0 ? "+" : "")\(ms) ms"
        }
        if let f = p.clockFollowing {
            return "following \(f.sourceName) at \(f.beatsPerMinute.map(shown) ?? "–") BPM"
        }
        guard p.jackFollowing != nil || p.jackLeading != nil, let transport else { return nil }
        let bpm = p.beats.beatsPerMinute(atSeconds: transport.position) * transport.tempoScale
        return (p.jackLeading != nil ? "leading" : "following") + " the JACK transport at \(shown(bpm)) BPM"
    }
}
