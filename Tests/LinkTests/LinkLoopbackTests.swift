import Foundation
import Glibc
import Link
import Testing

/// Issue 31's test: two processes on this machine (Link over the loopback
/// interface) agree on tempo and beat phase within 1 ms after a tempo change
/// from either. Each process is `carillon-link-probe`, one Link peer; both
/// read their own session state at the same instant of Link's clock (the
/// machine's CLOCK_MONOTONIC_RAW, shared by both), and the test compares.
@Suite(.serialized) struct LinkLoopbackTests {
    static let quantum = 4.0

    @Test(.enabled(if: LoopbackMulticast.problem == nil,
                   "Link finds peers by UDP multicast (224.76.78.75:20808); here it cannot reach this process over loopback"))
    func twoProcesses_agreeOnTempoAndPhase_afterAChangeFromEither() throws {
        let a = try Probe(bpm: 120), b = try Probe(bpm: 90)
        defer { a.quit(); b.quit() }
        // Both in one session: each sees the other.
        let joined = try waitFor(seconds: 10) { try a.peers() == 1 && b.peers() == 1 }
        #expect(joined, "the two peers never found each other")
        guard joined else { return }
        let settled = try waitFor(seconds: 5) { try abs(a.state().tempo - b.state().tempo) < 0.01 }
        #expect(settled, "no common tempo after joining")

        for (changer, other, bpm) in [(a, b, 133.0), (b, a, 97.5)] {
            let t0 = Date()
            try changer.setTempo(bpm)
            let seen = try waitFor(seconds: 3) { try abs(other.state().tempo - bpm) < 0.01 }
            let propagation = Date().timeIntervalSince(t0) * 1000
            #expect(seen, "\(other.name) never saw \(changer.name)'s tempo \(bpm)")
            // Agreement read at once, then over the next second: tempo, and phase in ms at that tempo.
            var worstPhaseMs = 0.0, worstTempo = 0.0
            for i in 0..<20 {
                if i > 0 { usleep(50_000) }
                let at = LinkSession.linkMicros(monotonicNanos: monotonic()) + 20_000
                let sa = try a.state(at: at), sb = try b.state(at: at)
                var d = (sa.phase - sb.phase).truncatingRemainder(dividingBy: Self.quantum)
                if d > Self.quantum / 2 { d -= Self.quantum } else if d < -Self.quantum / 2 { d += Self.quantum }
                worstPhaseMs = max(worstPhaseMs, abs(d) * 60_000 / sa.tempo)
                worstTempo = max(worstTempo, abs(sa.tempo - sb.tempo))
                #expect(abs(sa.tempo - bpm) < 0.01 && abs(sb.tempo - bpm) < 0.01)
            }
            print("link loopback: \(changer.name) set \(bpm) bpm; \(other.name) had it after \(String(format: "%.1f", propagation)) ms; "
                  + "over 20 reads in 1 s the tempi differed by ≤ \(String(format: "%.6f", worstTempo)) bpm, "
                  + "the phases (quantum 4) by ≤ \(String(format: "%.4f", worstPhaseMs)) ms")
            #expect(worstPhaseMs <= 1.0, "phase apart by \(worstPhaseMs) ms after \(changer.name)'s change")
            #expect(worstTempo < 0.01)
        }
    }

    /// The wrapper's checks, without the network: arguments Link does not take are typed errors.
    @Test func badArguments_areTypedErrors() throws {
        #expect(throws: LinkError.self) { try LinkSession(beatsPerMinute: 5) }
        let link = try LinkSession(beatsPerMinute: 120)
        do {
            try link.setTempo(1500)
            Issue.record("1500 bpm accepted")
        } catch { #expect(error.kind == .invalidArgument && error.function == "clink_set_tempo") }
        do {
            _ = try link.state(quantum: 0)
            Issue.record("quantum 0 accepted")
        } catch { #expect(error.kind == .invalidArgument) }
        #expect(link.audioState(at: link.now, quantum: -1) == nil)
        // Alone, not enabled: its own tempo, the beat requested where it asked.
        try link.setTempo(140)
        let t = link.now
        try link.requestBeat(0, at: t, quantum: 4)
        let s = try link.state(at: t + 3 * 60_000_000 / 140, quantum: 4)
        #expect(abs(s.beatsPerMinute - 140) < 1e-9)
        #expect(abs(s.phase - 3) < 1e-3)
        #expect(link.peers == 0 && !link.isEnabled)
    }

    private func monotonic() -> UInt64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }

    private func waitFor(seconds: Double, _ condition: () throws -> Bool) throws -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if try condition() { return true }
            usleep(5_000)
        }
        return false
    }
}

/// One `carillon-link-probe` process and its stdin/stdout lines.
final class Probe {
    struct State { var tempo: Double; var beat: Double; var phase: Double }
    struct Failure: Error, CustomStringConvertible { let description: String }

    let name: String
    private let process = Process()
    private let input = Pipe(), output = Pipe()
    private var buffer = Data()

    init(bpm: Double) throws {
        name = "peer at \(bpm)"
        process.executableURL = try Self.binary()
        process.arguments = [String(bpm)]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let first = try line()
        guard first.hasPrefix("joined") else { throw Failure(description: "\(name): \(first)") }
    }

    func peers() throws -> Int {
        let words = try ask("peers")
        return Int(words[1]) ?? -1
    }

    func setTempo(_ bpm: Double) throws { _ = try ask("tempo \(bpm)") }

    func state(at micros: Int64? = nil) throws -> State {
        // "now": the probe reads at its own Link clock's now.
        let words = try ask("state \(micros.map(String.init) ?? "now") 4")
        guard words.count == 7, let tempo = Double(words[2]), let beat = Double(words[3]), let phase = Double(words[4]) else {
            throw Failure(description: "\(name): \(words)")
        }
        return State(tempo: tempo, beat: beat, phase: phase)
    }

    func quit() {
        try? input.fileHandleForWriting.write(contentsOf: Data("quit\n".utf8))
        process.waitUntilExit()
    }

    private func ask(_ command: String) throws -> [String] {
        try input.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
        let answer = try line()
        if answer.hasPrefix("error") { throw Failure(description: "\(name): \(command): \(answer)") }
        return answer.split(separator: " ").map(String.init)
    }

    private func line() throws -> String {
        while true {
            if let nl = buffer.firstIndex(of: 0x0A) {
                let l = String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...nl)
                return l
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw Failure(description: "\(name): the probe ended") }
            buffer.append(chunk)
        }
    }

    /// `carillon-link-probe`, next to the test bundle (swift build puts products in one folder).
    static func binary() throws -> URL {
        var candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()]
        if let exe = Bundle.main.executableURL { candidates.append(exe.deletingLastPathComponent()) }
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        for folder in candidates {
            var dir = folder
            for _ in 0..<4 {
                let url = dir.appendingPathComponent("carillon-link-probe")
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
                dir = dir.deletingLastPathComponent()
            }
        }
        throw Failure(description: "carillon-link-probe not found near \(candidates.map(\.path)); `swift build --build-tests` builds it")
    }
}

/// Whether a UDP datagram sent to Link's multicast group from the loopback
/// interface comes back to a socket of this process that joined the group
/// there, as Link needs for two peers on one machine (it turns multicast
/// loopback on only for the loopback interface). Nil: it does; else why not.
enum LoopbackMulticast {
    static let problem: String? = check()

    private static func check() -> String? {
        let group = inet_addr("224.76.78.75"), lo = inet_addr("127.0.0.1")
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { return "socket: errno \(errno)" }
        defer { close(fd) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = INADDR_ANY
        addr.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { return "bind: errno \(errno)" }
        var membership = ip_mreq(imr_multiaddr: in_addr(s_addr: group), imr_interface: in_addr(s_addr: lo))
        guard setsockopt(fd, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &membership, socklen_t(MemoryLayout<ip_mreq>.size)) == 0 else {
            return "joining 224.76.78.75 on 127.0.0.1: errno \(errno)"
        }
        var outIf = in_addr(s_addr: lo), loop: UInt8 = 1
        setsockopt(fd, Int32(IPPROTO_IP), IP_MULTICAST_IF, &outIf, socklen_t(MemoryLayout<in_addr>.size))
        setsockopt(fd, Int32(IPPROTO_IP), IP_MULTICAST_LOOP, &loop, 1)
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var to = sockaddr_in()
        to.sin_family = sa_family_t(AF_INET)
        to.sin_addr.s_addr = group
        to.sin_port = addr.sin_port
        let message: [UInt8] = Array("carillon link check".utf8)
        let sent = withUnsafePointer(to: &to) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, message, message.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard sent == message.count else { return "sending to 224.76.78.75 over 127.0.0.1: errno \(errno)" }
        var buffer = [UInt8](repeating: 0, count: 64)
        let got = recv(fd, &buffer, buffer.count, 0)
        guard got == message.count else { return "no multicast datagram came back over loopback within 1 s (errno \(errno))" }
        return nil
    }
}
