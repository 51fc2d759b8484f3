import Controls
import Engine
import Parameters
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// The control thread of a live session: ticks the hub once per rendered
/// block (polled every half period, 1…10 ms; every 10 ms without audio; at each
/// poll while the output is gone and being reopened), so
/// momentary controls fall back to 0 and the controllers get their feedback,
/// and every ~100 ms feeds a playing piece's transport (position, tempo,
/// loop) back to the controls; and at every poll does the session's other
/// chores off the render thread (`poll`: what the zones' MIDI effect chains
/// queued for external ports sent on, JACK ports that appeared connected, the
/// presets the sampler's channels play told to the hub). Runs
/// until `shared.stop` is set; `join` then.
final class ControlLoop {
    private let thread: JoinableThread

    /// `periodDuration`: the output's period (nil without audio); `blockFrames`:
    /// the render's block now (a momentary pressed by a timed message falls back
    /// a block after it); `transport`: a loaded piece's, whose first tempo is `pieceTempo` bpm.
    init(hub: ControlHub, shared: OutputState, periodDuration: Double?, blockFrames: (@Sendable () -> UInt64)? = nil,
         transport: Transport?, pieceTempo: Double, poll: (@Sendable () -> Void)? = nil) throws(ThreadError) {
        let withAudio = periodDuration != nil
        let interval = periodDuration.map { UInt32(min(max($0 * 500_000, 1_000), 10_000)) } ?? 10_000
        let feedbackEvery = max(1, 100_000 / Int(interval))
        thread = try JoinableThread(name: "control") {
            var lastBlocks = -1, calls = 0
            while !shared.stop.load(ordering: .acquiring) {
                calls &+= 1
                if let transport, calls % feedbackEvery == 0 {
                    let duration = transport.duration
                    hub.engineDidChange(.transport(.position), to: duration > 0 ? 100 * transport.position / duration : 0)
                    hub.engineDidChange(.transport(.tempo), to: transport.tempoScale * pieceTempo)
                    hub.engineDidChange(.transport(.loop), to: transport.isLooping ? 1 : 0)
                }
                let blocks = shared.blocks.load(ordering: .relaxed)
                // While the output is gone (AudioSupervisor reopening it) the controls tick on the poll, as without audio.
                if !withAudio || blocks != lastBlocks || shared.outage.withLock({ $0 != nil }) {
                    lastBlocks = blocks
                    hub.tick(blockFrames: blockFrames?())
                }
                poll?()
                usleep(interval)
            }
        }
    }

    func join() { thread.join() }
}
