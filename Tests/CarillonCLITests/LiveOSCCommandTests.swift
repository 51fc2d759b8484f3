import ChildProcess
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `carillon live --no-audio --osc PORT` answers `oscsend`: a subscribed
/// `oscdump` prints the value a message set; a bad `--osc` is refused.
@Suite(.serialized) struct LiveOSCCommandTests {
    typealias R = RenderCommandTests

    /// A free UDP port on 127.0.0.1.
    static func freePort() -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        return UInt16(bigEndian: a.sin_port)
    }

    /// `live --no-audio --osc` for 6 s; `oscdump -L` subscribed prints what a message set. Every
    /// child is a `ChildProcess` (own process group, SIGKILL and a bounded reap, close-on-exec socket):
    /// with Foundation's `Process` the oscdump child outlived terminate() and the run hung.
    @Test func live_osc_answersOscsend() throws {
        let oscPort = Self.freePort(), dumpPort = Self.freePort()
        let live = try ChildProcess(R.carillon, ["live", "--no-audio", "--osc", "\(oscPort)", "--duration", "6"])
        defer { live.kill() }
        #expect(live.waitForOutput(seconds: 5) { $0.contains("osc: listening on udp 127.0.0.1:\(oscPort)") }, "\(live.output)")

        let dump = try ChildProcess("/usr/bin/oscdump", ["-L", "\(dumpPort)"])
        defer { #expect(dump.kill() != nil, "oscdump was not reaped") }
        usleep(200_000)  // oscdump binds its port
        for args in [["/carillon/subscribe", "i", "\(dumpPort)"], ["/carillon/master/gain", "f", "-3.5"]] {
            let send = try ChildProcess("/usr/bin/oscsend", ["127.0.0.1", "\(oscPort)"] + args)
            let status = send.waitForExit(seconds: 10) ?? send.kill()
            #expect(status == 0)
        }
        #expect(dump.waitForOutput(seconds: 3) { $0.contains("/carillon/master/gain f -3.5") }, "oscdump: \(dump.output)")
        #expect(dump.kill() != nil)
        let status = live.waitForExit(seconds: 15)
        #expect(status == 0, "live: \(String(describing: status)) \(live.output)")
        #expect(live.output.contains("osc: 2 messages applied"), "\(live.output)")
    }

    @Test func live_badOSCAddress_isRefused_withAClearMessage() throws {
        let r = try R.carillon(["live", "--no-audio", "--osc", "0.0.0.0:9000", "--duration", "1"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("--osc-allow"), "\(r.stderr)")
        let bad = try R.carillon(["live", "--no-audio", "--osc", "localhost:90000", "--duration", "1"])
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("is not [ADDR:]PORT"), "\(bad.stderr)")
    }

    /// Polls every 10 ms for at most `seconds`.
    static func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        for _ in 0..<Int(seconds * 100) { if condition() { return true }; usleep(10_000) }
        return condition()
    }
    func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool { Self.eventually(seconds, condition) }
}
