import CLiblo
import ChildProcess
import Foundation
import Glibc

/// The other end in the tests: a UDP socket bound to 127.0.0.1 (never another
/// address), messages built and read by liblo; every wait is bounded.
final class LoopbackClient {
    let fd: Int32
    let port: UInt16

    init() throws {
        let s = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard s >= 0 else { throw Failure("socket: \(errno)") }
        var a = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, length) == 0 && getsockname(s, $0, &length) == 0 }
        }
        guard ok else { close(s); throw Failure("bind: \(errno)") }
        fd = s
        port = UInt16(bigEndian: a.sin_port)
        // A big receive buffer: feedback comes in bursts.
        var size: Int32 = 1 << 20
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    struct Failure: Error, CustomStringConvertible { let description: String; init(_ d: String) { description = d } }

    static func loopback(port: UInt16) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        a.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return a
    }

    /// Raw bytes to 127.0.0.1:`port`; false when the kernel refused them (a full buffer).
    @discardableResult
    func send(bytes: [UInt8], to port: UInt16) -> Bool {
        var to = Self.loopback(port: port)
        let n = bytes.withUnsafeBytes { b in
            withUnsafePointer(to: &to) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, b.baseAddress, b.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        return n == bytes.count
    }

    /// A message's bytes, built by liblo: `f` for Double, `i` for Int32, `s` for String.
    static func message(_ path: String, _ arguments: [Any] = []) -> [UInt8] {
        let m = lo_message_new()!
        defer { lo_message_free(m) }
        add(arguments, to: m)
        var size = lo_message_length(m, path)
        var bytes = [UInt8](repeating: 0, count: size)
        _ = bytes.withUnsafeMutableBytes { lo_message_serialise(m, path, $0.baseAddress, &size) }
        return bytes
    }

    /// A bundle of one message at `time` (Unix seconds), built by liblo.
    static func bundle(at time: Double, _ path: String, _ arguments: [Any]) -> [UInt8] {
        let ntp = time + 2_208_988_800
        let tag = lo_timetag(sec: UInt32(ntp.rounded(.down)), frac: UInt32((ntp - ntp.rounded(.down)) * 4_294_967_296))
        let b = lo_bundle_new(tag)!
        let m = lo_message_new()!
        add(arguments, to: m)
        lo_bundle_add_message(b, path, m)
        var size = lo_bundle_length(b)
        var bytes = [UInt8](repeating: 0, count: size)
        _ = bytes.withUnsafeMutableBytes { lo_bundle_serialise(b, $0.baseAddress, &size) }
        lo_bundle_free_recursive(b)
        return bytes
    }

    private static func add(_ arguments: [Any], to m: lo_message) {
        for a in arguments {
            switch a {
            case let f as Double: lo_message_add_float(m, Float(f))
            case let i as Int32: lo_message_add_int32(m, i)
            case let i as Int: lo_message_add_int32(m, Int32(i))
            case let s as String: lo_message_add_string(m, s)
            default: fatalError("unsupported argument \(a)")
            }
        }
    }

    /// The next message within `timeout` seconds: its path and its first argument as text.
    func receive(timeout: Double) -> (path: String, value: String)? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, Int32(timeout * 1000)) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        return buffer.withUnsafeMutableBytes { raw -> (String, String)? in
            var result: Int32 = 0
            guard let path = lo_get_path(raw.baseAddress, n),
                  let m = lo_message_deserialise(raw.baseAddress, n, &result) else { return nil }
            defer { lo_message_free(m) }
            let types = String(cString: lo_message_get_types(m))
            let argv = lo_message_get_argv(m)
            var value = ""
            if let first = argv?[0], let t = types.first {
                switch t {
                case "f": value = "\(first.pointee.f)"
                case "i": value = "\(first.pointee.i)"
                case "s": value = String(cString: UnsafeRawPointer(first).assumingMemoryBound(to: CChar.self))
                default: value = "?"
                }
            }
            return (String(cString: path), value)
        }
    }
}

/// Polls `condition` every 5 ms for at most `seconds`.
func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
    for _ in 0..<Int(seconds / 0.005) {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}

/// Runs a tool to its end (bounded: the tools here end by themselves), returning its exit status.
@discardableResult
func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
    // A bounded wait: a tool that does not end in 10 s is killed and the call fails.
    let p = try ChildProcess("/usr/bin/" + tool, arguments)
    if let status = p.waitForExit(seconds: 10) { return status }
    p.kill()
    return -1
}

/// A free UDP port on 127.0.0.1 (bound, read, released).
func freePort() throws -> UInt16 { try LoopbackClient().port }
