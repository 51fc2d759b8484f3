import Threads
import Synchronization

/// How live input is placed on the output's timeline (`--timing`).
public enum EventTiming: String, Sendable, CaseIterable {
    /// Stamped on arrival, played a constant latency (one period) later: the
    /// jitter is at most one FluidSynth block (64 frames), at any period size.
    case stamped
    /// At the start of the next block rendered: the lowest latency, but the
    /// timing jitters by up to a whole period.
    case asap
}

/// The mapping between the monotonic clock and the output's sample clock,
/// published by the output thread at each block start and read by the input
/// thread to turn an event's arrival time into a frame. Lock-free: two atomics.
///
/// Why the block starts and not `snd_pcm_status`'s htimestamp and delay: the
/// output thread wakes when the device has room for a period, so the earliest
/// wakes of the last `window` blocks are when the device wanted them; the
/// later ones are scheduling delay. Taking the minimum offset over a window
/// removes that delay without any ALSA call (the same code serves any backend
/// that renders in blocks), and follows a restart after an xrun within the
/// window. The loopback card and most drivers update their position only at
/// timer or period granularity (4 ms jiffies in the VM), which the status
/// timestamp would carry into every event: its delay, given to each block
/// start, has errors both ways, and the minimum picks the worst (tried: the
/// first MIDI clock out came 5.7 ms early).
///
/// The window is about `windowSeconds` of blocks, not a count: the wakes can
/// be late for a stretch (the loopback's timer beating against the period),
/// and 64 blocks of 256 frames (0.74 s) once let the minimum move 4.0 ms in
/// 8 s in the VM, and the stamped metronome's onsets spread to 1.5 ms (CI,
/// stop 33), where 64 blocks of 1024 frames (3 s) moved at most 0.41 ms.
///
/// Arrival times are on CLOCK_MONOTONIC too: the ALSA sequencer stamps each
/// event as it reaches Carillon's input port (`SequencerClient`, a queue of
/// its own related to the monotonic clock), so an event's place does not
/// depend on when the input thread ran; events fed in otherwise are stamped
/// with `now()` when the router takes them.
///
/// Threads: `publish` on the output thread only (no allocation, lock or wait);
/// `frame(arrival:)` on any thread.
public final class OutputClock: @unchecked Sendable {
    public let sampleRate: Double
    public let periodFrames: Int
    /// Frames between an event's arrival (on the render clock) and where it is played.
    public let latencyFrames: UInt64
    /// About how long a stretch of blocks the minimum is taken over.
    public static let windowSeconds = 3.0
    /// Blocks whose offsets the minimum is taken over: `windowSeconds` of
    /// periods, at least 64 and at most 4096.
    public let window: Int
    /// Blocks starting before this frame are not published: the output's
    /// prefill (ALSA starts the device once its buffer is full), rendered as
    /// fast as the CPU goes — or slower than real time, on a slow first render
    /// — and not when the device asked for them.
    public let settleFrames: UInt64

    /// Estimated monotonic nanoseconds at which frame 0 of the sample clock was
    /// due to render; `Int64.min` until the first block.
    private let origin = Atomic<Int64>(.min)
    /// The start frame of the last block published.
    private let lastBlock = Atomic<UInt64>(0)
    /// The start frame of the block after the last one rendered, published or
    /// not (the prefill's too): where an event goes before the clock is known.
    private let nextRendered = Atomic<UInt64>(0)
    /// Output thread only: the last `window` blocks' offsets (a ring), and their minimum.
    private let offsets: UnsafeMutablePointer<Int64>
    private var published = 0
    private var earliest = Int64.max
    /// Blocks starting before this frame are not published: `settleFrames` on from the (re)start.
    private var settleBefore: UInt64

    /// `latencyFrames` is one period unless given; `settleFrames`: the output's prefill.
    public init(sampleRate: Double, periodFrames: Int, latencyFrames: Int? = nil, settleFrames: Int = 0) {
        self.settleFrames = UInt64(max(0, settleFrames))
        settleBefore = self.settleFrames
        precondition(sampleRate > 0 && periodFrames > 0)
        self.sampleRate = sampleRate
        self.periodFrames = periodFrames
        self.latencyFrames = UInt64(max(0, latencyFrames ?? periodFrames))
        window = min(4096, max(64, Int((Self.windowSeconds * sampleRate / Double(periodFrames)).rounded(.up))))
        offsets = .allocate(capacity: window)
        offsets.initialize(repeating: .max, count: window)
    }

    deinit { offsets.deallocate() }

    /// The monotonic clock, in nanoseconds (CLOCK_MONOTONIC: never set back, counts no suspend).
    public static func now() -> UInt64 { monotonicNanoseconds() }

    /// Output thread, at each block start: the block starting at `frame` of the
    /// sample clock began to render at `nanos` of the monotonic clock.
    public func publish(blockStart frame: UInt64, at nanos: UInt64) {
        nextRendered.store(frame &+ UInt64(periodFrames), ordering: .relaxed)
        guard frame >= settleBefore else { return }
        let offset = Int64(bitPattern: nanos) &- Int64(Double(frame) * 1e9 / sampleRate)
        let slot = published % window
        let leaving = offsets[slot]
        offsets[slot] = offset
        published &+= 1
        if offset <= earliest {
            earliest = offset
        } else if leaving == earliest {
            // The minimum left the window: look again (rare; up to `window` compares).
            earliest = .max
            for i in 0..<window where offsets[i] < earliest { earliest = offsets[i] }
        }
        lastBlock.store(frame, ordering: .relaxed)
        origin.store(earliest, ordering: .releasing)
    }

    /// The output starts again at `frame` after an outage (its device reopened):
    /// what was learnt of the old device's timing is forgotten, and its prefill
    /// is not published again. Only while no output thread publishes; events
    /// placed meanwhile go at once, as before the first block.
    public func restart(at frame: UInt64) {
        origin.store(.min, ordering: .releasing)
        nextRendered.store(frame, ordering: .relaxed)
        offsets.update(repeating: .max, count: window)
        published = 0
        earliest = .max
        settleBefore = frame &+ settleFrames
    }

    /// Any thread: when the block holding `frame` was due to render, on the
    /// monotonic clock (the inverse of `frame(arrival:)` without the latency);
    /// nil before the first block. MIDI clock out schedules by it.
    public func nanos(ofFrame frame: UInt64) -> UInt64? {
        let origin = origin.load(ordering: .acquiring)
        guard origin != .min else { return nil }
        return UInt64(clamping: origin &+ Int64(Double(frame) * 1e9 / sampleRate))
    }

    /// Any thread: the frame of the sample clock at which an event that arrived
    /// at `nanos` plays — its arrival on the render clock plus `latencyFrames`.
    /// Clamped to [the last block's start, that + latency + 2 periods]: an
    /// arrival before the render clock (a stale stamp, a clock jump back) plays
    /// at once; one far ahead (the output stalled, a jump forward) no later
    /// than that. Before the clock is known (no block yet, or the output's
    /// prefill): at once, the start of the block after the last one rendered,
    /// where it plays (a take records the frame it played at).
    public func frame(arrival nanos: UInt64) -> UInt64 {
        let origin = origin.load(ordering: .acquiring)
        guard origin != .min else { return nextRendered.load(ordering: .relaxed) }
        let block = lastBlock.load(ordering: .relaxed)
        let latest = block &+ latencyFrames &+ 2 &* UInt64(periodFrames)
        // Rounded up: an event due in the block already rendering would come a block late.
        let elapsed = Double(Int64(clamping: nanos) &- origin) * sampleRate / 1e9
        let frame = (elapsed + Double(latencyFrames)).rounded(.up)
        if frame <= Double(block) { return block }
        return frame >= Double(latest) ? latest : UInt64(frame)
    }
}
