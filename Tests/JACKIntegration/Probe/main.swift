// carillon-jack-probe: the other end of the JACK test (scripts/test-jack).
// A JACK client that plays a Standard MIDI File into a JACK MIDI port, each
// event at its frame in the cycle, and records two audio ports to a WAV file.
//
//   play FILE.mid --record OUT.wav [--from PORT]... [--to PORT] [--name N]
//        [--lead S] [--tail S] [--wait S] [--mark-calls] [--trace FILE]
//
// It registers `midi_out`, `in_1` and `in_2`, connects each `--from` audio
// port (waiting for it to appear) to its inputs, connects `midi_out` to
// `--to` if given, and waits until `midi_out` has a connection (made by the
// other side, e.g. `carillon --jack-midi-connect`). Then the clock starts:
// the file's events go out from `--lead` seconds on, and recording runs for
// lead + the file's length + `--tail` seconds. Prints one line:
//   jack-probe: rate=R period=P events=N sent=N late=N frames=N xruns=N calls=N
//
// `--mark-calls`: every call of the process callback from the clock's start
// also writes, first at offset 0, a pitch bend on channel 16 whose 14-bit
// value is the call's number (mod 16384), so the receiver's record says
// which of the probe's buffers it read (a buffer it never read has its
// marker missing; one read twice, its marker twice). `--trace FILE` writes
// one line per call (`call N marker T0 T1 LASTFRAME FRAMES`, T0 and T1 the
// monotonic clock in ns at the call's start and end) and one per event sent
// (`event INDEX CALL MARKER OFFSET HEXBYTES`), for scripts/test-jack's check.
import Glibc
import JACK
import MIDI
import SoundFile
import Synchronization

func say(_ line: String) {
    print(line)
    fflush(nil)
}

func fail(_ message: String) -> Never {
    let text = Array("carillon-jack-probe: \(message)\n".utf8)
    _ = text.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    exit(1)
}

struct Arguments {
    /// Options without a value.
    static let flags: Set<String> = ["--mark-calls"]
    var positional: [String] = []
    var options: [String: [String]] = [:]
    init(_ args: ArraySlice<String>) {
        var it = args.makeIterator()
        while let a = it.next() {
            if Self.flags.contains(a) { options[a, default: []].append("") }
            else if a.hasPrefix("--"), let v = it.next() { options[a, default: []].append(v) } else { positional.append(a) }
        }
    }
    func string(_ k: String) -> String? { options[k]?.last }
    func double(_ k: String, _ d: Double) -> Double { options[k]?.last.flatMap { Double($0) } ?? d }
    func all(_ k: String) -> [String] { options[k] ?? [] }
}

/// The file's channel messages and complete SysEx, as wire bytes, at their frames.
struct Schedule {
    var frames: [Int] = []
    var starts: [Int] = []   // into bytes; one past the last: bytes.count
    var bytes: [UInt8] = []

    init(file: StandardMIDIFile, rate: Int, lead: Double) {
        file.forEachTimedEvent { e in
            guard case .midi(let message) = e.event else { return }
            frames.append(Int(((lead + e.seconds) * Double(rate)).rounded()))
            starts.append(bytes.count)
            bytes += message.bytes
        }
        starts.append(bytes.count)
    }
    var count: Int { frames.count }
}

/// The process side: sends what is due, records what comes in. No allocation, lock or log.
final class Player: JACKClientDelegate, @unchecked Sendable {
    let midiOut: JACKPort, inLeft: JACKPort, inRight: JACKPort
    let schedule: Schedule
    let capture: UnsafeMutableBufferPointer<Float>
    let totalFrames: Int
    let go = Atomic<Bool>(false)
    let recorded = Atomic<Int>(0)
    let sent = Atomic<Int>(0)
    let late = Atomic<Int>(0)
    let xruns = Atomic<Int>(0)
    private var clock = -1   // frames since the clock started; -1 before
    private var next = 0
    let markCalls: Bool
    /// Calls since the clock started (their number is the marker).
    let calls = Atomic<Int>(0)
    /// Per call, the trace's fields (preallocated: the process thread never allocates).
    struct CallRecord { var start: UInt64 = 0, end: UInt64 = 0, lastFrame: UInt32 = 0, frames = 0 }
    let callRecords: UnsafeMutableBufferPointer<CallRecord>
    /// Per scheduled event: the call that sent it and its offset there (-1: not sent).
    let sentIn: UnsafeMutableBufferPointer<(call: Int, offset: Int)>
    let client: JACKClient

    init(client: JACKClient, midiOut: JACKPort, inLeft: JACKPort, inRight: JACKPort, schedule: Schedule, totalFrames: Int,
         markCalls: Bool) {
        self.client = client
        self.midiOut = midiOut; self.inLeft = inLeft; self.inRight = inRight
        self.schedule = schedule; self.totalFrames = totalFrames; self.markCalls = markCalls
        capture = .allocate(capacity: 2 * totalFrames)
        capture.initialize(repeating: 0)
        callRecords = .allocate(capacity: totalFrames / 16 + 1)
        callRecords.initialize(repeating: CallRecord())
        sentIn = .allocate(capacity: schedule.count)
        sentIn.initialize(repeating: (-1, -1))
    }

    static func nanoseconds() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }

    func process(frames: Int) {
        let start = Self.nanoseconds()
        let out = midiOut.midiOutput(frames: frames)
        if clock < 0 {
            guard go.load(ordering: .acquiring) else { return }
            clock = 0
        }
        let call = calls.load(ordering: .relaxed)
        if markCalls {
            let marker = call & 0x3FFF
            let bend: (UInt8, UInt8, UInt8) = (0xEF, UInt8(marker & 0x7F), UInt8(marker >> 7))
            withUnsafeBytes(of: bend) { _ = out.write($0.bindMemory(to: UInt8.self), at: 0) }
        }
        // Every event due before this cycle's end, at its offset (a late one at 0, counted).
        schedule.bytes.withUnsafeBufferPointer { bytes in
            while next < schedule.count && schedule.frames[next] < clock + frames {
                let offset = schedule.frames[next] - clock
                if offset < 0 { late.add(1, ordering: .relaxed) }
                let message = UnsafeBufferPointer(rebasing: bytes[schedule.starts[next]..<schedule.starts[next + 1]])
                if out.write(message, at: max(0, offset)) {
                    sent.add(1, ordering: .relaxed)
                    sentIn[next] = (call, max(0, offset))
                }
                next += 1
            }
        }
        let done = recorded.load(ordering: .relaxed)
        let n = min(frames, totalFrames - done)
        if n > 0 {
            let l = inLeft.audioBuffer(frames: frames), r = inRight.audioBuffer(frames: frames)
            for i in 0..<n {
                capture[2 * (done + i)] = l[i]
                capture[2 * (done + i) + 1] = r[i]
            }
            recorded.store(done + n, ordering: .releasing)
        }
        clock += frames
        if call < callRecords.count {
            callRecords[call] = CallRecord(start: start, end: Self.nanoseconds(), lastFrame: client.cycleStartFrame, frames: frames)
        }
        calls.store(call + 1, ordering: .relaxed)
    }

    /// The trace (`--trace`): after the process callback has stopped.
    func trace() -> String {
        var lines: [String] = []
        for call in 0..<min(calls.load(ordering: .relaxed), callRecords.count) {
            let r = callRecords[call]
            lines.append("call \(call) \(call & 0x3FFF) \(r.start) \(r.end) \(r.lastFrame) \(r.frames)")
        }
        for index in 0..<schedule.count where sentIn[index].call >= 0 {
            let bytes = schedule.bytes[schedule.starts[index]..<schedule.starts[index + 1]]
            let hex = bytes.map { String($0, radix: 16) }.joined(separator: ":")
            lines.append("event \(index) \(sentIn[index].call) \(sentIn[index].call & 0x3FFF) \(sentIn[index].offset) \(hex)")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    func xrun() { xruns.add(1, ordering: .relaxed) }
}

func play(_ args: Arguments) -> Int32 {
    guard let path = args.positional.first, let output = args.string("--record") else {
        fail("play FILE.mid --record OUT.wav [--from PORT]... [--to PORT] [--name N] [--lead S] [--tail S] [--wait S]")
    }
    guard let data = FileHandleLite.read(path) else { fail("cannot read \(path)") }
    let file: StandardMIDIFile
    do { file = try StandardMIDIFile(bytes: data) } catch { fail("\(path): \(error)") }
    let lead = args.double("--lead", 1), tail = args.double("--tail", 3), wait = args.double("--wait", 20)

    let client: JACKClient
    let midiOut: JACKPort, inLeft: JACKPort, inRight: JACKPort
    do {
        client = try JACKClient(name: args.string("--name") ?? "carillon-jack-probe")
        midiOut = try client.register("midi_out", .midi, .output)
        inLeft = try client.register("in_1", .audio, .input)
        inRight = try client.register("in_2", .audio, .input)
    } catch { fail("\(error)") }
    let rate = client.sampleRate
    let schedule = Schedule(file: file, rate: rate, lead: lead)
    let seconds = lead + (schedule.frames.last.map { Double($0) / Double(rate) } ?? 0) + tail
    let player = Player(client: client, midiOut: midiOut, inLeft: inLeft, inRight: inRight, schedule: schedule,
                        totalFrames: Int(seconds * Double(rate)), markCalls: args.string("--mark-calls") != nil)
    do { try client.activate(player) } catch { fail("\(error)") }
    defer { client.deactivate() }

    // Connections: the audio sources as they appear, the MIDI destination; then wait for midi_out's.
    var waited = 0.0
    var pending = args.all("--from")
    while !pending.isEmpty || midiOut.connectionCount == 0 {
        // A port is listed once registered, but takes connections only once its client is active: retry.
        if let first = pending.first, client.ports(.audio, .output).contains(first) {
            let input = args.all("--from").count - pending.count == 0 ? inLeft : inRight
            if (try? client.connect(first, to: input.fullName)) != nil {
                pending.removeFirst()
                continue
            }
        }
        if pending.isEmpty, let to = args.string("--to"), client.ports(.midi, .input).contains(to) {
            _ = try? client.connect(midiOut.fullName, to: to)
        }
        usleep(50_000)
        waited += 0.05
        if waited > wait {
            fail("after \(wait) s: " + (pending.isEmpty ? "nothing connected to \(midiOut.fullName)" : "no port \(pending[0])"))
        }
    }
    say("jack-probe: connected after \(Int(waited * 1000)) ms; playing \(schedule.count) events over \(Int(seconds)) s")
    player.go.store(true, ordering: .releasing)
    while player.recorded.load(ordering: .acquiring) < player.totalFrames {
        usleep(50_000)
        waited += 0.05
        if waited > wait + seconds * 2 { fail("the JACK server stopped calling (recorded \(player.recorded.load(ordering: .relaxed)) frames)") }
    }
    client.deactivate()
    do {
        let writer = try AudioFileWriter(path: output, format: .wav, encoding: .float32, sampleRate: rate)
        try writer.write(UnsafeBufferPointer(player.capture), frames: player.totalFrames)
        try writer.finish()
    } catch { fail("\(output): \(error)") }
    if let path = args.string("--trace") {
        guard let f = fopen(path, "w") else { fail("cannot write \(path)") }
        let text = player.trace()
        let ok = fputs(text, f) >= 0
        guard fclose(f) == 0, ok else { fail("cannot write \(path)") }
    }
    say("jack-probe: rate=\(rate) period=\(client.bufferSize) events=\(schedule.count) sent=\(player.sent.load(ordering: .relaxed)) "
        + "late=\(player.late.load(ordering: .relaxed)) frames=\(player.totalFrames) xruns=\(player.xruns.load(ordering: .relaxed)) "
        + "calls=\(player.calls.load(ordering: .relaxed))")
    return player.sent.load(ordering: .relaxed) == schedule.count ? 0 : 1
}

/// Whole-file read without Foundation.
enum FileHandleLite {
    static func read(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&chunk, 1, chunk.count, f)
            if n <= 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        return bytes
    }
}

let args = CommandLine.arguments
switch args.dropFirst().first {
case "play": exit(play(Arguments(args.dropFirst(2))))
default: fail("usage: carillon-jack-probe play FILE.mid --record OUT.wav [--from PORT]... [--to PORT] [--lead S] [--tail S]")
}
