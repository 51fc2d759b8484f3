import Engine
import Hosting
import Synchronization
import Glibc
#if canImport(Glibc)
#endif

/// Where live audio goes: an ALSA PCM device (`ALSAOutput`: a thread of its
/// own renders a period and writes it) or a JACK client (`JACKOutput`: JACK's
/// process callback renders). `LiveHost` picks one by `Options.backend` and
/// otherwise sees only this; both render through the same `OutputCycle`.
///
/// Threads: `start` and `finish` from the host's owner thread; the rest from any.
protocol AudioOutput: AnyObject, Sendable {
    /// One line for the view: the device or client, rate, period.
    var summary: String { get }
    var sampleRate: Int { get }
    /// The largest block the renderer is asked for: prepare it and size the recorder's blocks with this.
    var maxFrames: Int { get }
    /// The period now, in seconds: the render budget of one block.
    var periodDuration: Double { get }
    /// Frames rendered ahead, as fast as they render, before the output plays
    /// (ALSA: its buffer, the start threshold; JACK: none): `OutputClock.settleFrames`.
    var prefillFrames: Int { get }
    /// Underruns (ALSA) or the server's xruns (JACK) so far.
    var xruns: Int { get }
    /// Starts rendering blocks through `cycle` until `cycle.shared.stop` is set,
    /// or until the output fails for good: then it puts the reason in `shared.fault` and renders no more.
    func start(_ cycle: OutputCycle) throws(LiveHost.Failure)
    /// After a fault: waits until nothing renders any more (the output thread
    /// joined, the dead JACK client deactivated), so the caller may use the
    /// renderer on its own thread. Not on the render thread.
    func halt()
    /// After `halt`: opens the same device or server again and renders through
    /// the same cycle. Throws when it is not there yet, or comes back with
    /// another sample rate or a larger period than the renderer was prepared for.
    func reopen() throws(LiveHost.Failure)
    /// After `shared.stop` is set: the last block (all sound off, its release
    /// heard) and the end of the output. Idempotent.
    func finish()
    /// Seconds without a block, while it should play, after which the output
    /// is stalled (a fault: `AudioSupervisor` halts and reopens it); nil: not watched.
    var stallLimit: Double? { get }
}

extension AudioOutput {
    /// Off the render thread, a few times a second while the output plays: the
    /// chores a reopened output has (JACK: connections lost with the server, made
    /// again as the other clients come back). Nothing by default.
    func maintain() {}

    /// Not watched by default (JACK): the process thread is the server's and blocks on no device of
    /// ours, a server that dies says so (`jack_on_shutdown`), and one that hangs hangs every client alike.
    var stallLimit: Double? { nil }
}

/// The choice of `AudioOutput` (`-a alsa|jack`, as fluidsynth spells it).
public enum AudioBackend: String, Sendable, CaseIterable {
    case alsa, jack
}

/// What the render side shares with the other threads: atomics only in the block loop.
final class OutputState: Sendable {
    let stop = Atomic<Bool>(false)
    /// Blocks rendered: the output's progress, which `OutputStallWatch` reads.
    let blocks = Atomic<Int>(0)
    /// Frames the supervisor rendered away (never heard) while the output was down.
    let framesRenderedAway = Atomic<Int>(0)
    let renderNanosTotal = Atomic<Int>(0)
    let renderNanosWorst = Atomic<Int>(0)
    /// Set by the output when it fails for good (render, notification or output thread); taken by `AudioSupervisor`.
    let fault = Mutex<String?>(nil)
    /// Why the session must end (`--give-up-after` passed without audio): the view's loop ends on it.
    let failure = Mutex<String?>(nil)
    /// "no audio: REASON, retrying" while the output is down, for the views.
    let outage = Mutex<String?>(nil)
    let realtime = Mutex<String>("not requested")

    func recordBlock(nanos: Int) {
        blocks.add(1, ordering: .relaxed)
        renderNanosTotal.add(nanos, ordering: .relaxed)
        if nanos > renderNanosWorst.load(ordering: .relaxed) { renderNanosWorst.store(nanos, ordering: .relaxed) }
    }
}

/// One block, the same for every backend: publish its start to the `clock`
/// (`--timing stamped`), render it (timed and counted for the status), then
/// copy it to the recorder. Render thread only: no allocation, lock, log or throw.
final class OutputCycle: @unchecked Sendable {
    let renderer: Renderer, shared: OutputState, recorder: Recorder?, clock: OutputClock?, spectrum: SpectrumTap?
    /// `--clock-out`: the clock events of each block, worked out after it.
    let clockOut: ClockOutTap?
    /// `--link`: where the piece is after each block, for the Link thread.
    let link: LinkFollowing?
    init(renderer: Renderer, shared: OutputState, recorder: Recorder?, clock: OutputClock? = nil, spectrum: SpectrumTap? = nil,
         clockOut: ClockOutTap? = nil, link: LinkFollowing? = nil) {
        self.renderer = renderer; self.shared = shared; self.recorder = recorder; self.clock = clock; self.spectrum = spectrum
        self.clockOut = clockOut; self.link = link
    }

    /// `frames` (≤ the renderer's `maxFrames`) interleaved stereo frames into `buffer`.
    @inline(__always)
    func render(frames: Int, into buffer: UnsafeMutableBufferPointer<Float>) {
        var t0 = timespec(), t1 = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t0)
        clock?.publish(blockStart: renderer.sampleTime, at: UInt64(t0.tv_sec) &* 1_000_000_000 &+ UInt64(t0.tv_nsec))
        let blockStart = renderer.sampleTime
        renderer.render(frames: frames, into: buffer)
        clockOut?.afterBlock(start: blockStart, frames: frames, map: renderer.pieceMap)
        link?.afterBlock(endFrame: renderer.sampleTime)
        clock_gettime(CLOCK_MONOTONIC, &t1)
        shared.recordBlock(nanos: (t1.tv_sec - t0.tv_sec) * 1_000_000_000 + (t1.tv_nsec - t0.tv_nsec))
        recorder?.push(UnsafeBufferPointer(buffer), frames: frames)   // a copy into its ring: never waits
        spectrum?.push(UnsafeBufferPointer(buffer), frames: frames)   // likewise
    }

    /// The last block at shutdown: all sound off, rendered so the release is heard (and recorded).
    func renderLast(frames: Int, into buffer: UnsafeMutableBufferPointer<Float>) {
        renderer.silence()
        renderer.render(frames: frames, into: buffer)
        recorder?.push(UnsafeBufferPointer(buffer), frames: frames)
    }
}
