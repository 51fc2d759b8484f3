import ALSA
import Engine
import Threads

/// Live audio to an ALSA PCM device: an output thread asks for SCHED_FIFO,
/// then loops — render one period, write it — until the host stops.
final class ALSAOutput: AudioOutput, @unchecked Sendable {
    let pcm: PCMPlayback
    private let realtime: Bool
    private var thread: JoinableThread?

    /// Opens the device (nothing plays until `start`).
    init(device: String, sampleRate: Int, periodFrames: Int, periods: Int, realtime: Bool) throws(LiveHost.Failure) {
        do {
            pcm = try PCMPlayback(.init(device: device, sampleRate: sampleRate, periodFrames: periodFrames, periods: periods))
        } catch { throw .alsa(error) }
        self.realtime = realtime
    }

    var summary: String { pcm.summary }
    var sampleRate: Int { pcm.sampleRate }
    var maxFrames: Int { pcm.periodFrames }
    var periodDuration: Double { pcm.periodDuration }
    var prefillFrames: Int { pcm.bufferFrames }
    var xruns: Int { pcm.xruns }

    func start(_ cycle: OutputCycle) throws(LiveHost.Failure) {
        guard thread == nil else { return }
        let body = OutputLoop(cycle: cycle, pcm: pcm, realtime: realtime)
        do { thread = try JoinableThread(name: "output") { body.run() } } catch { throw .thread(error) }
    }

    func finish() {
        thread?.join()
        thread = nil
    }
}

/// The output thread's body: render a period, write it, until asked to stop.
private final class OutputLoop: @unchecked Sendable {
    let cycle: OutputCycle, pcm: PCMPlayback, realtime: Bool
    init(cycle: OutputCycle, pcm: PCMPlayback, realtime: Bool) {
        self.cycle = cycle; self.pcm = pcm; self.realtime = realtime
    }

    func run() {
        let shared = cycle.shared
        if realtime {
            let refusal = RealtimeScheduling.requestFIFO()
            let text = refusal.map { "refused (\($0)); running at normal priority" } ?? "SCHED_FIFO granted"
            shared.realtime.withLock { $0 = text }
        }
        let frames = pcm.periodFrames
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * frames)
        buffer.initialize(repeating: 0)
        defer { buffer.deallocate() }
        // The block loop: no allocation, lock, log or throw.
        while !shared.stop.load(ordering: .acquiring) {
            cycle.render(frames: frames, into: buffer)
            if let error = pcm.write(UnsafeBufferPointer(buffer)) {
                shared.failure.withLock { $0 = "\(error)" }
                return
            }
        }
        // Shutdown: all sound off, one more block so the release is heard, drain.
        cycle.renderLast(frames: frames, into: buffer)
        _ = pcm.write(UnsafeBufferPointer(buffer))
        try? pcm.drain()
    }
}
