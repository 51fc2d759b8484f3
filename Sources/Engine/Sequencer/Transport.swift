import Synchronization

/// The sequencer's transport: play, stop, seek, loop and tempo scale, set
/// from any thread while rendering runs, and the position read back.
///
/// Commands are atomics the render thread polls once per block (at the start
/// of `Renderer.render`): the play state, the tempo scale and the loop are
/// states (the last one set wins), a seek is an event (each `seek` is counted,
/// so one set between two blocks is never lost; the latest target wins).
/// Nothing here blocks or allocates; every method may be called from any
/// thread, including a signal-free UI or MIDI input thread.
///
/// A clock-gated follower (`play --sync clock`) also sets a gate
/// (`openGate`): the piece may play up to, never past, the place of the
/// master's next clock, and each clock opens the gate one clock further at the
/// frame it was stamped at, pulling a transport that fell behind the clocks
/// back onto them (a bounded catch-up). Gates are events in order (a small lock-free
/// queue the render thread drains at their frames), since with one period of
/// latency two clocks may be in flight at once.
///
/// Bad values never reach the render thread: times are clamped to
/// 0…`maximumSeconds` (the sequencer turns them into sample frames, and a
/// conversion of an infinite or huge time would trap), and a command that
/// has no sensible meaning (a NaN, a loop that ends before it starts) is
/// refused — it changes nothing and is counted in `refusedCommands`.
public final class Transport: @unchecked Sendable {
    /// The latest time a command may name, in seconds of the piece (about 31
    /// years): far beyond any piece, and small enough that any sample rate
    /// times it fits a sample frame (`UInt64`).
    public static let maximumSeconds = 1e9
    /// The tempo scale's range.
    public static let tempoScaleRange = 0.05...20.0
    /// The most a clock follower's catch-up (`openGate`) plays faster than the tempo scale: +12.5 %.
    public static let catchUpLimit = 0.125
    /// A lag behind the master's clock that the catch-up leaves alone, in seconds: about the
    /// stamps' own jitter, which a correction would only copy into the notes.
    public static let phaseTolerance = 0.0005
    /// A lag (past the tolerance) is made up over this many clocks, unless that is faster than
    /// `catchUpLimit`: a clock jittered by ±2 ms moves the rate by 5 % at most, for one clock.
    public static let catchUpClocks = 2.0
    /// The most a catch-up makes up, in seconds: a lag beyond is no late clock but a break in the
    /// timeline (an output that was gone for a while), which 12.5 % faster would take 8× as long
    /// to make up; the piece goes on from where it is, as it did before catching up existed.
    public static let catchUpMaximumLag = 1.0

    // Doubles travel as their bit patterns. Commands (any thread):
    private let playing = Atomic<Bool>(true)
    private let scale = Atomic<UInt64>(1.0.bitPattern)
    private let looping = Atomic<Bool>(false)
    private let loopStart = Atomic<UInt64>(0)
    /// Seconds; 0 = the piece's end.
    private let loopEnd = Atomic<UInt64>(0)
    private let seekTarget = Atomic<UInt64>(0)
    /// The sample-clock frame a seek plays from (`play(from:atFrame:)`); 0: from the block that sees it.
    private let seekFrame = Atomic<UInt64>(0)
    private let seeks = Atomic<UInt64>(0)
    private let refused = Atomic<Int>(0)
    // Published by the render thread:
    private let positionBits = Atomic<UInt64>(0)
    private let finished = Atomic<Bool>(false)
    private let wraps = Atomic<UInt64>(0)
    private let durationBits = Atomic<UInt64>(0)
    /// The gate's openings, from the follower's thread to the render thread.
    let gates = GateQueue(capacity: 64)

    public init() {}

    @inline(__always) private static func load(_ a: borrowing Atomic<UInt64>) -> Double {
        Double(bitPattern: a.load(ordering: .acquiring))
    }
    @inline(__always) private static func store(_ a: borrowing Atomic<UInt64>, _ v: Double) {
        a.store(v.bitPattern, ordering: .releasing)
    }
    /// `seconds` clamped to 0…`maximumSeconds` (-inf → 0, +inf → the maximum); nil for NaN.
    @inline(__always) private static func clampedSeconds(_ seconds: Double) -> Double? {
        seconds.isNaN ? nil : min(max(seconds, 0), maximumSeconds)
    }
    private func refuse() { refused.wrappingAdd(1, ordering: .relaxed) }

    // MARK: - Commands (any thread)

    /// Starts (or resumes) playing from the position. At the piece's end
    /// (not looping), starts again from the beginning.
    public func play() {
        if isFinished && isPlaying { seek(to: 0) }
        playing.store(true, ordering: .releasing)
    }

    /// Stops: the notes the sequencer holds are released and sustain lifted;
    /// the position stays.
    public func stop() { playing.store(false, ordering: .releasing) }

    /// Jumps to `seconds` of the piece (clamped to 0…duration): held notes
    /// are released, controllers reset, and the programs, controllers and
    /// pitch bend in force at the target re-applied ("chase").
    /// Bad values: negative and -inf seek to 0, +inf and anything past the
    /// end to the end; NaN is refused (no seek) and counted.
    public func seek(to seconds: Double) {
        guard let target = Self.clampedSeconds(seconds) else { return refuse() }
        seekFrame.store(0, ordering: .relaxed)
        Self.store(seekTarget, target)
        seeks.wrappingAdd(1, ordering: .releasing)
    }

    /// Seeks to `seconds` (as `seek`) and plays from there, with `seconds` at
    /// sample-clock `frame` exactly rather than at the next block's start: a
    /// follower's Start or Continue at the frame its clock was stamped at (as
    /// `--timing stamped` places notes). A frame already rendered plays what
    /// lies between it and the block at once, so the piece stays on the
    /// master's timeline. NaN is refused and counted.
    public func play(from seconds: Double, atFrame frame: UInt64) {
        guard let target = Self.clampedSeconds(seconds) else { return refuse() }
        seekFrame.store(max(frame, 1), ordering: .relaxed)
        Self.store(seekTarget, target)
        seeks.wrappingAdd(1, ordering: .releasing)
        playing.store(true, ordering: .releasing)
    }

    /// The clock-gated follower's gate: the master's clock that belongs at
    /// `place` seconds of the piece was stamped at sample-clock `frame` (0:
    /// the block that sees it); from there on the piece may play up to, not
    /// including, `limit` seconds — the place of the clock after it. A
    /// transport that reached the old limit held there and goes on from it at
    /// `frame`; notes at or past the limit wait for the opening that passes
    /// them. A transport found behind `place` at `frame` (it waited for a late
    /// clock, or an early clock found it short) catches up: it plays faster
    /// than the tempo scale, by at most `catchUpLimit`, until it is
    /// back within `phaseTolerance` of the clocks, every note it
    /// passes played in order. The gate never moves the position back (a
    /// seek's target stands) and never skips. One thread sends them, in frame
    /// order; a full queue (the render thread stalled for 64 clocks) drops the
    /// opening and counts it in `refusedCommands`, and the next clock's opening
    /// carries on. NaN is refused and counted.
    public func openGate(at place: Double, upTo limit: Double, atFrame frame: UInt64) {
        guard let place = Self.clampedSeconds(place), let limit = Self.clampedSeconds(limit) else { return refuse() }
        if !gates.push(GateOpening(frame: frame, place: place, limit: limit)) { refuse() }
    }

    /// Loops the whole piece (`start` 0, `end` nil) or a region in seconds of
    /// the piece; on, or off with `enabled` false. A region shorter than 50 ms is ignored.
    /// Bad values: `start` and `end` are clamped to 0…`maximumSeconds`
    /// (negative or -inf → 0; +inf `end` means the piece's end, like nil; an
    /// `end` past the piece's end loops to the end). The whole call is
    /// refused (nothing changes, not even `enabled`) and counted when either
    /// is NaN, `start` is +inf, or `end` is not after `start`.
    public func setLoop(_ enabled: Bool, start: Double = 0, end: Double? = nil) {
        guard start != .infinity, let from = Self.clampedSeconds(start) else { return refuse() }
        var to = 0.0
        if let end, end != .infinity {
            guard let clamped = Self.clampedSeconds(end), clamped > from else { return refuse() }
            to = clamped
        }
        Self.store(loopStart, from)
        Self.store(loopEnd, to)
        looping.store(enabled, ordering: .releasing)
    }

    /// Playback speed: 2 plays twice as fast, 0.5 half as fast (clamped to
    /// `tempoScaleRange`, 0.05…20: zero, negative and -inf give 0.05, +inf 20).
    /// NaN is refused (the scale stays) and counted.
    public func setTempoScale(_ scale: Double) {
        guard !scale.isNaN else { return refuse() }
        Self.store(self.scale, min(max(scale, Self.tempoScaleRange.lowerBound), Self.tempoScaleRange.upperBound))
    }

    // MARK: - State (any thread)

    public var isPlaying: Bool { playing.load(ordering: .acquiring) }
    public var tempoScale: Double { Self.load(scale) }
    public var isLooping: Bool { looping.load(ordering: .acquiring) }
    /// The loop region in seconds; `end` nil for the piece's end.
    public var loopRegion: (start: Double, end: Double?) {
        let end = Self.load(loopEnd)
        return (Self.load(loopStart), end > 0 ? end : nil)
    }
    /// Where the sequencer is in the piece, in seconds of the piece (not of wall time). Updated once per block.
    public var position: Double { Self.load(positionBits) }
    /// The scheduled piece's duration in seconds.
    public var duration: Double { Self.load(durationBits) }
    /// True once the piece has played to its end (not looping).
    public var isFinished: Bool { finished.load(ordering: .acquiring) }
    /// Times the loop wrapped around.
    public var loopWraps: Int { Int(truncatingIfNeeded: wraps.load(ordering: .relaxed)) }
    /// Commands refused for a bad value (see each command), since creation.
    public var refusedCommands: Int { refused.load(ordering: .relaxed) }

    // MARK: - Render thread

    /// The commands as the render thread reads them at a block's start.
    struct Commands {
        var playing: Bool
        var tempoScale: Double
        var loop: Bool
        var loopStart: Double
        var loopEnd: Double
        var seekCount: UInt64
        var seekTarget: Double
        /// 0: the seek plays from the block that sees it.
        var seekFrame: UInt64
    }

    @inline(__always) func poll() -> Commands {
        Commands(playing: playing.load(ordering: .acquiring), tempoScale: Self.load(scale),
                 loop: looping.load(ordering: .acquiring), loopStart: Self.load(loopStart), loopEnd: Self.load(loopEnd),
                 seekCount: seeks.load(ordering: .acquiring), seekTarget: Self.load(seekTarget),
                 seekFrame: seekFrame.load(ordering: .relaxed))
    }

    @inline(__always) func publish(position: Double, finished: Bool, duration: Double) {
        Self.store(positionBits, position)
        Self.store(durationBits, duration)
        self.finished.store(finished, ordering: .releasing)
    }

    /// One gate opening (`openGate`): the clock at `place` seconds came at `frame`; from there
    /// on, the piece plays up to `limit` seconds.
    struct GateOpening: BitwiseCopyable {
        var frame: UInt64
        var place: Double
        var limit: Double
    }

    /// A single-producer, single-consumer queue of gate openings: the
    /// follower's thread pushes, the render thread peeks and pops (neither
    /// waits, locks nor allocates).
    typealias GateQueue = MessageRing<GateOpening>

    @inline(__always) func countWraps(_ n: Int) {
        wraps.wrappingAdd(UInt64(truncatingIfNeeded: n), ordering: .relaxed)
    }
}
