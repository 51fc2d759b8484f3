import ALSA
import Engine
import Synchronization
import Threads

/// Live audio to an ALSA PCM device: an output thread asks for SCHED_FIFO,
/// then loops — render one period, write it — until the host stops, or the
/// device fails for good (unplugged, EIO, a recovery that keeps failing):
/// then the thread ends and says why in `shared.fault`; `AudioSupervisor`
/// opens the device again (`reopen`) and starts a new thread on the same cycle.
final class ALSAOutput: AudioOutput, @unchecked Sendable {
    private let configuration: PCMPlayback.Configuration
    /// The open device; closed by `halt` (the kernel frees an unplugged card only once every
    /// handle on it is closed: an unbind through sysfs waits for it) and opened again by `reopen`,
    /// only while no output thread runs.
    private let current: Mutex<PCMPlayback?>
    private let realtime: Bool
    private var thread: JoinableThread?
    private var cycle: OutputCycle?
    /// Xruns of the devices closed after a fault, so the count goes on.
    private let earlierXruns = Atomic<Int>(0)
    let sampleRate: Int
    let maxFrames: Int
    let prefillFrames: Int
    /// The device's summary when it was last open (the view shows it while there is none).
    private let lastSummary: Mutex<String>
    private let period: Atomic<Int>

    /// Opens the device (nothing plays until `start`).
    init(device: String, sampleRate: Int, periodFrames: Int, periods: Int, realtime: Bool) throws(LiveHost.Failure) {
        configuration = .init(device: device, sampleRate: sampleRate, periodFrames: periodFrames, periods: periods)
        let pcm: PCMPlayback
        do { pcm = try PCMPlayback(configuration) } catch { throw .alsa(error) }
        current = Mutex(pcm)
        lastSummary = Mutex(pcm.summary)
        period = Atomic(pcm.periodFrames)
        self.sampleRate = pcm.sampleRate
        maxFrames = pcm.periodFrames
        prefillFrames = pcm.bufferFrames
        self.realtime = realtime
    }

    var summary: String { lastSummary.withLock { $0 } }
    var periodDuration: Double { Double(period.load(ordering: .relaxed)) / Double(sampleRate) }
    var xruns: Int { earlierXruns.load(ordering: .relaxed) + (current.withLock { $0?.xruns } ?? 0) }

    func start(_ cycle: OutputCycle) throws(LiveHost.Failure) {
        guard thread == nil, let pcm = current.withLock({ $0 }) else { return }
        self.cycle = cycle
        let body = OutputLoop(cycle: cycle, pcm: pcm, realtime: realtime)
        do { thread = try JoinableThread(name: "output") { body.run() } } catch { throw .thread(error) }
    }

    var stallLimit: Double? { OutputStallWatch.limit(periodDuration: periodDuration) }

    func halt() {
        // A thread waiting on a device that stalled ends within `PCMPlayback.waitMilliseconds` of this.
        current.withLock { $0?.cancel() }
        thread?.join()
        thread = nil
        // Closed now, not at the reopen: until then the kernel could not free the card that went away.
        let old = current.withLock { pcm in defer { pcm = nil }; return pcm }
        earlierXruns.add(old?.xruns ?? 0, ordering: .relaxed)
    }

    func reopen() throws(LiveHost.Failure) {
        guard let cycle, thread == nil else { return }
        let fresh: PCMPlayback
        do { fresh = try PCMPlayback(configuration) } catch { throw .alsa(error) }
        // The renderer keeps its rate and block: a device that comes back otherwise is not the one we played on.
        guard fresh.sampleRate == sampleRate, fresh.periodFrames <= maxFrames else {
            throw .deviceChanged("\(configuration.device) came back at \(fresh.sampleRate) Hz, \(fresh.periodFrames) frames a period; "
                                 + "this session plays \(sampleRate) Hz, at most \(maxFrames) frames")
        }
        current.withLock { $0 = fresh }
        lastSummary.withLock { $0 = fresh.summary }
        period.store(fresh.periodFrames, ordering: .relaxed)
        self.cycle = nil
        try start(cycle)
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
                // Cancelled by `halt`: the supervisor already knows why (a stall it saw).
                if !error.isCancellation { shared.fault.withLock { $0 = "\(error)" } }
                return
            }
        }
        // Shutdown: all sound off, one more block so the release is heard, drain.
        cycle.renderLast(frames: frames, into: buffer)
        _ = pcm.write(UnsafeBufferPointer(buffer))
        try? pcm.drain()
    }
}
