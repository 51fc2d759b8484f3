// carillon-alsa-probe: the driver of the ALSA VM integration tests
// (scripts/test-alsa-vm). Each subcommand exercises one part of the ALSA
// target against real third-party clients and prints lines the script checks.
//
//   listen  [--name N] [--connect SPEC]... [--autoconnect all|hw|PATTERN] [--seconds S] [--idle S]
//   send    [--name N] [--notes 60,64,67] [--program P] [--hold] [--sustain] [--wait S]
//   sine    [--device D] [--rate R] [--period P] [--periods N] [--seconds S] [--freq F]
//           [--format float|s32|s16] [--stall-ms M] [--rt] [--clock]
//   analyze FILE.wav --freq F
//   envelope CAPTURE.wav REFERENCE.wav [--min-correlation C] [--max-lag S] [--skip-reference S]
//   hold-release FILE.wav --held S [--after S] [--find-release]
//   latency [--target carillon:0] [--rate R] [--notes N] < raw FLOAT_LE stereo capture
//   onsets FILE.wav [--interval S] [--max-std MS] [--min-count N] [--threshold F]
//   metronome OUT.mid [--interval S] [--seconds S] [--note N] [--channel C] [--length S] [--program P] [--tail S]
//   stalls CAPTURE.wav --stops MS,… --conts MS,… --last-off MS [--buffer MS] [--window-end MS]
//   level FILE.wav [--from S --to S]...
//   speedup IN.mid OUT.mid FACTOR
//   ports
//   clocks [--name N] [--seconds S] [--idle S]                     (Clock.swift)
//   clock-master [--bpm B] [--beats K] [--then-bpm B2] [--then-beats K2] [--jitter-ms J] [--once --extra-clocks C --stop-after S]
import ALSA
import CALSA
import Glibc
import MIDI
import Synchronization
import Threads

/// One output line, flushed at once (the test script watches the output while we run).
func say(_ line: String) {
    print(line)
    fflush(nil)
}

func fixed(_ x: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let v = (x * scale).rounded() / scale
    return "\(v)"
}

struct Arguments {
    var positional: [String] = []
    var options: [String: [String]] = [:]
    var flags: Set<String> = []
    static let flagNames: Set<String> = ["--hold", "--sustain", "--rt", "--quiet", "--clock", "--dump", "--once", "--find-release"]

    init(_ args: ArraySlice<String>) {
        var it = args.makeIterator()
        while let a = it.next() {
            if Self.flagNames.contains(a) { flags.insert(a) }
            else if a.hasPrefix("--"), let v = it.next() { options[a, default: []].append(v) }
            else { positional.append(a) }
        }
    }
    func string(_ k: String, _ d: String) -> String { options[k]?.last ?? d }
    func int(_ k: String, _ d: Int) -> Int { options[k]?.last.flatMap { Int($0) } ?? d }
    func double(_ k: String, _ d: Double) -> Double { options[k]?.last.flatMap { Double($0) } ?? d }
    func all(_ k: String) -> [String] { options[k] ?? [] }
}

func fail(_ message: String) -> Never {
    let text = Array("carillon-alsa-probe: \(message)\n".utf8)
    _ = text.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    exit(1)
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

let stopSignal = Atomic<Bool>(false)
signal(SIGTERM) { _ in stopSignal.store(true, ordering: .relaxed) }
signal(SIGINT) { _ in stopSignal.store(true, ordering: .relaxed) }

func describe(_ m: MIDIMessage) -> String {
    switch m {
    case .noteOn(let n): "noteOn ch=\(n.channel) note=\(n.note) vel=\(n.velocity)"
    case .noteOff(let n): "noteOff ch=\(n.channel) note=\(n.note) vel=\(n.velocity)"
    case .controlChange(let c): "cc ch=\(c.channel) cc=\(c.controller) value=\(c.value)"
    case .pitchBend(let b): "pitchBend ch=\(b.channel) value=\(b.value)"
    case .sysEx(let s): "sysEx bytes=\(s.data.count)"
    default: "\(m)"
    }
}

// MARK: listen

final class ListenStats: @unchecked Sendable {
    let lock = Mutex<(noteOn: Int, noteOnZero: Int, noteOff: Int, other: Int, releases: Int, last: Double)>(
        (0, 0, 0, 0, 0, 0))
    /// Each note-on's kernel arrival stamp and when the input thread handed it over (monotonic s).
    let noteOnTimes = Mutex<[(stamp: Double?, handled: Double)]>([])
}

/// The spread of the intervals between successive times: "std=… ms" (and mean, extremes).
func intervalSpread(_ times: [Double]) -> String {
    let ioi = zip(times.dropFirst(), times).map { ($0 - $1) * 1000 }
    guard ioi.count >= 2 else { return "n=\(times.count) (too few)" }
    let mean = ioi.reduce(0, +) / Double(ioi.count)
    let std = (ioi.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(ioi.count - 1)).squareRoot()
    return "std=\(fixed(std, 3))ms mean=\(fixed(mean, 3))ms min=\(fixed(ioi.min()!, 2))ms max=\(fixed(ioi.max()!, 2))ms n=\(times.count)"
}

func listen(_ args: Arguments) -> Int32 {
    let client: SequencerClient
    do { client = try SequencerClient(name: args.string("--name", "carillon-probe")) } catch { fail("\(error)") }
    for spec in args.all("--connect") {
        do {
            let connected = try client.connect(source: spec)
            for p in connected { say("connected \(p.address) '\(p.clientName)' '\(p.portName)'") }
        } catch { fail("\(error)") }
    }
    if let auto = args.options["--autoconnect"]?.last {
        let policy: AutoconnectPolicy = switch auto {
        case "all": .allSources
        case "hw": .hardwareSources
        default: .named(auto)
        }
        do {
            for p in try client.setAutoconnect(policy) { say("connected \(p.address) '\(p.clientName)' '\(p.portName)'") }
        } catch { fail("\(error)") }
    }
    let quiet = args.flags.contains("--quiet")
    let stats = ListenStats()
    do {
        try client.start { event in
            switch event {
            case .message(let m, let source, _):
                stats.lock.withLock { s in
                    switch m {
                    case .noteOn(let n) where n.velocity.value == 0: s.noteOnZero += 1
                    case .noteOn:
                        s.noteOn += 1
                        let handled = now()
                        stats.noteOnTimes.withLock { $0.append((event.arrival.map { Double($0) / 1e9 }, handled)) }
                    case .noteOff: s.noteOff += 1
                    default: s.other += 1
                    }
                    s.last = now()
                }
                if !quiet { say("msg \(source) \(describe(m))") }
            case .release(let m, let source):
                stats.lock.withLock { $0.releases += 1; $0.last = now() }
                say("release \(source) \(describe(m))")
            case .subscribed(let a): say("subscribed \(a)")
            case .unsubscribed(let a): say("unsubscribed \(a)")
            case .autoconnected(let p): say("autoconnected \(p.address) '\(p.clientName)' '\(p.portName)'")
            case .portAppeared(let p): say("appeared \(p.address) '\(p.clientName)' '\(p.portName)'")
            case .autoconnectFailed(let p, let e): say("autoconnect-failed \(p.address) \(e)")
            case .inputOverrun: say("overrun")
            }
        }
    } catch { fail("\(error)") }
    say("ready \(client.inputPort)")
    let seconds = args.double("--seconds", 30), idle = args.double("--idle", 0)
    let start = now()
    while !stopSignal.load(ordering: .relaxed), now() - start < seconds {
        usleep(20_000)
        if idle > 0 {
            let last = stats.lock.withLock { $0.last }
            if last > 0, now() - last > idle { break }
        }
    }
    client.stop()
    let s = stats.lock.withLock { $0 }
    say("summary noteOn=\(s.noteOn) noteOnVel0=\(s.noteOnZero) noteOff=\(s.noteOff) other=\(s.other) release=\(s.releases) overruns=\(client.inputOverruns)")
    // How regular the note-ons came: by the kernel's stamps, and by when the input thread had them.
    let times = stats.noteOnTimes.withLock { $0 }
    let stamps = times.compactMap(\.stamp)
    say("arrivals stamped \(stamps.count == times.count ? intervalSpread(stamps) : "\(times.count - stamps.count) of \(times.count) unstamped")"
        + " handled \(intervalSpread(times.map(\.handled)))"
        + (client.arrivalStampingError.map { " (no stamps: \($0))" } ?? ""))
    return 0
}

// MARK: send

func send(_ args: Arguments) -> Int32 {
    let client: SequencerClient
    do {
        client = try SequencerClient(name: args.string("--name", "probe-sender"))
        try client.makeOutputPort(name: "keys", hardware: true)
    } catch { fail("\(error)") }
    let notes = args.string("--notes", "60,64,67").split(separator: ",").compactMap { UInt7(exactly: Int($0) ?? -1) }
    let wait = args.double("--wait", 10)
    let start = now()
    say("sender \(client.clientID)")
    while (try? client.outputSubscriberCount()) ?? 0 == 0 {
        if now() - start > wait { fail("nobody subscribed to the sender within \(wait) s") }
        usleep(20_000)
    }
    do {
        if let program = args.options["--program"]?.last.flatMap({ Int($0) }).flatMap({ UInt7(exactly: $0) }) {
            try client.send(.programChange(program, channel: 0))
        }
        if args.flags.contains("--sustain") { try client.send(.cc(64, value: 127, channel: 0)) }
        for n in notes { try client.send(.noteOn(n, velocity: 100, channel: 0)) }
        if !args.flags.contains("--hold") {
            for n in notes { try client.send(.noteOff(n, channel: 0)) }
        }
    } catch { fail("\(error)") }
    say("sent \(notes.count)")
    if args.flags.contains("--hold") {
        say("holding")
        while !stopSignal.load(ordering: .relaxed) { usleep(50_000) }
    }
    return 0
}

// MARK: sine

func sine(_ args: Arguments) -> Int32 {
    let formats: [PCMPlayback.SampleFormat] = switch args.string("--format", "any") {
    case "float": [.float32]
    case "s32": [.int32]
    case "s16": [.int16]
    default: PCMPlayback.SampleFormat.allCases
    }
    let config = PCMPlayback.Configuration(device: args.string("--device", "default"), sampleRate: args.int("--rate", 48000),
        channels: 2, periodFrames: args.int("--period", 256), periods: args.int("--periods", 2), formats: formats)
    if args.flags.contains("--rt") {
        if let why = RealtimeScheduling.requestFIFO() { say("realtime refused: \(why)") } else { say("realtime granted") }
    }
    let pcm: PCMPlayback
    do { pcm = try PCMPlayback(config) } catch { fail("\(error)") }
    say("pcm \(pcm.summary)")
    let freq = args.double("--freq", 440), seconds = args.double("--seconds", 2)
    let stallMs = args.int("--stall-ms", 0)
    let block = pcm.periodFrames
    let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: block * 2)
    defer { buffer.deallocate() }
    var phase = 0.0
    let step = 2 * Double.pi * freq / Double(pcm.sampleRate)
    let totalBlocks = Int(seconds * Double(pcm.sampleRate)) / block
    var worst = 0.0
    // --clock: where frame 0 of the output lies on the monotonic clock, seen two ways at each
    // block start: the block start itself (OutputClock's choice) and snd_pcm_delay (what is
    // still queued: the frame playing now). Which is steadier decides what live input is timed by.
    var blockOffsets: [Double] = [], delayOffsets: [Double] = []
    for b in 0..<totalBlocks {
        if args.flags.contains("--clock") {
            let t = now()
            blockOffsets.append(t - Double(pcm.framesWritten) / Double(pcm.sampleRate))
            if let delay = pcm.delayFrames() {
                delayOffsets.append(now() - Double(pcm.framesWritten - delay) / Double(pcm.sampleRate))
            }
        }
        for i in 0..<block {
            let v = Float(0.5 * sin(phase))
            buffer[2 * i] = v; buffer[2 * i + 1] = v
            phase += step
            if phase > 2 * Double.pi { phase -= 2 * Double.pi }
        }
        if stallMs > 0, b == totalBlocks / 2 { usleep(UInt32(stallMs * 1000)) }  // provoke an underrun
        let t0 = now()
        if let error = pcm.write(UnsafeBufferPointer(buffer)) { fail("\(error)") }
        worst = max(worst, now() - t0)
    }
    do { try pcm.drain() } catch { fail("\(error)") }
    say("done frames=\(pcm.framesWritten) xruns=\(pcm.xruns) suspends=\(pcm.suspends)")
    if args.flags.contains("--clock") {
        say("clock block-start \(offsetSpread(blockOffsets, skip: config.periods))")
        say("clock pcm-delay \(offsetSpread(delayOffsets, skip: config.periods))")
    }
    return 0
}

/// How much an estimate of the output's time origin moves (ms): the raw
/// offsets' standard deviation and range, and the range of their minimum over
/// the last 64 blocks (OutputClock's estimate until its window became 3 s of blocks) after the first 64.
func offsetSpread(_ offsets: [Double], skip: Int) -> String {
    let x = Array(offsets.dropFirst(skip))
    guard x.count > 65 else { return "too few blocks (\(x.count))" }
    let mean = x.reduce(0, +) / Double(x.count)
    let std = (x.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(x.count - 1)).squareRoot()
    let windowMins = (64..<x.count).map { x[($0 - 63)...$0].min()! }
    return "raw std=\(fixed(std * 1000, 3))ms range=\(fixed((x.max()! - x.min()!) * 1000, 3))ms"
        + " window-min range=\(fixed((windowMins.max()! - windowMins.min()!) * 1000, 3))ms blocks=\(x.count)"
}

// MARK: analyze

/// Reads a WAV file's first channel as Float (PCM 16/32-bit or float 32-bit).
func readWAV(_ path: String) -> (rate: Int, samples: [Float]) {
    guard let f = fopen(path, "rb") else { fail("cannot open \(path)") }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, f)
        if n <= 0 { break }
        bytes.append(contentsOf: chunk[0..<n])
    }
    func u32(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 | Int(bytes[o + 2]) << 16 | Int(bytes[o + 3]) << 24 }
    func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
    guard bytes.count > 12, String(decoding: bytes[0..<4], as: UTF8.self) == "RIFF" else { fail("\(path): not a WAV file") }
    var o = 12
    var fmt = 0, channels = 0, rate = 0, bits = 0
    while o + 8 <= bytes.count {
        let id = String(decoding: bytes[o..<o + 4], as: UTF8.self)
        var size = u32(o + 4)
        if id == "fmt " {
            fmt = u16(o + 8); channels = u16(o + 10); rate = u32(o + 12); bits = u16(o + 22)
            if fmt == 0xFFFE { fmt = u16(o + 32) }
        } else if id == "data" {
            if size == 0 || size == 0xFFFF_FFFF || o + 8 + size > bytes.count { size = bytes.count - o - 8 }
            let frameBytes = channels * bits / 8
            var out: [Float] = []
            out.reserveCapacity(size / max(frameBytes, 1))
            var p = o + 8
            while p + frameBytes <= o + 8 + size {
                switch (fmt, bits) {
                case (1, 16): out.append(Float(Int16(bitPattern: UInt16(u16(p)))) / 32768)
                case (1, 32): out.append(Float(Int32(bitPattern: UInt32(u32(p)))) / 2_147_483_648)
                case (3, 32): out.append(Float(bitPattern: UInt32(u32(p))))
                default: fail("\(path): unsupported format \(fmt)/\(bits) bits")
                }
                p += frameBytes
            }
            return (rate, out)
        }
        o += 8 + size + (size & 1)
    }
    fail("\(path): no data chunk")
}

func analyze(_ args: Arguments) -> Int32 {
    guard let path = args.positional.first else { fail("analyze FILE.wav --freq F") }
    let expected = args.double("--freq", 440)
    let (rate, x) = readWAV(path)
    // The sounding part: from the first to the last sample above −40 dBFS.
    guard let first = x.firstIndex(where: { abs($0) > 0.01 }), let last = x.lastIndex(where: { abs($0) > 0.01 }),
        last - first > rate / 10
    else {
        say("analysis frames=\(x.count) rms=0 freq=0 (silent)")
        return 1
    }
    let s = Array(x[first...last])
    // RMS over the 10 ms blocks that sound (an xrun leaves a gap of silence in the capture).
    let block = max(rate / 100, 1)
    var sum = 0.0, counted = 0, gaps = 0
    for b in stride(from: 0, to: s.count - block, by: block) {
        let e = s[b..<b + block].reduce(0.0) { $0 + Double($1) * Double($1) }
        if (e / Double(block)).squareRoot() > 0.05 { sum += e; counted += block } else { gaps += 1 }
    }
    let rms = counted > 0 ? (sum / Double(counted)).squareRoot() : 0
    // Frequency from the median distance between upward zero crossings (robust to gaps).
    var crossings: [Double] = []
    for i in 1..<s.count where s[i - 1] < 0 && s[i] >= 0 {
        crossings.append(Double(i - 1) + Double(-s[i - 1] / (s[i] - s[i - 1])))
    }
    var periods = zip(crossings.dropFirst(), crossings).map { $0 - $1 }.sorted()
    if periods.isEmpty { periods = [0] }
    let median = periods[periods.count / 2]
    let freq = median > 0 ? Double(rate) / median : 0
    let seconds = Double(s.count) / Double(rate)
    let ok = rms > 0.25 && rms < 0.45 && abs(freq - expected) / expected < 0.01 && seconds > args.double("--min-seconds", 0.5)
    say("analysis rate=\(rate) sounding=\(fixed(seconds, 2))s gaps=\(gaps)x10ms rms=\(fixed(rms, 3)) freq=\(fixed(freq, 1)) expected=\(expected) \(ok ? "OK" : "BAD")")
    return ok ? 0 : 1
}

// MARK: envelope

/// 10 ms RMS envelope of the first channel.
func envelope(_ x: [Float], rate: Int) -> [Double] {
    let block = rate / 100
    return stride(from: 0, to: x.count - block, by: block).map { b in
        (x[b..<b + block].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(block)).squareRoot()
    }
}

/// Compares the 10 ms RMS envelopes of a capture and a reference (same rate):
/// the best Pearson correlation over lags of ±`--max-lag` seconds.
func compareEnvelopes(_ args: Arguments) -> Int32 {
    guard args.positional.count == 2 else { fail("envelope CAPTURE.wav REFERENCE.wav [--min-correlation C] [--max-lag S] [--skip-reference S] [--reference-until S]") }
    let (r1, a) = readWAV(args.positional[0]), (r2, b) = readWAV(args.positional[1])
    guard r1 == r2 else { fail("rates differ: \(r1) and \(r2)") }
    // --skip-reference S: compare with the reference from S seconds on (a play that started there);
    // --reference-until S: only up to S seconds (a play stopped there).
    let untilSeconds = args.double("--reference-until", -1)
    let until = untilSeconds < 0 ? Int.max : Int(untilSeconds * 100)
    let ea = envelope(a, rate: r1)
    let eb = Array(envelope(b, rate: r2).prefix(until).dropFirst(Int(args.double("--skip-reference", 0) * 100)))
    let maxLag = Int(args.double("--max-lag", 3) * 100)
    var best = (corr: -2.0, lag: 0)
    for lag in -maxLag...maxLag {
        // Pairs (ea[i + lag], eb[i]) over the reference's length.
        var n = 0.0, sa = 0.0, sb = 0.0, saa = 0.0, sbb = 0.0, sab = 0.0
        for i in 0..<eb.count {
            let j = i + lag
            let va = j >= 0 && j < ea.count ? ea[j] : 0
            let vb = eb[i]
            n += 1; sa += va; sb += vb; saa += va * va; sbb += vb * vb; sab += va * vb
        }
        let cov = sab / n - sa / n * sb / n
        let den = ((saa / n - sa / n * sa / n) * (sbb / n - sb / n * sb / n)).squareRoot()
        let corr = den > 0 ? cov / den : 0
        if corr > best.corr { best = (corr, lag) }
    }
    let minimum = args.double("--min-correlation", 0.8)
    let ok = best.corr >= minimum
    say("envelope correlation=\(fixed(best.corr, 3)) lag=\(best.lag * 10)ms capture=\(fixed(Double(a.count) / Double(r1), 2))s reference=\(fixed(Double(b.count) / Double(r2), 2))s \(ok ? "OK" : "BAD")")
    return ok ? 0 : 1
}

// MARK: hold-release

/// For a capture of notes held `--held` seconds and then released (their
/// sender killed): RMS from 0.5 s after the onset to 0.5 s before the release,
/// and from `--after` seconds after the release for 1.5 s. The notes must
/// sound, then stop: held RMS > 0.01 and after RMS < 1/30 of it.
/// `--find-release`: the release is where the capture's sound falls (the first
/// 50 ms after `--held` − 0.5 s below half the held RMS), not `--held` after the
/// onset: under TCG a script's `sleep 4` ran 4.7–5.3 s, so the kill came late
/// (stop 44's VM runs). It must come by `--held` + 2.5 s; a note left sounding
/// keeps the capture above held/30 after it (a chord's one stuck note: −12 dB).
func holdRelease(_ args: Arguments) -> Int32 {
    guard let path = args.positional.first else { fail("hold-release FILE.wav --held S [--after S] [--find-release]") }
    let (rate, x) = readWAV(path)
    let hold = args.double("--held", 3), after = args.double("--after", 1)
    guard let onset = x.firstIndex(where: { abs($0) > 0.005 }) else {
        say("hold-release silent capture BAD"); return 1
    }
    func rms(_ from: Double, _ to: Double) -> Double {
        let a = min(x.count, onset + Int(from * Double(rate))), b = min(x.count, onset + Int(to * Double(rate)))
        guard b > a else { return 0 }
        return (x[a..<b].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(b - a)).squareRoot()
    }
    let held = rms(0.5, hold - 0.5)
    var release = hold
    var found = true
    if args.flags.contains("--find-release") {
        let step = 0.05
        var t = hold - 0.5
        found = false
        while t + step <= hold + 2.5 && onset + Int((t + step) * Double(rate)) <= x.count {
            if rms(t, t + step) < held / 2 { found = true; break }
            t += step
        }
        release = t
    }
    let released = rms(release + after, release + after + 1.5)
    let covered = Double(x.count - onset) / Double(rate) >= release + after + 1.5
    let ok = found && covered && held > 0.01 && released < held / 30
    say("hold-release onset=\(fixed(Double(onset) / Double(rate), 2))s held-rms=\(fixed(held, 4))"
        + (args.flags.contains("--find-release") ? (found ? " released-at=+\(fixed(release, 2))s" : " no release by +\(fixed(hold + 2.5, 1))s") : "")
        + " after-rms=\(fixed(released, 4))\(covered ? "" : " (capture too short)") \(ok ? "OK" : "BAD")")
    return ok ? 0 : 1
}

// MARK: latency

/// MIDI in → audio out: sends a note-on to `--target` (e.g. carillon:0) at a
/// known time while capturing `--device` (the loopback's capture side), and
/// times the onset of the sound. Prints each measurement and the median.
func latency(_ args: Arguments) -> Int32 {
    let rate = args.int("--rate", 22050), count = args.int("--notes", 6)
    // Capture first, configured (the loopback's playback side then takes these settings, as
    // when arecord starts first in the other scenarios); then wait for the target to appear.
    // The capture comes on stdin, raw FLOAT_LE stereo at --rate, from
    // `arecord -D hw:Loopback,1 -t raw -f FLOAT_LE --period-size=64 …` started before the player.
    let client: SequencerClient
    let targetSpec = args.string("--target", "carillon:0")
    do { client = try SequencerClient(name: "latency-probe") } catch { fail("\(error)") }
    // client:port, or name:port as aplaymidi takes it.
    let parts = targetSpec.split(separator: ":")
    var target: SeqAddress? = nil
    let waitUntil = now() + args.double("--wait", 30)
    while target == nil, now() < waitUntil {
        target = SeqAddress(targetSpec) ?? (try? client.ports())?.first {
            $0.isDestination && parts.count == 2 && $0.clientName.lowercased() == parts[0].lowercased()
                && String($0.address.port) == parts[1]
        }?.address
        if target == nil { usleep(100_000) }
    }
    guard let target else { fail("no destination '\(targetSpec)'") }
    do { try client.connectOutput(to: target) } catch { fail("\(error)") }
    say("latency connected to \(target)")
    let chunk = 128
    var buffer = [Float](repeating: 0, count: chunk * 2)
    var results: [Double] = []
    var sentAt: Double? = nil
    var nextSend = now() + 1.0
    var quietSince = now()
    var readErrors = 0
    let deadline = now() + Double(count) * 2.0 + 5
    while results.count < count, now() < deadline {
        let bytes = buffer.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, chunk * 8) }
        let readAt = now()
        if bytes == 0 { break }
        let n = bytes < 0 ? -Int(EIO) : bytes / 8
        if n < 0 {
            readErrors += 1
            if readErrors <= 3 { say("latency capture: read error") }
            continue
        }
        let frames = Int(n)
        if let sent = sentAt {
            if let i = (0..<frames).first(where: { abs(buffer[2 * $0]) > 0.01 }) {
                let onset = readAt - Double(frames - i) / Double(rate)
                results.append(onset - sent)
                say("latency note \(results.count): \(fixed((onset - sent) * 1000, 1)) ms")
                sentAt = nil
                try? client.send(.noteOff(72, channel: 0))
                nextSend = readAt + 1.5
            }
        } else {
            if (0..<frames).contains(where: { abs(buffer[2 * $0]) > 0.002 }) { quietSince = readAt }
            if readAt >= nextSend, readAt - quietSince > 0.5 {
                sentAt = now()
                do { try client.send(.noteOn(72, velocity: 120, channel: 0)) } catch { fail("\(error)") }
            }
        }
    }
    guard !results.isEmpty else { say("latency none measured (capture errors: \(readErrors), note pending: \(sentAt != nil))"); return 1 }
    let sorted = results.sorted()
    say("latency median=\(fixed(sorted[sorted.count / 2] * 1000, 1))ms min=\(fixed(sorted.first! * 1000, 1))ms max=\(fixed(sorted.last! * 1000, 1))ms n=\(sorted.count)")
    return 0
}

// MARK: onsets

/// The onsets of a capture of one short sound repeated: where the first
/// channel's level rises through `threshold` × its peak, at least half an
/// `interval` after the last onset (a note's own decay and reverb do not count
/// twice). Frame-exact at the capture's rate.
func onsetFrames(_ x: [Float], rate: Int, threshold: Float, minGap: Double) -> [Int] {
    let peak = x.reduce(Float(0)) { max($0, abs($1)) }
    guard peak > 0 else { return [] }
    let level = threshold * peak, gap = Int(minGap * Double(rate))
    var onsets: [Int] = [], last = Int.min / 2
    for i in x.indices where abs(x[i]) >= level && i - last >= gap {
        onsets.append(i)
        last = i
    }
    return onsets
}

/// Inter-onset intervals of a metronome's capture: count, mean and standard
/// deviation in ms (and the extremes). Fails when there are fewer than
/// `--min-count` onsets or the standard deviation is over `--max-std` ms.
func onsets(_ args: Arguments) -> Int32 {
    guard let path = args.positional.first else { fail("onsets FILE.wav [--interval S] [--max-std MS] [--min-count N] [--threshold F]") }
    let (rate, x) = readWAV(path)
    let interval = args.double("--interval", 0.125)
    let frames = onsetFrames(x, rate: rate, threshold: Float(args.double("--threshold", 0.3)), minGap: interval / 2)
    let ioi = zip(frames.dropFirst(), frames).map { Double($0 - $1) / Double(rate) * 1000 }
    guard ioi.count >= 2 else { say("onsets n=\(frames.count) (too few to time) BAD"); return 1 }
    let mean = ioi.reduce(0, +) / Double(ioi.count)
    let std = (ioi.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(ioi.count - 1)).squareRoot()
    let maxStd = args.double("--max-std", .infinity), minCount = args.int("--min-count", 2)
    let ok = std <= maxStd && frames.count >= minCount
    say("onsets n=\(frames.count) ioi mean=\(fixed(mean, 3))ms std=\(fixed(std, 3))ms min=\(fixed(ioi.min()!, 2))ms max=\(fixed(ioi.max()!, 2))ms"
        + " (rate \(rate), expected \(fixed(interval * 1000, 1))ms)\(ok ? " OK" : " BAD")")
    return ok ? 0 : 1
}

// MARK: metronome

/// Writes a Standard MIDI File (format 0, 480 ticks per quarter at 120 bpm:
/// 960 ticks a second) of one identical short note every `--interval` seconds
/// for `--seconds`: the timing test's click track. `--then-bpm B --from-beat K` changes the
/// tempo to B at beat K (what a clock master leading at that tempo plays it as).
func metronome(_ args: Arguments) -> Int32 {
    guard let path = args.positional.first else {
        fail("metronome OUT.mid [--interval S] [--seconds S] [--note N | --notes N,N,…] [--channel C] [--length S] [--velocity V]"
            + " [--then-bpm B --from-beat K] [--program P] [--tail S]")
    }
    let interval = args.double("--interval", 0.125), seconds = args.double("--seconds", 20)
    // --notes: a keyboard part, the listed keys in turn (one per step).
    let notes = args.string("--notes", String(args.int("--note", 76))).split(separator: ",").map { UInt8(clamping: Int($0) ?? 128) }
    let channel = UInt8(args.int("--channel", 10) - 1), velocity = UInt8(clamping: args.int("--velocity", 110))
    let length = Int(args.double("--length", 0.03) * 960), step = Int(interval * 960)
    guard step > length, length > 0, channel < 16, !notes.isEmpty, notes.allSatisfy({ $0 < 128 }), (1...127).contains(velocity) else {
        fail("metronome: keys 0…127, velocity 1…127, and the note shorter than the interval")
    }
    func vlq(_ v: Int) -> [UInt8] {
        var bytes = [UInt8(v & 0x7F)], v = v >> 7
        while v > 0 { bytes.insert(UInt8(v & 0x7F | 0x80), at: 0); v >>= 7 }
        return bytes
    }
    func tempo(_ bpm: Double) -> [UInt8] {
        let us = Int((60_000_000 / bpm).rounded())
        return [0xFF, 0x51, 0x03, UInt8(us >> 16 & 0xFF), UInt8(us >> 8 & 0xFF), UInt8(us & 0xFF)]
    }
    var track: [UInt8] = vlq(0) + tempo(120)
    // --program P: a sound chosen first (an organ sustains while held, so a stuck note is heard).
    let program = args.int("--program", -1)
    guard program < 128 else { fail("metronome: --program 0…127") }
    if program >= 0 { track += vlq(0) + [0xC0 | channel, UInt8(program)] }
    let count = Int(seconds / interval)
    let thenBPM = args.double("--then-bpm", 0), changeTick = args.int("--from-beat", -1) * 480
    guard thenBPM == 0 || (thenBPM >= 1 && changeTick >= 0 && changeTick % step == 0) else {
        fail("metronome: --then-bpm needs --from-beat K on a step (K × 480 ticks a multiple of \(step))")
    }
    for i in 0..<count {
        let note = notes[i % notes.count]
        var delta = i == 0 ? 0 : step - length
        if thenBPM > 0, i * step == changeTick { track += vlq(delta) + tempo(thenBPM); delta = 0 }
        track += vlq(delta) + [0x90 | channel, note, velocity]
        track += vlq(length) + [0x80 | channel, note, 0]
    }
    // --tail S: the end of the track S seconds after the last note-off (aplaymidi stays
    // connected until then, so a stuck note is not released by its leaving).
    let tail = args.double("--tail", 0)
    track += vlq(tail > 0 ? Int(tail * 960) : step - length) + [0xFF, 0x2F, 0x00]
    func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
    let bytes: [UInt8] = Array("MThd".utf8) + be32(6) + [0, 0, 0, 1, 0x01, 0xE0] + Array("MTrk".utf8) + be32(track.count) + track
    guard let o = fopen(path, "wb") else { fail("cannot write \(path)") }
    let written = fwrite(bytes, 1, bytes.count, o)
    guard fclose(o) == 0, written == bytes.count else { fail("cannot write \(path)") }
    say("metronome notes=\(count) interval=\(fixed(interval * 1000, 1))ms")
    return 0
}

// MARK: stalls

/// A capture of notes played through a process stopped and continued (SIGSTOP/SIGCONT) at
/// known times: `--stops` and `--conts` in ms of the wall clock, `--last-off` the sender's
/// last note-off, all from one origin (the capture's launch, say). The first stall's gap of
/// silence (it begins when the output's `--buffer` ms of queued audio have played) fixes
/// where the capture starts on that clock. For each stall: how long after its CONT the sound
/// came back, and the RMS in a window from 100 to `--window-end` (400) ms after the CONT; then the RMS from
/// 2.5 to 4 s after the last note-off (nothing may sound there: no stuck note). Sound means
/// above 10× the silence floor (the capture before the first note) and above −60 dBFS.
/// Fails when a window after a CONT is not sound, or the tail is.
func stalls(_ args: Arguments) -> Int32 {
    func list(_ name: String) -> [Double] { args.string(name, "").split(separator: ",").compactMap { Double($0) } }
    let stops = list("--stops"), conts = list("--conts"), lastOff = args.double("--last-off", -1)
    guard let path = args.positional.first, !stops.isEmpty, stops.count == conts.count, lastOff >= 0 else {
        fail("stalls CAPTURE.wav --stops MS,… --conts MS,… --last-off MS [--buffer MS] [--window-end MS]")
    }
    let buffer = args.double("--buffer", 186), windowEnd = args.double("--window-end", 400)
    let (rate, x) = readWAV(path)
    let env = envelope(x, rate: rate)  // 10 ms blocks
    func rms(_ fromMs: Double, _ toMs: Double) -> Double? {
        let a = max(0, Int(fromMs / 10)), b = Int(toMs / 10)
        guard b > a, b <= env.count else { return nil }
        return (env[a..<b].reduce(0.0) { $0 + $1 * $1 } / Double(b - a)).squareRoot()
    }
    guard let first = env.firstIndex(where: { $0 > 1e-3 }) else { say("stalls silent capture BAD"); return 1 }
    // The floor: before the first note, leaving out the 50 ms its attack rises through.
    let floor = env[..<max(0, first - 5)].max() ?? 0
    let threshold = max(floor * 10, 1e-3)
    // The first stall's gap: the first silent run after the first sound at least 60 % of its length.
    let minRun = Int((conts[0] - stops[0]) * 0.6 / 10)
    var run = 0, gap: Int? = nil
    for i in first..<env.count {
        run = env[i] < threshold ? run + 1 : 0
        if run >= minRun { gap = i - run + 1; break }
    }
    guard let gap else { say("stalls no gap of \(minRun * 10) ms for the first stall BAD"); return 1 }
    // The wall clock's ms at the capture's first frame.
    let start = stops[0] + buffer - Double(gap) * 10
    let playing = rms(Double(first) * 10, Double(gap) * 10) ?? 0
    var ok = true, resumes: [String] = [], windows: [String] = []
    for (stop, cont) in zip(stops, conts) {
        let c = cont - start
        // Back: the first sound after this stall's gap (which starts once the queued audio has played).
        // A gap is 40 ms or more of silence (a stall of 250 ms leaves at least 64 ms with 186 ms queued).
        var i = max(0, Int((stop - start) / 10)), silent = 0, back: Double? = nil
        while i < env.count {
            if env[i] < threshold { silent += 1 } else if silent >= 4 { back = Double(i) * 10 - c; break } else { silent = 0 }
            i += 1
        }
        resumes.append(back.map { fixed($0, 0) } ?? "never")
        let level = rms(c + 100, c + windowEnd)
        windows.append(level.map { fixed($0, 4) } ?? "none")
        if level == nil || level! < threshold { ok = false }
    }
    let tail = rms(lastOff - start + 2500, lastOff - start + 4000)
    if tail == nil || tail! >= threshold { ok = false }
    say("stalls n=\(stops.count) floor=\(fixed(floor, 5)) threshold=\(fixed(threshold, 4)) playing-rms=\(fixed(playing, 4))"
        + " capture-start=\(fixed(start, 0))ms back-after-cont-ms=\(resumes.joined(separator: ","))"
        + " window-rms=\(windows.joined(separator: ",")) tail-rms=\(tail.map { fixed($0, 5) } ?? "none (capture too short)") \(ok ? "OK" : "BAD")")
    return ok ? 0 : 1
}

// MARK: level

/// The RMS of a capture's first channel over windows (`--from S --to S`, repeated; a negative
/// time counts from the end; none: the whole file), in dBFS too, and where it first sounds (a
/// 10 ms block above −60 dBFS). One read of the file for every window.
func level(_ args: Arguments) -> Int32 {
    guard let path = args.positional.first else { fail("level FILE.wav [--from S --to S]...") }
    let (rate, x) = readWAV(path)
    let seconds = Double(x.count) / Double(rate)
    func at(_ s: Double) -> Int { min(x.count, max(0, Int(((s < 0 ? seconds + s : s)) * Double(rate)))) }
    var froms = args.all("--from").compactMap { Double($0) }, tos = args.all("--to").compactMap { Double($0) }
    if froms.isEmpty && tos.isEmpty { froms = [0]; tos = [seconds] }
    guard froms.count == tos.count else { fail("level: as many --from as --to") }
    var levels: [Double] = []
    for (from, to) in zip(froms, tos) {
        let a = at(from), b = at(to)
        levels.append(b > a ? (x[a..<b].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(b - a)).squareRoot() : 0)
    }
    let first = envelope(x, rate: rate).firstIndex { $0 > 1e-3 }
    say("level rms=\(levels.map { fixed($0, 6) }.joined(separator: ","))"
        + " dbfs=\(levels.map { $0 > 0 ? fixed(20 * log10($0), 1) : "-inf" }.joined(separator: ","))"
        + " first-sound=\(first.map { fixed(Double($0) / 100, 2) } ?? "none") seconds=\(fixed(seconds, 2))")
    return 0
}

// MARK: speedup

/// Copies a Standard MIDI File with every tempo event (FF 51 03) divided by FACTOR.
func speedup(_ args: Arguments) -> Int32 {
    guard args.positional.count == 3, let factor = Double(args.positional[2]), factor > 0 else { fail("speedup IN OUT FACTOR") }
    guard let f = fopen(args.positional[0], "rb") else { fail("cannot open \(args.positional[0])") }
    var bytes: [UInt8] = []
    var c = fgetc(f)
    while c != EOF { bytes.append(UInt8(c)); c = fgetc(f) }
    fclose(f)
    var i = 0, changed = 0
    while i + 6 <= bytes.count {
        if bytes[i] == 0xFF, bytes[i + 1] == 0x51, bytes[i + 2] == 0x03 {
            let t = Int(bytes[i + 3]) << 16 | Int(bytes[i + 4]) << 8 | Int(bytes[i + 5])
            let n = max(1, Int(Double(t) / factor))
            bytes[i + 3] = UInt8(n >> 16 & 0xFF); bytes[i + 4] = UInt8(n >> 8 & 0xFF); bytes[i + 5] = UInt8(n & 0xFF)
            changed += 1
            i += 6
        } else { i += 1 }
    }
    guard let o = fopen(args.positional[1], "wb") else { fail("cannot write \(args.positional[1])") }
    fwrite(bytes, 1, bytes.count, o)
    fclose(o)
    say("speedup tempo-events=\(changed)")
    return changed > 0 ? 0 : 1
}

// MARK: ports

func ports() -> Int32 {
    do {
        let client = try SequencerClient(name: "carillon-probe")
        for p in try client.ports() {
            say("port \(p.address) '\(p.clientName)' '\(p.portName)' \(p.capabilities) \(p.type)\(p.isSource ? " source" : "")")
        }
    } catch { fail("\(error)") }
    for d in PCMPlayback.devices() { say("pcm \(d)") }
    return 0
}

let args = Array(CommandLine.arguments.dropFirst())
guard let command = args.first else { fail("usage: carillon-alsa-probe listen|send|sine|analyze|speedup|ports …") }
let rest = Arguments(args.dropFirst())
let status: Int32 = switch command {
case "listen": listen(rest)
case "send": send(rest)
case "sine": sine(rest)
case "analyze": analyze(rest)
case "speedup": speedup(rest)
case "envelope": compareEnvelopes(rest)
case "hold-release": holdRelease(rest)
case "latency": latency(rest)
case "onsets": onsets(rest)
case "metronome": metronome(rest)
case "stalls": stalls(rest)
case "level": level(rest)
case "ports": ports()
case "clocks": clocks(rest)
case "clock-master": clockMaster(rest)
default: fail("unknown command \(command)")
}
exit(status)
