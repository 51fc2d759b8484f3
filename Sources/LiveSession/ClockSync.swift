import ALSA
import Engine
import Glibc
import Hosting
import JACK
import MIDI
import Synchronization
import Sync
import Threads

/// A single-producer, single-consumer ring of clock events: the render
/// thread pushes (never waits: a full ring counts a drop), the sender pops.
final class ClockEventRing: @unchecked Sendable {
    static let capacity = 1024
    private let slots: UnsafeMutablePointer<ClockEvent>
    private let head = Atomic<Int>(0)   // next to pop (consumer)
    private let tail = Atomic<Int>(0)   // next to push (producer)
    let dropped = Atomic<Int>(0)

    init() {
        slots = .allocate(capacity: Self.capacity)
        slots.initialize(repeating: ClockEvent(frame: 0, kind: .clock), count: Self.capacity)
    }
    deinit { slots.deallocate() }

    /// Render thread.
    @inline(__always) func push(_ e: ClockEvent) {
        let t = tail.load(ordering: .relaxed)
        guard t &- head.load(ordering: .acquiring) < Self.capacity else { dropped.add(1, ordering: .relaxed); return }
        slots[t % Self.capacity] = e
        tail.store(t &+ 1, ordering: .releasing)
    }

    /// Sender thread: the oldest event, left in the ring.
    func peek() -> ClockEvent? {
        let h = head.load(ordering: .relaxed)
        guard h != tail.load(ordering: .acquiring) else { return nil }
        return slots[h % Self.capacity]
    }

    /// Sender thread: drops the event `peek` gave.
    func pop() { head.store(head.load(ordering: .relaxed) &+ 1, ordering: .releasing) }
}

/// MIDI clock out (`--clock-out`), the render side: after each block the
/// `ClockGenerator` works out the clock events the block's frames hold from
/// the renderer's piece map, and pushes them to the sender. Render thread
/// only: no allocation, lock, log or throw.
final class ClockOutTap: @unchecked Sendable {
    private var generator: ClockGenerator
    let ring = ClockEventRing()

    init(beats: BeatMap) { generator = ClockGenerator(beats: beats) }

    @inline(__always) func afterBlock(start: UInt64, frames: Int, map: PieceMap) {
        let ring = self.ring
        generator.block(start: start, frames: frames, map: map) { ring.push($0) }
    }
}

/// MIDI clock out, the sending side: a thread that takes the render
/// thread's clock events and schedules each on the ALSA sequencer at the
/// monotonic time its frame is heard (`OutputClock`'s frame → time, plus the
/// output's latency), so the clocks do not jitter with the period.
public final class ClockSender: @unchecked Sendable {
    let tap: ClockOutTap
    private let output: ScheduledOutput
    private let clock: OutputClock
    private let latencyNanos: UInt64
    private let loop = StoppableThread()
    private let failures = Atomic<Int>(0)
    public var sendFailures: Int { failures.load(ordering: .relaxed) }
    public var droppedEvents: Int { tap.ring.dropped.load(ordering: .relaxed) }
    private let sentCount = Atomic<Int>(0)
    public var sent: Int { sentCount.load(ordering: .relaxed) }
    /// Events whose time had passed when the sender had them (sent at once), and those sent untimed.
    private let lateCount = Atomic<Int>(0), untimedCount = Atomic<Int>(0)
    public var late: Int { lateCount.load(ordering: .relaxed) }
    public var untimed: Int { untimedCount.load(ordering: .relaxed) }
    /// "MIDI clock out: 192 sent, 0 late, 0 untimed, 0 dropped, 0 failed".
    public var summary: String {
        "MIDI clock out: \(sent) sent, \(late) late, \(untimed) untimed, \(droppedEvents) dropped, \(sendFailures) failed; the last due \(drainedNanos / 1_000_000) ms after stop"
    }

    init(tap: ClockOutTap, output: ScheduledOutput, clock: OutputClock, latencyFrames: Int) {
        self.tap = tap; self.output = output; self.clock = clock
        latencyNanos = UInt64(Double(max(0, latencyFrames)) * 1e9 / clock.sampleRate)
    }

    func start() throws(ThreadError) {
        try loop.start(name: "clock-out") { [self] stopping in run(until: stopping) }
    }

    private func run(until stopping: CancellationFlag) {
        _ = RealtimeScheduling.requestFIFO(priority: 72)
        while !stopping.isSet {
            // Until the output's clock is known (its prefill rendered), the events wait.
            while let e = tap.ring.peek(), let at = clock.nanos(ofFrame: e.frame) {
                tap.ring.pop()
                let now = monotonicNanoseconds()
                let due = at &+ latencyNanos
                if due <= now { lateCount.add(1, ordering: .relaxed) }
                if due > lastDue.load(ordering: .relaxed) { lastDue.store(due, ordering: .relaxed) }
                if !output.isTimed { untimedCount.add(1, ordering: .relaxed) }
                do { try output.send(e.message, at: due); sentCount.add(1, ordering: .relaxed) } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
            usleep(1000)
        }
    }

    /// Stops the thread, then waits (at most a second) until what it scheduled has gone out:
    /// the queue is the client's, and closing the client drops what it still holds.
    func stop() {
        loop.stop()
        let last = lastDue.load(ordering: .relaxed), now = monotonicNanoseconds()
        drainedNanos = last > now ? last - now : 0
        if last > now { usleep(UInt32(min(last - now + 50_000_000, 2_000_000_000) / 1000)) }
    }

    /// How long `stop` waited for the last scheduled event.
    private var drainedNanos: UInt64 = 0

    /// The latest time an event was scheduled for.
    private let lastDue = Atomic<UInt64>(0)
}

/// MIDI clock in (`play --sync clock`): the clock messages from the
/// followed source go to a `ClockFollower`; its commands drive the transport
/// and its tempo sets the tempo scale against the file's tempo where the
/// piece is. Start and Continue play from the frame their clock was stamped
/// at (`OutputClock.frame(arrival:)`: its arrival one period on, as `--timing
/// stamped` places notes), not from the next block. Runs on the sequencer's
/// input thread (never the render thread).
public final class ClockFollowing: @unchecked Sendable {
    /// The followed source (nil: any source's clock).
    public let source: SeqAddress?
    public let sourceName: String
    private let transport: Transport
    private let beats: BeatMap
    /// The output's clock, to stamp Start and Continue; nil: they play from the next block.
    private let clock: OutputClock?
    private let state = Mutex(ClockFollower())
    private let bpmBits = Atomic<UInt64>(0)

    init(source: SeqAddress?, sourceName: String, transport: Transport, beats: BeatMap, clock: OutputClock?) {
        self.source = source; self.sourceName = sourceName; self.transport = transport; self.beats = beats; self.clock = clock
    }

    /// The master's tempo (bpm) as followed; nil before two clocks.
    public var beatsPerMinute: Double? {
        let b = Double(bitPattern: bpmBits.load(ordering: .relaxed))
        return b > 0 ? b : nil
    }

    /// Takes `event` if it is a clock message from the followed source; whether it did.
    func take(_ event: SequencerEvent) -> Bool {
        guard case .message(let message, let from, let arrival) = event else { return false }
        if let source, from != source { return false }
        let m: ClockFollower.Message
        switch message {
        case .timingClock: m = .clock
        case .start: m = .start
        case .continue: m = .continue
        case .stop: m = .stop
        case .songPosition(let v): m = .songPosition(Int(v.value))
        default: return false
        }
        let now = arrival ?? monotonicNanoseconds()
        let (command, bpm) = state.withLock { f in (f.receive(m, at: now), f.beatsPerMinute) }
        // 20…400 bpm: outside, a burst of clocks (a stalled sender), not a tempo.
        if let bpm, (20...400).contains(bpm) {
            bpmBits.store(bpm.bitPattern, ordering: .relaxed)
            let fileBPM = beats.beatsPerMinute(atSeconds: transport.position)
            transport.setTempoScale(bpm / fileBPM)
        }
        switch command {
        case .play(let beat):
            if let clock {
                transport.play(from: beats.seconds(atBeat: beat), atFrame: clock.frame(arrival: now))
            } else {
                transport.seek(to: beats.seconds(atBeat: beat))
                transport.play()
            }
        case .stop: transport.stop()
        case .locate(let beat): transport.seek(to: beats.seconds(atBeat: beat))
        case nil: break
        }
        return true
    }
}

extension LiveHost {
    /// The piece's tempo map: MIDI clock out counts its beats, clock in
    /// turns the master's beats into its seconds. Before `start`.
    /// Its time signatures give the JACK transport's bars (`--transport-master`).
    public func useTempoMap(_ map: TempoMap, timeSignatures: [TimeSignatureChange] = []) {
        beats = BeatMap(tempoMap: map, timeSignatures: timeSignatures)
    }

    /// `--clock-out` and `--sync clock`, set up before the output starts:
    /// the clock port connected to its destinations, the tap on the render
    /// thread and the sender (ALSA; with JACK the process callback writes the
    /// clock itself); the followed source connected.
    func startSync(_ audio: LiveAudio) throws(Failure) {
        if !options.clockOut.isEmpty, let jack = audio.output as? JACKOutput, jack.midiOutputs.clockPort == nil {
            // JACK: the `clock` MIDI output, written by the process callback at each event's frame.
            do {
                let port = try jack.midiOutputs.port(named: "clock")
                for spec in options.clockOut {
                    for d in try jack.midiOutputs.connect(port, to: spec) { log.append("MIDI clock out from \(port.port.fullName) to \(d)") }
                }
                jack.midiOutputs.clockPort = port
            } catch { throw .jack(error) }
            loadTransportPiece()
            audio.clockOut = ClockOutTap(beats: beats)
        } else if !options.clockOut.isEmpty, clockSender == nil {
            guard let client else {
                throw .alsa(ALSAError(kind: .sequencerUnavailable, function: "snd_seq_open", code: -ENODEV,
                                      context: "--clock-out needs the ALSA sequencer"))
            }
            guard let clock = audio.clock else { return }
            do {
                let port = try ScheduledOutput(client: client, name: "clock")
                for spec in options.clockOut {
                    for d in try port.connect(destination: spec) {
                        log.append("MIDI clock out from \(port.address) to \(d.address) '\(d.clientName)'")
                    }
                }
                loadTransportPiece()
                let tap = ClockOutTap(beats: beats)
                audio.clockOut = tap
                let latency = max(audio.output.prefillFrames - audio.output.maxFrames, audio.output.maxFrames)
                clockSender = ClockSender(tap: tap, output: port, clock: clock, latencyFrames: latency)
            } catch { throw .alsa(error) }
        }
        try startJACKFollowing(audio)
        try startJACKLeading(audio)
        try startLink(audio)
        if let spec = options.syncClock, clockFollowing == nil {
            guard let client else {
                throw .alsa(ALSAError(kind: .sequencerUnavailable, function: "snd_seq_open", code: -ENODEV,
                                      context: "--sync clock needs the ALSA sequencer"))
            }
            var source: PortInfo?
            if !spec.isEmpty {
                do { source = try client.connect(source: spec).first } catch { throw .alsa(error) }
            }
            let name = source.map { "\($0.address) '\($0.clientName)'" } ?? "any source's clock"
            clockFollowing = ClockFollowing(source: source?.address, sourceName: name,
                                            transport: audio.renderer.transport, beats: beats, clock: audio.clock)
            // Wait for the master's Start (or Continue).
            audio.renderer.transport.stop()
        }
    }

    /// `play --sync jack`: the transport follower on the JACK client (with `-a jack` only).
    func startJACKFollowing(_ audio: LiveAudio) throws(Failure) {
        guard options.syncJACK, jackFollowing == nil else { return }
        guard let output = audio.output as? JACKOutput else {
            throw .jack(JACKError(kind: .call, function: "jack_transport_query", code: -1))
        }
        let f = JACKTransportFollowing(client: { output.client }, transport: audio.renderer.transport, beats: beats)
        audio.renderer.transport.stop()
        do { try f.start() } catch { throw .thread(error) }
        jackFollowing = f
        log.append("following the JACK transport")
    }

    /// `play --transport-master`: the timebase master and its thread on the JACK client (`-a jack` only).
    func startJACKLeading(_ audio: LiveAudio) throws(Failure) {
        guard options.transportMaster, jackLeading == nil else { return }
        guard let output = audio.output as? JACKOutput else {
            throw .jack(JACKError(kind: .call, function: "jack_set_timebase_callback", code: -1))
        }
        let leading = JACKTransportLeading(client: { output.client }, transport: audio.renderer.transport, beats: beats)
        try leading.start()
        jackLeading = leading
        log.append("leading the JACK transport (timebase master: bar, beat, tick and tempo from the piece)")
    }

    /// `--link`: the Link peer, its thread started with the others; the piece (an
    /// empty one for live, for the transport to run) waits stopped for the session's bar.
    func startLink(_ audio: LiveAudio) throws(Failure) {
        guard options.link, linkFollowing == nil, let clock = audio.clock else { return }
        let sharesStartStop = hasPiece   // play's piece; live's empty one only runs the clock
        loadTransportPiece()
        let transport = audio.renderer.transport
        transport.stop()
        let latency = max(audio.output.prefillFrames - audio.output.maxFrames, audio.output.maxFrames)
        do {
            let f = try LinkFollowing(transport: transport, clock: clock, latencyFrames: latency, beats: beats, start: startSeconds,
                                      beatsPerMinute: beats.beatsPerMinute(atSeconds: startSeconds) * transport.tempoScale,
                                      sharesStartStop: sharesStartStop, log: log)
            audio.link = f
            linkFollowing = f
        } catch { throw .link(error) }
        log.append("joined the Ableton Link session (quantum 4\(sharesStartStop ? ", start and stop shared" : ""))")
    }

    /// Without a piece (live): an empty one a day long, for the transport (`transport.tempo`)
    /// to run the clock out and the Link session on.
    func loadTransportPiece() {
        if !hasPiece { load(Score(events: [], duration: 24 * 3600)) }
    }

    /// What the transport is in time with, for the view's and the web page's status line:
    /// "following 24:0 'Master' at 120.0 BPM" (`--sync clock`), "following the JACK
    /// transport at 90.0 BPM" (`--sync jack`: the file's tempo where the piece is, times
    /// the scale the master set), "leading the JACK transport at 80.0 BPM", "Link: 1 peer
    /// at 120.0 BPM, phase +0.2 ms" (`--link`); nil otherwise.
    public var syncDescription: String? {
        func shown(_ bpm: Double) -> String { ((bpm * 10).rounded() / 10).description }
        if let l = linkFollowing {
            let ms = (l.phaseErrorMilliseconds * 10).rounded() / 10 + 0  // + 0: no "-0.0"
            return "Link: \(l.peers) peer\(l.peers == 1 ? "" : "s") at \(l.beatsPerMinute.map(shown) ?? "–") BPM, phase \(ms >= 0 ? "+" : "")\(ms) ms"
        }
        if let f = clockFollowing {
            return "following \(f.sourceName) at \(f.beatsPerMinute.map(shown) ?? "–") BPM"
        }
        guard jackFollowing != nil || jackLeading != nil, let transport else { return nil }
        let bpm = beats.beatsPerMinute(atSeconds: transport.position) * transport.tempoScale
        return (jackLeading != nil ? "leading" : "following") + " the JACK transport at \(shown(bpm)) BPM"
    }
}
