import ALSA
import Engine
import Glibc
import Hosting
import JACK
import MIDI
import Synchronization
import Sync
import Threads

/// MIDI clock out (`--clock-out`), the render side: after each block the
/// `ClockGenerator` works out the clock events the block's frames hold from
/// the renderer's piece map, and pushes them to the sender. Render thread
/// only: no allocation, lock, log or throw.
final class ClockOutTap: @unchecked Sendable {
    private var generator: ClockGenerator
    /// The render thread pushes, the sender pops.
    typealias Ring = MessageRing<ClockEvent>
    let ring = Ring(capacity: 1024)
    /// Events the ring had no room for (the sender fell behind).
    let dropped = Atomic<Int>(0)

    init(beats: BeatMap) { generator = ClockGenerator(beats: beats) }

    @inline(__always) func afterBlock(start: UInt64, frames: Int, map: PieceMap) {
        let ring = self.ring
        generator.block(start: start, frames: frames, map: map) { if !ring.push($0) { dropped.add(1, ordering: .relaxed) } }
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
    public var droppedEvents: Int { tap.dropped.load(ordering: .relaxed) }
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
/// stamped` places notes), not from the next block. The transport is gated
/// (`Transport.openGate`): each clock, at its stamped frame, lets the piece go
/// on up to the next clock's place and no further (`ClockFollower.gateBeat`),
/// so a Stop lands where the last clock let the piece go: at that place if it
/// got there, the master's own count (the Song Position it would send), never
/// past it. Each opening also names the clock's own place, so a piece that fell
/// behind the clocks (held for a late one) catches up with them (`Sequencer`'s
/// bounded catch-up) rather than staying behind by the lateness.
/// Runs on the sequencer's input thread (never the render thread).
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
        let (command, bpm, clockBeat, gateBeat) = state.withLock { f in
            (f.receive(m, at: now), f.beatsPerMinute, Double(f.clocks) / 24, f.gateBeat)
        }
        // 20…400 bpm: outside, a burst of clocks (a stalled sender), not a tempo.
        if let bpm, (20...400).contains(bpm) {
            bpmBits.store(bpm.bitPattern, ordering: .relaxed)
            let fileBPM = beats.beatsPerMinute(atSeconds: transport.position)
            transport.setTempoScale(bpm / fileBPM)
        }
        // The frame the message is heard at (0 without an output clock: the next block).
        let frame = clock?.frame(arrival: now) ?? 0
        switch command {
        case .play(let beat):
            if frame != 0 {
                transport.play(from: beats.seconds(atBeat: beat), atFrame: frame)
            } else {
                transport.seek(to: beats.seconds(atBeat: beat))
                transport.play()
            }
        case .stop: transport.stop()
        case .locate(let beat): transport.seek(to: beats.seconds(atBeat: beat))
        case nil: break
        }
        if m == .clock, let gate = gateBeat {
            transport.openGate(at: beats.seconds(atBeat: clockBeat), upTo: beats.seconds(atBeat: gate), atFrame: frame)
        }
        return true
    }
}
