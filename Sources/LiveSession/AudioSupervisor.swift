import Engine
import Hosting
import Sampling
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// Keeps a live session alive through the loss of its audio output: a thread
/// of its own, off the render thread, that watches `shared.fault` and acts on
/// `AudioRecovery`'s decisions. When the output fails it says so once, holds a
/// playing piece's transport, releases every held note (the zones' ledger, and
/// the render side's voices, rendered silently here since nothing else renders
/// now), then reopens the same device or server about once a second. While
/// down, what comes in is drained without rendering (`Renderer.drainWithoutSound`:
/// note-ons dropped, the rest applied, so controls and programs set meanwhile
/// hold); audio is rendered away again before a try only when the last render-away
/// did not end quiet. When one try works it forgets the old device's timing
/// (`OutputClock.restart`) and lets the transport go on. The controls, scenes,
/// zones, MIDI input, OSC and the web page never stop.
///
/// It also watches the output's progress (`OutputStallWatch`): an output that
/// should play and writes no period for `AudioOutput.stallLimit` (a write
/// blocked on a device that went away without an error) is a fault like any other.
///
/// Threads: `start` and `stop` from the host's owner thread; `statusText` from any.
final class AudioSupervisor {
    private let thread = StoppableThread()

    struct Parts {
        let output: any AudioOutput
        let shared: OutputState
        let renderer: Renderer
        let clock: OutputClock?
        let keyboard: KeyboardRouting
        /// JACK MIDI's inbox (`JACKMIDIInput`), routed on by a thread of its own; nil without JACK MIDI.
        let jackMIDIInbox: EventQueue?
        /// A loaded piece's transport (`play`), held while there is no output; nil live.
        let transport: Transport?
        let log: HostLog
        /// `-v`: each reopen attempt's error is logged too.
        let verbose: Bool
    }

    /// Starts watching (after the output started).
    init(_ parts: Parts, recovery: AudioRecovery) throws(ThreadError) {
        let body = SupervisorLoop(parts: parts, recovery: recovery)
        try thread.start(name: "audio-watch") { stopping in body.run(until: stopping) }
    }

    /// Ends the watch (before the output's `finish`): no reopen after this returns.
    func stop() { thread.stop() }
}

private final class SupervisorLoop: @unchecked Sendable {
    let parts: AudioSupervisor.Parts
    var recovery: AudioRecovery
    /// Scratch for the blocks rendered while there is no output (never heard).
    let scratch: UnsafeMutableBufferPointer<Float>
    /// At most this many frames of effect tail are rendered away at a time (10 s).
    let tailLimitFrames: Int

    /// The transport was playing when the output failed: it plays on when the output is back.
    var resumeTransport = false
    /// The last render-away ended before its tails were quiet (it hit `tailLimitFrames`): render away again before a reopen.
    var soundMayRemain = false
    /// nil: the output is not watched (`AudioOutput.stallLimit`, JACK).
    var stallWatch: OutputStallWatch?

    init(parts: AudioSupervisor.Parts, recovery: AudioRecovery) {
        self.parts = parts
        self.recovery = recovery
        scratch = .allocate(capacity: 2 * parts.output.maxFrames)
        scratch.initialize(repeating: 0)
        tailLimitFrames = 10 * parts.output.sampleRate
        stallWatch = parts.output.stallLimit.map { OutputStallWatch(limit: $0, blocks: parts.shared.blocks.load(ordering: .relaxed), at: Self.seconds()) }
    }

    deinit { scratch.deallocate() }

    static func seconds() -> Double { Double(monotonicNanoseconds()) / 1e9 }

    func run(until stopping: CancellationFlag) {
        var polls = 0
        while !stopping.isSet {
            usleep(Self.pollMicroseconds)
            polls &+= 1
            let now = Self.seconds()
            if let reason = parts.shared.fault.withLock({ f in defer { f = nil }; return f }) {
                if recovery.fault(reason, at: now) { goDown(reason) }
            }
            if recovery.state == .playing, let stalled = stallWatch?.poll(blocks: parts.shared.blocks.load(ordering: .relaxed), at: now) {
                let reason = "output stalled: no period written for \(Self.format(stalled)) s"
                if recovery.fault(reason, at: now) { goDown(reason) }
            }
            if recovery.shouldGiveUp(at: now) {
                let limit = recovery.giveUpAfter ?? 0
                parts.shared.failure.withLock { $0 = "no audio for \(Self.format(limit)) s (--give-up-after): \(reason(of: recovery.state))" }
            }
            if recovery.isTryDue(at: now) { tryReopen() }
            if recovery.state != .playing {
                // What comes in meanwhile is played nowhere, and not rendered (that took the CPU the tries need):
                // note-ons dropped, controls, programs and pedals kept.
                parts.renderer.drainWithoutSound()
            } else if polls % 5 == 0 {
                parts.output.maintain()
            }
            parts.shared.outage.withLock { $0 = recovery.statusText }
        }
    }

    private func goDown(_ reason: String) {
        parts.log.append("no audio: \(reason) — held notes released; reopening about once a second"
                         + (recovery.giveUpAfter.map { ", for \(Self.format($0)) s (--give-up-after)" } ?? ""))
        parts.output.halt()
        if let transport = parts.transport, transport.isPlaying {
            resumeTransport = true
            transport.stop()
        }
        // The inbox's last events (pushed by the last cycle) routed first: a note-on routed after the release would be held on.
        if let inbox = parts.jackMIDIInbox {
            for _ in 0..<200 where inbox.count > 0 { usleep(1_000) }
        }
        parts.keyboard.releaseEverything()
        renderAway()
    }

    private func tryReopen() {
        // Nothing renders between the fault and here: the queue's last events taken, and a tail still
        // sounding at the last render-away rendered away (no note-on reached a voice since: the drain drops them).
        parts.renderer.drainWithoutSound()
        if soundMayRemain { renderAway() }
        parts.clock?.restart(at: parts.renderer.sampleTime)
        do throws(LiveHost.Failure) {
            try parts.output.reopen()
        } catch {
            // The next try an interval after this one ended, not after the poll that began it: the
            // render-away before it can take tens of ms, and the tries must not come closer.
            recovery.tryFailed(at: Self.seconds())
            if parts.verbose { parts.log.append("audio: reopen failed: \(error)") }
            return
        }
        if resumeTransport {
            resumeTransport = false
            parts.transport?.play()
        }
        let outage = recovery.recovered(at: Self.seconds()) ?? 0
        stallWatch?.restart(blocks: parts.shared.blocks.load(ordering: .relaxed), at: Self.seconds())
        parts.log.append("audio back after \(Self.format(outage)) s: \(parts.output.summary)")
    }

    private func renderAway() {
        let result = RenderAway.everything(parts.renderer, frames: parts.output.maxFrames, scratch: scratch, tailLimitFrames: tailLimitFrames)
        soundMayRemain = !result.quiet
        parts.shared.framesRenderedAway.add(result.frames, ordering: .relaxed)
    }

    private func reason(of state: AudioRecovery.State) -> String {
        switch state {
        case .down(let r, _, _, _), .gaveUp(let r, _): r
        case .playing: "the output failed"
        }
    }

    /// 50 ms between polls: a fault is seen, and the status set, within a twentieth of a second.
    static let pollMicroseconds: UInt32 = 50_000

    static func format(_ seconds: Double) -> String {
        let tenths = (seconds * 10).rounded() / 10
        return tenths == tenths.rounded() ? "\(Int(tenths))" : "\(tenths)"
    }
}

/// What the supervisor renders while no output does, never heard, so that
/// nothing held before a fault sounds after the return (issue 40).
enum RenderAway {
    /// A block whose peak is at most this is silent (-120 dBFS).
    static let quietPeak: Float = 1e-6
    /// The tails are over once this many frames in a row are silent (0.5 s at 48 kHz).
    static let quietStretchFrames = 24_000

    /// Into `scratch` (2 × `frames` samples): every event queued taken, whatever
    /// frame it was stamped for (a note placed ahead of a block that never came
    /// would otherwise play on the return), without a note-on
    /// (`drainWithoutSound`), and every sound stopped; then the pedals up on
    /// every channel (all sound off leaves a sustain down, and it would hold the
    /// next notes); then the effects' tails (FluidSynth's reverb and chorus ring
    /// on after all sound off) rendered until 0.5 s is silent, the queue drained
    /// before each block: a player who plays on meanwhile neither sounds nor keeps
    /// the tails from ending (rendering what came in kept a render-away going to
    /// its limit, 10 s of audio, and under load longer than that, in the VM soak).
    /// At most `tailLimitFrames`. Returns the frames rendered, and whether the
    /// tails fell quiet (false: cut off at the limit, something may sound still).
    @discardableResult
    static func everything(_ renderer: Renderer, frames: Int, scratch: UnsafeMutableBufferPointer<Float>,
                           tailLimitFrames: Int) -> (frames: Int, quiet: Bool) {
        var rendered = 0
        renderer.drainWithoutSound()
        renderer.silence()
        for channel in 0..<16 {
            for pedal: UInt8 in [64, 66, 67] {   // sustain, sostenuto, soft
                renderer.instrument.receive(.controlChange(pedal, value: 0, channel: channel))
            }
        }
        // Quiet for a stretch, not one block: a reverb's delay lines give out a tail some way behind its input.
        var quietFrames = 0
        renderer.leavesQueuesAlone = true
        defer { renderer.leavesQueuesAlone = false }
        repeat {
            renderer.drainWithoutSound()
            renderer.render(frames: frames, into: scratch)
            rendered += frames
            quietFrames = renderer.blockPeak > quietPeak ? 0 : quietFrames + frames
        } while quietFrames < quietStretchFrames && rendered < tailLimitFrames
        renderer.silence()
        return (rendered, quietFrames >= quietStretchFrames)
    }
}

/// Notices an output that should play and makes no progress (issue 40's
/// soak: `snd_pcm_writei` blocked 12–30 s on a device gone, no error said):
/// the blocks counter the output thread moves, read at each supervisor poll.
/// Only the time the supervisor itself ran counts: a poll gap longer than
/// `longestGap` (the whole process stopped, `kill -STOP`, or starved) counts
/// as `longestGap`, so a process stopped and continued is not taken for a
/// stalled output. Decisions only, on a clock the caller passes in.
struct OutputStallWatch: Equatable {
    /// Seconds without a block before the output is stalled.
    let limit: Double
    /// A poll gap counts at most this long (5 polls).
    let longestGap: Double
    private var lastBlocks: Int
    private var lastPoll: Double
    /// Seconds without a block so far, as the supervisor saw them.
    private(set) var stalledFor = 0.0
    /// Said once a stall, until the output moves or is restarted.
    private var said = false

    init(limit: Double, blocks: Int, at now: Double, longestGap: Double = 0.25) {
        self.limit = limit; self.longestGap = longestGap
        lastBlocks = blocks; lastPoll = now
    }

    /// The stall limit of an output whose period lasts `periodDuration`: 8 periods, at least 1 s.
    static func limit(periodDuration: Double) -> Double { max(1, 8 * periodDuration) }

    /// A poll at `now` saw `blocks`: the seconds stalled, once, when they reach the limit; nil otherwise.
    mutating func poll(blocks: Int, at now: Double) -> Double? {
        defer { lastPoll = now }
        if blocks != lastBlocks {
            lastBlocks = blocks; stalledFor = 0; said = false
            return nil
        }
        stalledFor += min(max(now - lastPoll, 0), longestGap)
        guard stalledFor >= limit, !said else { return nil }
        said = true
        return stalledFor
    }

    /// The output started again (a reopen): its stall is measured from `now`.
    mutating func restart(blocks: Int, at now: Double) {
        lastBlocks = blocks; lastPoll = now; stalledFor = 0; said = false
    }
}
