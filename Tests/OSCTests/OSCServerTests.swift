import ChildProcess
import Controls
import Foundation
import MIDI
import MappingFiles
import OSC
import Parameters
import Synchronization
import Testing

/// A real server on 127.0.0.1 in front of a `ControlHub`, driven by liblo's own
/// tools (`oscsend`, `oscdump`) and a loopback client; every loop is bounded.
@Suite(.serialized) struct OSCServerTests {
    static func server(_ hub: ControlHub, logInterval: Double = 2, notes: (@Sendable (MIDIMessage) -> Void)? = nil) throws -> OSCServer {
        let s = try OSCServer(hub: hub, configuration: OSCConfiguration(endpoint: OSCEndpoint(port: 0), logInterval: logInterval), notes: notes)
        try s.start()
        return s
    }

    @Test func oscsend_setsParameters_andAQueryAnswersTheSender() throws {
        let hub = ControlHub(mapping: nil)
        let server = try Self.server(hub)
        defer { server.stop() }
        let port = "\(server.port)"
        #expect(try run("oscsend", ["127.0.0.1", port, "/carillon/strip/3/gain", "f", "-6.0"]) == 0)
        #expect(try run("oscsend", ["127.0.0.1", port, "/carillon/channel/1/cc/74", "i", "100"]) == 0)
        #expect(eventually(2) { hub.value(of: .strip(.channel(2), .gain)) == -6 && hub.value(of: .channelCC(0, 74)) == 100 })

        let client = try LoopbackClient()
        client.send(bytes: LoopbackClient.message("/carillon/get", ["strip.3.gain"]), to: server.port)
        let answer = client.receive(timeout: 2)
        #expect(answer?.path == "/carillon/strip/3/gain" && answer?.value == "-6.0", "\(String(describing: answer))")
        client.send(bytes: LoopbackClient.message("/carillon/channel/1/cc/74"), to: server.port)
        let cc = client.receive(timeout: 2)
        #expect(cc?.path == "/carillon/channel/1/cc/74" && cc?.value == "100.0", "\(String(describing: cc))")
        // The server answers a query before it counts it: wait for the count.
        #expect(eventually(2) { server.counters.applied == 4 }, "applied: \(server.counters.applied)")
    }

    @Test func notes_goToTheSink_velocityZeroIsOff() throws {
        let got = Mutex<[MIDIMessage]>([])
        let hub = ControlHub(mapping: nil)
        let server = try Self.server(hub) { m in got.withLock { $0.append(m) } }
        defer { server.stop() }
        #expect(try run("oscsend", ["127.0.0.1", "\(server.port)", "/carillon/note", "iii", "10", "36", "100"]) == 0)
        #expect(try run("oscsend", ["127.0.0.1", "\(server.port)", "/carillon/note", "iii", "10", "36", "0"]) == 0)
        #expect(eventually(2) { got.withLock { $0.count } == 2 })
        #expect(got.withLock { $0 } == [.noteOn(36, velocity: 100, channel: 9), .noteOff(36, channel: 9)])
    }

    /// The output's state (issue 40): `/carillon/audio` answers it, and a subscriber is sent it when it changes.
    @Test func audio_answersTheOutputsState_andSubscribersHearItChange() throws {
        let outage = Mutex<String?>(nil)
        let hub = ControlHub(mapping: nil)
        let server = try OSCServer(hub: hub, configuration: OSCConfiguration(endpoint: OSCEndpoint(port: 0)),
                                   audio: { outage.withLock { $0 } })
        try server.start()
        defer { server.stop() }
        let client = try LoopbackClient()
        client.send(bytes: LoopbackClient.message("/carillon/audio"), to: server.port)
        let playing = client.receive(timeout: 2)
        #expect(playing?.path == "/carillon/audio" && playing?.value == "playing", "\(String(describing: playing))")
        client.send(bytes: LoopbackClient.message("/carillon/subscribe"), to: server.port)
        #expect(eventually(2) { server.counters.subscribers == 1 })
        outage.withLock { $0 = "no audio: snd_pcm_writei failed: No such device, retrying" }
        let down = client.receive(timeout: 2)
        #expect(down?.path == "/carillon/audio" && down?.value == "no audio: snd_pcm_writei failed: No such device, retrying",
                "\(String(describing: down))")
        outage.withLock { $0 = nil }
        let back = client.receive(timeout: 2)
        #expect(back?.path == "/carillon/audio" && back?.value == "playing", "\(String(describing: back))")
    }

    /// A fader on CC 7 moved as a controller moves it: `oscdump`, subscribed, prints the change;
    /// a sweep of 128 values in a few milliseconds comes back as a handful of messages.
    @Test func subscriber_getsAControllersChange_coalesced() throws {
        let mapping = try ControlMapping.parse(yaml: """
            controls:
              - { name: Level, kind: fader, source: { cc: 7 }, range: [-60, 6], unit: dB, soft-takeover: false, targets: [strip.1.gain] }
            """)
        let hub = ControlHub(mapping: mapping)
        let server = try Self.server(hub)
        defer { server.stop() }
        let dumpPort = try freePort()
        // -L: a line at a time into the pipe. A process group of its own, killed and reaped (ChildProcess).
        let dump = try ChildProcess("/usr/bin/oscdump", ["-L", "\(dumpPort)"])  // liblo takes a host in a URL as a multicast group
        defer { #expect(dump.kill() != nil, "oscdump was not reaped") }
        usleep(200_000)  // oscdump binds its port
        #expect(try run("oscsend", ["127.0.0.1", "\(server.port)", "/carillon/subscribe", "i", "\(dumpPort)"]) == 0)
        #expect(eventually(2) { server.counters.subscribers == 1 })

        _ = hub.receive(.cc(7, value: 127, channel: 0))
        #expect(eventually(2) { dump.output.contains("/carillon/strip/1/gain f 6.0") }, "\(dump.output)")

        let before = dump.output.components(separatedBy: "/carillon/strip/1/gain").count
        for v in 0...127 { _ = hub.receive(.cc(7, value: UInt7(127 - v), channel: 0)) }
        #expect(eventually(2) { dump.output.contains("/carillon/strip/1/gain f -60.0") }, "\(dump.output)")
        usleep(100_000)
        let sweep = dump.output.components(separatedBy: "/carillon/strip/1/gain").count - before
        #expect(sweep >= 1 && sweep < 20, "128 moves came back as \(sweep) messages")
        print("subscriber: a 128-value sweep came back as \(sweep) messages")
    }

    /// A bundle timed 500 ms ahead lands within one block of its time: 256 frames
    /// at 48 kHz (the default --period), 5.33 ms. Measured as when the hub
    /// publishes the change (the store's atomics are written then; the render
    /// thread reads them at its next block's start) against the timetag.
    /// Never early, in any round; within a block in four rounds of five. One
    /// round may land late by any amount: the server's thread is an ordinary one
    /// and CI runs the suites side by side on two cores, where the kernel once
    /// woke it 18 ms late and once the whole test process stood still for 3.9 s
    /// (a round landed 654 ms late, and every test then running "took" 3.871 s).
    /// A server that applied at arrival or polled its schedule coarsely fails
    /// every round; one that waited for the next datagram never lands (none comes).
    @Test func bundle_500msAhead_landsWithinOneBlock() throws {
        let hub = ControlHub(mapping: nil)
        let landed = Mutex<Double?>(nil)
        let token = hub.subscribe { change in
            if change.address == .masterGain && change.value == -3 {
                var t = timespec(); clock_gettime(CLOCK_REALTIME, &t)
                landed.withLock { $0 = $0 ?? Double(t.tv_sec) + Double(t.tv_nsec) / 1e9 }
            }
        }
        defer { hub.unsubscribe(token) }
        let server = try Self.server(hub)
        defer { server.stop() }
        let client = try LoopbackClient()
        var errors: [Double] = []
        for round in 0..<5 {
            landed.withLock { $0 = nil }
            hub.set(.masterGain, to: 0)
            var t = timespec(); clock_gettime(CLOCK_REALTIME, &t)
            let due = Double(t.tv_sec) + Double(t.tv_nsec) / 1e9 + 0.5
            client.send(bytes: LoopbackClient.bundle(at: due, "/carillon/master/gain", [-3.0]), to: server.port)
            usleep(400_000)
            #expect(landed.withLock { $0 } == nil, "round \(round): applied before its time")
            #expect(eventually(1) { landed.withLock { $0 } != nil })
            if let at = landed.withLock({ $0 }) { errors.append((at - due) * 1000) }
        }
        let block = 256.0 / 48_000 * 1000
        print("bundle 500 ms ahead: landed \(errors.map { String(format: "%+.2f", $0) }.joined(separator: ", ")) ms from the timetag (a block: \(String(format: "%.2f", block)) ms)")
        #expect(errors.count == 5 && errors.allSatisfy { $0 > -block }, "early: \(errors)")
        #expect(errors.count == 5 && errors.filter { $0 < block }.count >= 4, "late beyond a block in more than one round: \(errors)")
        #expect(server.counters.scheduled == 5)
    }

    /// 100,000 packets from a bounded loop: random bytes, truncated valid messages,
    /// wrong types, huge strings, unknown paths. The server counts them, logs a
    /// rate-limited line, and still answers.
    @Test func fuzz_100000Packets_counted_andTheServerStillAnswers() throws {
        let hub = ControlHub(mapping: nil)
        let server = try Self.server(hub, logInterval: 0.5)
        defer { server.stop() }
        let client = try LoopbackClient()
        // A block clock beside the flood: a thread woken every 256 frames at 48 kHz, as
        // an output thread is; its lateness says what the flood costs a block's start.
        let blockClock = BlockClock(period: 256.0 / 48_000)
        let quiet = blockClock.measure(seconds: 1)
        let flood = Thread { blockClock.measureInto(seconds: 4) }
        flood.start()
        var rng = SystemRandomNumberGenerator()
        let valid = LoopbackClient.message("/carillon/strip/3/gain", [-6.0])
        let huge = LoopbackClient.message("/carillon/get", [String(repeating: "x", count: 60_000)])
        let wrongType = LoopbackClient.message("/carillon/strip/3/gain", ["loud"])
        let unknown = LoopbackClient.message("/carillon/strip/99/gain", [1.0])
        var sent = 0
        let start = Date()
        for i in 0..<100_000 {
            let packet: [UInt8]
            switch i % 5 {
            case 0: packet = (0..<Int.random(in: 1...512, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            case 1: packet = Array(valid.prefix(Int.random(in: 1..<valid.count, using: &rng)))
            case 2: packet = wrongType
            case 3: packet = i % 50 == 3 ? huge : unknown
            default:
                var p = valid
                p[Int.random(in: 0..<p.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                packet = p
            }
            if client.send(bytes: packet, to: server.port) { sent += 1 }
            // Loopback UDP drops what the server's buffer cannot hold: keep at most 1000 in flight (bounded wait).
            var waits = 0
            while sent - server.counters.packets > 1000 && waits < 500 { usleep(200); waits += 1 }
        }
        let seconds = Date().timeIntervalSince(start)
        #expect(eventually(5) { server.counters.packets >= sent * 9 / 10 })
        usleep(100_000)
        let c = server.counters
        print("fuzz: \(sent) packets sent in \(String(format: "%.2f", seconds)) s; read \(c.packets): \(c.malformed) malformed, \(c.unknownPaths) unknown paths, \(c.wrongArguments) wrong arguments, \(c.applied) applied")
        #expect(c.malformed > 20_000 && c.unknownPaths > 10_000 && c.wrongArguments > 10_000)
        client.send(bytes: LoopbackClient.message("/carillon/master/gain"), to: server.port)
        var answer: (path: String, value: String)?
        for _ in 0..<50 where answer?.path != "/carillon/master/gain" { answer = client.receive(timeout: 0.1) }
        #expect(answer?.path == "/carillon/master/gain", "no answer after the flood")
        var log: [String] = []
        #expect(eventually(3) { log += server.takeLog(); return log.contains { $0.contains("malformed") } })
        print("fuzz log (\(log.count) lines): \(log.last ?? "")")
        #expect(log.count <= Int(seconds / 0.5) + 4, "the log is rate-limited: \(log.count) lines")
        let loaded = blockClock.waitForMeasurement()
        print("block clock (5.33 ms): lateness p99 \(String(format: "%.3f", quiet.p99)) ms, max \(String(format: "%.3f", quiet.max)) ms quiet; "
              + "p99 \(String(format: "%.3f", loaded.p99)) ms, max \(String(format: "%.3f", loaded.max)) ms under the flood")
        // Reported, not asserted: this thread is not SCHED_FIFO (refused here) and the machine's
        // 2 cores are shared with other builds, so its lateness measures their load as much as the flood's.
        #expect(loaded.max.isFinite, "the block clock did not finish")
    }
}

/// A thread woken at each block's deadline (clock_nanosleep, absolute), recording how late it woke.
final class BlockClock: @unchecked Sendable {
    let period: Double
    private let result = Mutex<(p99: Double, max: Double)?>(nil)
    init(period: Double) { self.period = period }

    /// Lateness in ms over `seconds`: the 99th percentile and the worst.
    func measure(seconds: Double) -> (p99: Double, max: Double) {
        var next = timespec(); clock_gettime(CLOCK_MONOTONIC, &next)
        var late: [Double] = []
        let step = Int(period * 1e9)
        for _ in 0..<Int(seconds / period) {
            next.tv_nsec += step
            if next.tv_nsec >= 1_000_000_000 { next.tv_nsec -= 1_000_000_000; next.tv_sec += 1 }
            var n = next
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &n, nil)
            var now = timespec(); clock_gettime(CLOCK_MONOTONIC, &now)
            late.append(Double(now.tv_sec - next.tv_sec) * 1000 + Double(now.tv_nsec - next.tv_nsec) / 1e6)
        }
        late.sort()
        return (late[late.count * 99 / 100], late.last ?? 0)
    }

    func measureInto(seconds: Double) { let r = measure(seconds: seconds); result.withLock { $0 = r } }

    /// Bounded: gives up after 10 s.
    func waitForMeasurement() -> (p99: Double, max: Double) {
        _ = eventually(10) { result.withLock { $0 } != nil }
        return result.withLock { $0 } ?? (.infinity, .infinity)
    }
}
