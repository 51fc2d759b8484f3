import ALSA
import Glibc
import MIDI
import Synchronization

// MIDI clock, both ends (issue 31): `clocks` listens and times what a clock
// master sends (carillon --clock-out); `clock-master` is one (for --sync clock).

/// One clock-related message and its kernel arrival stamp (monotonic s).
struct ClockArrival: Sendable {
    var message: MIDIMessage
    var stamp: Double
}

/// `clocks [--name N] [--seconds S] [--idle S]`: prints `ready PORT`, then at the end each
/// transport message (`transport start|stop|continue|spp=N at=S after=K clocks`) and, for each
/// run of clocks between them, `run n=… mean=…ms std=…ms` (kernel arrival stamps), and a summary.
func clocks(_ args: Arguments) -> Int32 {
    let client: SequencerClient
    do { client = try SequencerClient(name: args.string("--name", "clock-listener")) } catch { fail("\(error)") }
    let got = Mutex<[ClockArrival]>([])
    do {
        try client.start { event in
            guard case .message(let m, _, let arrival) = event else { return }
            switch m {
            case .timingClock, .start, .stop, .continue, .songPosition:
                let stamp = arrival.map { Double($0) / 1e9 } ?? now()
                got.withLock { $0.append(ClockArrival(message: m, stamp: stamp)) }
            default: break
            }
        }
    } catch { fail("\(error)") }
    say("ready \(client.inputPort)")
    let seconds = args.double("--seconds", 60), idle = args.double("--idle", 0)
    let start = now()
    while !stopSignal.load(ordering: .relaxed), now() - start < seconds {
        usleep(20_000)
        if idle > 0, let last = got.withLock({ $0.last?.stamp }), now() - last > idle { break }
    }
    client.stop()
    let all = got.withLock { $0 }
    guard let first = all.first?.stamp else { say("summary clocks=0"); return 0 }
    var run: [Double] = [], runs: [[Double]] = [], clocksSince = 0, total = 0
    func endRun() { if run.count >= 3 { runs.append(run) }; run = [] }
    for a in all {
        switch a.message {
        case .timingClock:
            run.append(a.stamp); clocksSince += 1; total += 1
        default:
            endRun()
            let kind: String = switch a.message {
            case .start: "start"
            case .stop: "stop"
            case .continue: "continue"
            case .songPosition(let v): "spp=\(v.value)"
            default: "?"
            }
            say("transport \(kind) at=\(fixed(a.stamp - first, 4)) after=\(clocksSince)")
            clocksSince = 0
        }
    }
    endRun()
    var worst = 0.0
    for r in runs {
        let ioi = zip(r.dropFirst(), r).map { ($0 - $1) * 1000 }
        let mean = ioi.reduce(0, +) / Double(ioi.count)
        let std = (ioi.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(ioi.count)).squareRoot()
        worst = max(worst, std)
        if args.flags.contains("--dump") { say("intervals " + ioi.prefix(60).map { fixed($0, 2) }.joined(separator: " ")) }
        say("run n=\(r.count) mean=\(fixed(mean, 4))ms std=\(fixed(std, 4))ms bpm=\(fixed(60_000 / (mean * 24), 2))")
    }
    say("summary clocks=\(total) runs=\(runs.count) worst-std=\(fixed(worst, 4))ms")
    return 0
}

/// `clock-master [--name N] [--bpm B] [--beats K] [--then-bpm B2] [--then-beats K2] [--jitter-ms J] [--wait S]
/// [--once --extra-clocks C --stop-after S]`:
/// once something subscribes, sends Start, K beats of clock at B bpm (each clock off by up to ±J ms),
/// Stop, half a second later Song Position 32 (beat 8) and Continue, K2 beats at B2, Stop.
/// `--once`: Start, K beats and C clocks more (a master that stops mid-beat), then Stop S seconds
/// after the last clock (default: when the next clock was due), and nothing after.
func clockMaster(_ args: Arguments) -> Int32 {
    // Each message is scheduled on the kernel's queue ahead of its time (ScheduledOutput), so the
    // master keeps time even when the VM's one CPU is busy with Carillon's real-time threads.
    let client: SequencerClient, output: ScheduledOutput
    do {
        client = try SequencerClient(name: args.string("--name", "clock-master"))
        output = try ScheduledOutput(client: client, name: "clock")
        try client.start { _ in }
    } catch { fail("\(error)") }
    say("master \(client.clientID)")
    let wait = args.double("--wait", 20), t0 = now()
    while !output.isTimed || subscribers(output) == 0 {
        if now() - t0 > wait { fail("nobody subscribed to the master within \(wait) s") }
        usleep(20_000)
    }
    usleep(UInt32(args.double("--lead", 1) * 1e6))
    let jitter = args.double("--jitter-ms", 0) / 1000
    var seed: UInt64 = 0x2545_F491_4F6C_DD1D
    func random() -> Double {
        seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
        return Double(seed % 1_000_001) / 1_000_000 * 2 - 1
    }
    // Sends `message` at `t` (monotonic s), 0.2 s ahead.
    func send(_ message: MIDIMessage, at t: Double) throws(ALSAError) {
        let d = t - 0.2 - now()
        if d > 0 { usleep(UInt32(d * 1e6)) }
        try output.send(message, at: UInt64(t * 1e9))
    }
    var t = now() + 0.3
    func clocks(bpm: Double, beats: Int) throws(ALSAError) {
        let period = 60 / bpm / 24
        for k in 0..<(beats * 24) { try send(.timingClock, at: t + Double(k) * period + jitter * random()) }
        t += Double(beats * 24) * period
    }
    do {
        let bpm = args.double("--bpm", 120), beats = args.int("--beats", 8)
        try send(.start, at: t - 0.001); say("start at=\(fixed(t - t0, 4))")
        try clocks(bpm: bpm, beats: beats)
        if args.flags.contains("--once") {
            let period = 60 / bpm / 24, extra = args.int("--extra-clocks", 0)
            for k in 0..<extra { try send(.timingClock, at: t + Double(k) * period) }
            let last = t + Double(extra - 1) * period
            t = last + args.double("--stop-after", period)
            try send(.stop, at: t); say("stop at=\(fixed(t - t0, 4)) clocks=\(beats * 24 + extra)")
            let d = t + 0.5 - now()
            if d > 0 { usleep(UInt32(d * 1e6)) }
            client.stop()
            return 0
        }
        try send(.stop, at: t); say("stop at=\(fixed(t - t0, 4))")
        t += 0.5
        try send(.songPosition(UInt14(32)), at: t); say("spp=32 at=\(fixed(t - t0, 4))")
        t += 0.1
        try send(.continue, at: t - 0.001); say("continue at=\(fixed(t - t0, 4))")
        try clocks(bpm: args.double("--then-bpm", bpm), beats: args.int("--then-beats", beats))
        try send(.stop, at: t); say("stop at=\(fixed(t - t0, 4))")
    } catch { fail("\(error)") }
    let d = t + 0.5 - now()
    if d > 0 { usleep(UInt32(d * 1e6)) }
    client.stop()
    return 0
}

/// How many ports are subscribed to `output`'s port.
func subscribers(_ output: ScheduledOutput) -> Int {
    (try? output.subscriberCount()) ?? 0
}
