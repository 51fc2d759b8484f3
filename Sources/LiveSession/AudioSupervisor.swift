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
/// now), then reopens the same device or server about once a second. When one
/// try works it drops what came in meanwhile, forgets the old device's timing
/// (`OutputClock.restart`) and lets the transport go on. The controls, scenes,
/// zones, MIDI input, OSC and the web page never stop.
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
    /// The transport was playing when the output failed: it plays on when the output is back.
    var resumeTransport = false

    init(parts: AudioSupervisor.Parts, recovery: AudioRecovery) {
        self.parts = parts
        self.recovery = recovery
        scratch = .allocate(capacity: 2 * parts.output.maxFrames)
        scratch.initialize(repeating: 0)
    }

    deinit { scratch.deallocate() }

    static func seconds() -> Double { Double(monotonicNanoseconds()) / 1e9 }

    func run(until stopping: CancellationFlag) {
        var polls = 0
        while !stopping.isSet {
            usleep(50_000)
            polls &+= 1
            let now = Self.seconds()
            if let reason = parts.shared.fault.withLock({ f in defer { f = nil }; return f }) {
                if recovery.fault(reason, at: now) { goDown(reason) }
            }
            if recovery.shouldGiveUp(at: now) {
                let limit = recovery.giveUpAfter ?? 0
                parts.shared.failure.withLock { $0 = "no audio for \(Self.format(limit)) s (--give-up-after): \(reason(of: recovery.state))" }
            }
            if recovery.isTryDue(at: now) { tryReopen(at: now) }
            if recovery.state != .playing {
                // What comes in meanwhile is played nowhere: rendered away so it does not sound on the return.
                drain()
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
        parts.keyboard.releaseEverything()
        drain()
    }

    private func tryReopen(at now: Double) {
        // Nothing renders between the fault and here: the queue's last events and the voices end silently first.
        drain()
        parts.clock?.restart(at: parts.renderer.sampleTime)
        do throws(LiveHost.Failure) {
            try parts.output.reopen()
        } catch {
            recovery.tryFailed(at: now)
            if parts.verbose { parts.log.append("audio: reopen failed: \(error)") }
            return
        }
        if resumeTransport {
            resumeTransport = false
            parts.transport?.play()
        }
        let outage = recovery.recovered(at: Self.seconds()) ?? 0
        parts.log.append("audio back after \(Self.format(outage)) s: \(parts.output.summary)")
    }

    /// Renders two silent blocks into the scratch: the queue drained (its notes
    /// started and ended at once), every voice stopped. Only while no output renders.
    private func drain() {
        let renderer = parts.renderer, frames = parts.output.maxFrames
        for _ in 0..<2 {
            renderer.render(frames: frames, into: scratch)
            renderer.silence()
        }
    }

    private func reason(of state: AudioRecovery.State) -> String {
        switch state {
        case .down(let r, _, _, _), .gaveUp(let r, _): r
        case .playing: "the output failed"
        }
    }

    static func format(_ seconds: Double) -> String {
        let tenths = (seconds * 10).rounded() / 10
        return tenths == tenths.rounded() ? "\(Int(tenths))" : "\(tenths)"
    }
}
