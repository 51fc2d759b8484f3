import Engine
import Glibc
import Hosting
import Link
import Synchronization
import Sync
import Threads

/// Where the piece was at the end of the last block, published by the render
/// thread (a sequence lock over three atomics: no allocation, lock or wait) for
/// `LinkFollowing` to read the piece's position and the frame it belongs to
/// as one pair.
final class PiecePositionTap: @unchecked Sendable {
    private let sequence = Atomic<UInt64>(0)
    private let frameBits = Atomic<UInt64>(0), positionBits = Atomic<UInt64>(0), playingBit = Atomic<Bool>(false)

    /// Render thread, after each block: `frame` is the block's end on the sample clock.
    @inline(__always) func publish(frame: UInt64, position: Double, playing: Bool) {
        let s = sequence.load(ordering: .relaxed)
        sequence.store(s &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        frameBits.store(frame, ordering: .relaxed)
        positionBits.store(position.bitPattern, ordering: .relaxed)
        playingBit.store(playing, ordering: .relaxed)
        sequence.store(s &+ 2, ordering: .releasing)
    }

    /// Any thread: the last pair published (nil before the first block).
    func read() -> (frame: UInt64, position: Double, playing: Bool)? {
        for _ in 0..<8 {
            let s1 = sequence.load(ordering: .acquiring)
            if s1 == 0 { return nil }
            let f = frameBits.load(ordering: .relaxed), p = positionBits.load(ordering: .relaxed)
            let playing = playingBit.load(ordering: .relaxed)
            atomicMemoryFence(ordering: .acquiring)
            if s1 & 1 == 0, sequence.load(ordering: .relaxed) == s1 { return (f, Double(bitPattern: p), playing) }
        }
        return nil
    }
}

/// `live --link` and `play --link`: Carillon as a peer in an Ableton Link
/// session. A thread of its own (never the render thread) asks the session
/// every 5 ms and drives the transport by `LinkLock`'s decisions:
///
/// - the piece waits, stopped, and starts on the session's next bar (quantum
///   4: the first beat of the piece, or of `--start`, on a downbeat — at once
///   when alone, Link's quantized launch), the play command given so the
///   block it starts in is heard then;
/// - its tempo is the session's, and a `transport.tempo` change here is given
///   to the session (`LinkLock`);
/// - while it plays, its beat at the time a frame is heard (`OutputClock` plus
///   the output's latency, on Link's clock) is held to the session's beat phase;
/// - with a piece (`play`), start and stop are shared with the peers that share
///   theirs (Link's start/stop sync): the piece's start starts the session; a peer's stop
///   stops the piece where it is, and a peer's start plays it on from there,
///   on the session's next bar as at first; a stop or play here (the view's
///   space, the web page, OSC) stops or starts the session. The piece's own
///   end does not stop the others. `live` (no piece: an empty one runs the
///   clock) does not: joining a session is not pressing its play.
public final class LinkFollowing: @unchecked Sendable {
    public let session: LinkSession
    private let transport: Transport
    private let clock: OutputClock
    private let tap = PiecePositionTap()
    private let latencyNanos: UInt64
    private let periodNanos: UInt64
    private var lock: LinkLock
    /// Where the next start plays from: `--start`, then where a peer's stop left the piece.
    private var startSeconds: Double
    /// Whether start and stop are shared (`play`, not `live`).
    private let sharesStartStop: Bool
    /// The session's start/stop and the piece's, as last seen (`followStartStop`).
    private var sessionPlaying = false, piecePlaying = false
    private let log: HostLog
    private let loop = StoppableThread()
    private let failures = Atomic<Int>(0)
    private let bpmBits = Atomic<UInt64>(0)
    private let lastPhaseErrorBits = Atomic<UInt64>(0)
    private let peersCount = Atomic<Int>(0)
    private let startedAt = Atomic<Int64>(0)
    /// After a seek: the phase is not read again until the tap's frame passes this (the seek heard).
    private var holdUntilFrame: UInt64 = 0

    /// Joins the session at `beatsPerMinute` (the piece's tempo: the session's if
    /// there is one); `sharesStartStop`: with Link's start/stop sync (a piece's).
    init(transport: Transport, clock: OutputClock, latencyFrames: Int, beats: BeatMap, start: Double,
         beatsPerMinute: Double, sharesStartStop: Bool, log: HostLog) throws(LinkError) {
        session = try LinkSession(beatsPerMinute: min(max(beatsPerMinute, LinkLock.tempoRange.lowerBound), LinkLock.tempoRange.upperBound))
        self.sharesStartStop = sharesStartStop
        if sharesStartStop { try session.enableStartStopSync(true) }
        try session.enable(true)
        self.transport = transport; self.clock = clock; self.log = log
        latencyNanos = UInt64(Double(max(0, latencyFrames)) * 1e9 / clock.sampleRate)
        periodNanos = UInt64(Double(clock.periodFrames) * 1e9 / clock.sampleRate)
        lock = LinkLock(beats: beats)
        startSeconds = start
    }

    /// Render thread, after each block.
    @inline(__always) func afterBlock(endFrame: UInt64) {
        tap.publish(frame: endFrame, position: transport.position, playing: transport.isPlaying && !transport.isFinished)
    }

    func start() throws(ThreadError) {
        try loop.start(name: "link") { [self] stopping in run(until: stopping) }
    }

    /// Stops the thread and leaves the session.
    func stop() {
        loop.stop()
        do { try session.enable(false) } catch { failed(error) }
    }

    /// The session's tempo as last read (nil before).
    public var beatsPerMinute: Double? {
        let b = Double(bitPattern: bpmBits.load(ordering: .relaxed))
        return b > 0 ? b : nil
    }
    public var peers: Int { peersCount.load(ordering: .relaxed) }
    /// The piece's phase error (ms) at the last step while playing.
    public var phaseErrorMilliseconds: Double { Double(bitPattern: lastPhaseErrorBits.load(ordering: .relaxed)) }
    /// Calls to the session that failed (the first is in the log).
    public var failedCalls: Int { failures.load(ordering: .relaxed) }

    private func failed(_ e: LinkError) {
        if failures.add(1, ordering: .relaxed).newValue == 1 { log.append("Link: \(e)") }
    }

    /// How long the piece waits after joining before it starts: Link finds its
    /// peers and measures their clocks first. A start/stop committed before
    /// that is stamped on a clock the session does not share yet, and a peer
    /// may keep its own, older state (seen: the probe still stopped 20 s after
    /// the piece started it).
    static let joinSeconds = 1.0

    private func run(until stopping: CancellationFlag) {
        var started = false
        let joined = monotonicNanoseconds()
        while !stopping.isSet {
            do throws(LinkError) {
                peersCount.store(session.peers, ordering: .relaxed)
                if !started {
                    if monotonicNanoseconds() - joined >= UInt64(Self.joinSeconds * 1e9) { started = try launch() }
                } else {
                    started = sharesStartStop ? try followStartStop() : true
                    if started { try follow() }
                }
            } catch { failed(error) }
            usleep(5000)
        }
    }

    /// The start: once the output's clock is known, the piece's first beat is
    /// requested a little ahead (latency, two periods and 50 ms), at the session's
    /// next time with its phase (sharing start/stop: and the session is playing
    /// from then, if it was not); the play command goes out so that the block it
    /// takes effect in is heard then. True once it has.
    private func launch() throws(LinkError) -> Bool {
        let state = try session.state(quantum: LinkLock.quantum)
        bpmBits.store(state.beatsPerMinute.bitPattern, ordering: .relaxed)
        let step = lock.step(linkBPM: state.beatsPerMinute, scale: transport.tempoScale, position: startSeconds, phaseError: nil)
        transport.setTempoScale(step.scale)
        guard clock.nanos(ofFrame: 0) != nil else { return false }
        let lead = latencyNanos + 2 * periodNanos + 50_000_000
        let firstBeat = lock.beats.beat(atSeconds: startSeconds)
        let ahead = LinkSession.linkMicros(monotonicNanos: monotonicNanoseconds() + lead)
        if sharesStartStop {
            try session.setPlaying(true, at: ahead, beat: firstBeat, quantum: LinkLock.quantum)
        } else {
            try session.requestBeat(firstBeat, at: ahead, quantum: LinkLock.quantum)
        }
        let heard = LinkSession.monotonicNanos(linkMicros: try session.time(atBeat: firstBeat, quantum: LinkLock.quantum))
        // A block's commands are read as it starts rendering and heard `latency` later: half a period early.
        let due = heard &- latencyNanos &- periodNanos / 2
        while monotonicNanoseconds() < due, !loop.stopping.isSet { usleep(UInt32(min(1000, (due &- monotonicNanoseconds()) / 1000 + 1))) }
        transport.seek(to: startSeconds)
        transport.play()
        sessionPlaying = true; piecePlaying = true
        let given = monotonicNanoseconds()
        startedAt.store(LinkSession.linkMicros(monotonicNanos: heard), ordering: .relaxed)
        log.append("Link: \(session.peers) peer\(session.peers == 1 ? "" : "s"), \(formatBPM(state.beatsPerMinute)) bpm; "
                   + "the piece starts on the session's bar, heard in \((Int64(heard) &- Int64(given)) / 1_000_000) ms")
        return true
    }

    /// Start and stop, both ways (see the type). False when the piece is to start
    /// again on the session's bar (`launch`): a peer started the session.
    private func followStartStop() throws(LinkError) -> Bool {
        let now = session.now
        let state = try session.state(at: now, quantum: LinkLock.quantum)
        let piece = transport.isPlaying && !transport.isFinished
        defer { sessionPlaying = state.isPlaying; piecePlaying = piece }
        if sessionPlaying && !state.isPlaying {
            guard piece else { return true }
            transport.stop()
            startSeconds = transport.position
            log.append("Link: a peer stopped the session: the piece stops at \(seconds(startSeconds)) s")
            return true
        }
        if !sessionPlaying && state.isPlaying && !piece && !transport.isFinished {
            startSeconds = transport.position
            log.append("Link: a peer started the session: the piece plays on from \(seconds(startSeconds)) s on the session's bar")
            return false
        }
        if piecePlaying && !piece && !transport.isFinished && state.isPlaying {
            try session.setPlaying(false, at: now, beat: state.beat, quantum: LinkLock.quantum)
            log.append("Link: stopped here: the session stops")
        } else if !piecePlaying && piece && !state.isPlaying {
            try session.setPlaying(true, at: now, beat: lock.beats.beat(atSeconds: transport.position), quantum: LinkLock.quantum)
            log.append("Link: started here: the session starts")
        }
        return true
    }

    /// While running: tempo both ways, and the phase held while the piece plays.
    private func follow() throws(LinkError) {
        let now = session.now
        var phaseError: Double?
        var position = transport.position
        if let p = tap.read(), p.playing, p.frame > holdUntilFrame, let blockNanos = clock.nanos(ofFrame: p.frame) {
            // The frame after the last block is heard at its render time plus the latency.
            let heard = LinkSession.linkMicros(monotonicNanos: blockNanos &+ latencyNanos)
            let s = try session.state(at: heard, quantum: LinkLock.quantum)
            position = p.position
            phaseError = LinkLock.phaseError(sessionBeat: s.beat, pieceBeat: lock.beats.beat(atSeconds: p.position))
        }
        let state = try session.state(at: now, quantum: LinkLock.quantum)
        bpmBits.store(state.beatsPerMinute.bitPattern, ordering: .relaxed)
        let step = lock.step(linkBPM: state.beatsPerMinute, scale: transport.tempoScale, position: position, phaseError: phaseError)
        if let bpm = step.share { try session.setTempo(bpm, at: now) }
        if let seek = step.seek {
            log.append("Link: the piece was \(((phaseError ?? 0) * 1000).rounded() / 1000) beats off the session's phase: sought to \(seek) s")
            transport.seek(to: seek)
            holdUntilFrame = (tap.read()?.frame ?? 0) + 2 * UInt64(clock.periodFrames)
        }
        transport.setTempoScale(step.scale)
        let ms = (phaseError ?? 0) * 60_000 / max(state.beatsPerMinute, 1)
        lastPhaseErrorBits.store(ms.bitPattern, ordering: .relaxed)

    }

    private func formatBPM(_ bpm: Double) -> String { ((bpm * 10).rounded() / 10).description }
    private func seconds(_ s: Double) -> String { ((s * 100).rounded() / 100).description }
}
