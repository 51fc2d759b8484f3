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
public final class Transport: @unchecked Sendable {
    /// Words: 0 playing (0/1), 1 tempo scale (Double bits), 2 loop on (0/1),
    /// 3 loop start (seconds, Double bits), 4 loop end (seconds; ≤ 0 = the piece's end),
    /// 5 seek target (seconds), 6 seek count, 7 position (seconds, written by the render thread),
    /// 8 finished (0/1, render thread), 9 loop wraps (render thread), 10 duration (seconds, render thread).
    private let words: UnsafeMutablePointer<Atomic<UInt64>>
    private static let wordCount = 11

    public init() {
        words = .allocate(capacity: Self.wordCount)
        for i in 0..<Self.wordCount { (words + i).initialize(to: Atomic(0)) }
        words[0].store(1, ordering: .relaxed)
        words[1].store(1.0.bitPattern, ordering: .relaxed)
    }

    deinit {
        words.deinitialize(count: Self.wordCount); words.deallocate()
    }

    @inline(__always) private func double(_ i: Int) -> Double { Double(bitPattern: words[i].load(ordering: .acquiring)) }
    @inline(__always) private func setDouble(_ i: Int, _ v: Double) { words[i].store(v.bitPattern, ordering: .releasing) }

    // MARK: - Commands (any thread)

    /// Starts (or resumes) playing from the position. At the piece's end
    /// (not looping), starts again from the beginning.
    public func play() {
        if isFinished && isPlaying { seek(to: 0) }
        words[0].store(1, ordering: .releasing)
    }

    /// Stops: the notes the sequencer holds are released and sustain lifted;
    /// the position stays.
    public func stop() { words[0].store(0, ordering: .releasing) }

    /// Jumps to `seconds` of the piece (clamped to 0…duration): held notes
    /// are released, controllers reset, and the programs, controllers and
    /// pitch bend in force at the target re-applied ("chase").
    public func seek(to seconds: Double) {
        setDouble(5, seconds.isFinite ? max(0, seconds) : 0)
        words[6].wrappingAdd(1, ordering: .releasing)
    }

    /// Loops the whole piece (`start` 0, `end` nil) or a region in seconds of
    /// the piece; on, or off with `enabled` false. A region shorter than 50 ms is ignored.
    public func setLoop(_ enabled: Bool, start: Double = 0, end: Double? = nil) {
        setDouble(3, max(0, start))
        setDouble(4, end ?? 0)
        words[2].store(enabled ? 1 : 0, ordering: .releasing)
    }

    /// Playback speed: 2 plays twice as fast, 0.5 half as fast (clamped to 0.05…20).
    public func setTempoScale(_ scale: Double) {
        setDouble(1, scale.isFinite ? min(max(scale, 0.05), 20) : 1)
    }

    // MARK: - State (any thread)

    public var isPlaying: Bool { words[0].load(ordering: .acquiring) != 0 }
    public var tempoScale: Double { double(1) }
    public var isLooping: Bool { words[2].load(ordering: .acquiring) != 0 }
    /// The loop region in seconds; `end` nil for the piece's end.
    public var loopRegion: (start: Double, end: Double?) {
        let end = double(4)
        return (double(3), end > 0 ? end : nil)
    }
    /// Where the sequencer is in the piece, in seconds of the piece (not of wall time). Updated once per block.
    public var position: Double { double(7) }
    /// The scheduled piece's duration in seconds.
    public var duration: Double { double(10) }
    /// True once the piece has played to its end (not looping).
    public var isFinished: Bool { words[8].load(ordering: .acquiring) != 0 }
    /// Times the loop wrapped around.
    public var loopWraps: Int { Int(words[9].load(ordering: .relaxed)) }

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
    }

    @inline(__always) func poll() -> Commands {
        Commands(playing: words[0].load(ordering: .acquiring) != 0, tempoScale: double(1),
                 loop: words[2].load(ordering: .acquiring) != 0, loopStart: double(3), loopEnd: double(4),
                 seekCount: words[6].load(ordering: .acquiring), seekTarget: double(5))
    }

    @inline(__always) func publish(position: Double, finished: Bool, duration: Double) {
        setDouble(7, position)
        setDouble(10, duration)
        words[8].store(finished ? 1 : 0, ordering: .releasing)
    }

    @inline(__always) func countWraps(_ n: Int) { words[9].wrappingAdd(UInt64(n), ordering: .relaxed) }
}
