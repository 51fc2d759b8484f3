import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A bare HTTP/WebSocket client over a POSIX socket to 127.0.0.1: it sends
/// exactly the headers a test gives (a foreign Origin, no token), frames
/// messages itself, and can simply stop reading (a stalled page). The web
/// surface's tests and the CLI's (`live --web`) share it.
public final class RawClient: @unchecked Sendable {
    public let fd: Int32
    private var buffer: [UInt8] = []

    public struct Failure: Error, CustomStringConvertible { public var description: String }

    /// `receiveBuffer`: a small socket buffer makes a client that stops reading back up quickly.
    public init(port: Int, receiveBuffer: Int32? = nil, timeout: Double = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int(timeout.truncatingRemainder(dividingBy: 1) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard r == 0 else { close(fd); throw Failure(description: "connect: errno \(errno)") }
    }

    deinit { close(fd) }

    public func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send: errno \(errno)") }
            sent += n
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &chunk, chunk.count, 0)
        guard n > 0 else { throw Failure(description: n == 0 ? "closed" : "recv: errno \(errno)") }
        buffer += chunk[0..<n]
    }

    /// Sends a GET and returns the status code and head (body left unread).
    public func get(_ path: String, headers: [String: String] = [:], upgrade: Bool = false) throws -> (status: Int, head: String) {
        var lines = ["GET \(path) HTTP/1.1", "Host: " + (headers["Host"] ?? "127.0.0.1")]
        if upgrade {
            lines += ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
                      "Sec-WebSocket-Version: 13"]
        }
        lines += headers.filter { $0.key != "Host" }.map { "\($0.key): \($0.value)" }
        try write(Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8))
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while true {
            if let r = buffer.firstRange(of: end) {
                let head = String(decoding: buffer[..<r.lowerBound], as: UTF8.self)
                buffer.removeSubrange(..<r.upperBound)
                let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
                return (status, head)
            }
            try fill()
        }
    }

    /// The body after a head that `get` returned, by its Content-Length.
    public func body(of head: String) throws -> String {
        let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
        while buffer.count < length { try fill() }
        defer { buffer.removeSubrange(..<length) }
        return String(decoding: buffer[..<length], as: UTF8.self)
    }

    /// Opens `/ws`; throws unless the server switched protocols.
    public static func webSocket(port: Int, query: String = "", headers: [String: String] = [:], receiveBuffer: Int32? = nil) throws -> RawClient {
        let c = try RawClient(port: port, receiveBuffer: receiveBuffer)
        let (status, head) = try c.get("/ws" + query, headers: headers, upgrade: true)
        guard status == 101 else { throw Failure(description: "upgrade answered \(status): \(head)") }
        return c
    }

    /// One masked frame (clients must mask), text by default.
    public func sendFrame(_ payload: [UInt8], opcode: UInt8 = 1) throws {
        var f: [UInt8] = [0x80 | opcode]
        let n = payload.count
        if n < 126 { f.append(0x80 | UInt8(n)) }
        else if n < 65536 { f += [0x80 | 126, UInt8(n >> 8), UInt8(n & 0xff)] }
        else { f.append(0x80 | 127); for s in stride(from: 56, through: 0, by: -8) { f.append(UInt8((n >> s) & 0xff)) } }
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        f += mask
        f += payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
        try write(f)
    }

    public func send(text: String) throws { try sendFrame(Array(text.utf8)) }

    /// The next text message (pings answered, other control frames skipped).
    public func receiveText() throws -> String {
        while true {
            while buffer.count < 2 { try fill() }
            let opcode = buffer[0] & 0x0f
            var len = Int(buffer[1] & 0x7f), offset = 2
            if len == 126 { while buffer.count < 4 { try fill() }; len = Int(buffer[2]) << 8 | Int(buffer[3]); offset = 4 }
            else if len == 127 {
                while buffer.count < 10 { try fill() }
                len = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }; offset = 10
            }
            while buffer.count < offset + len { try fill() }
            let payload = Array(buffer[offset..<offset + len])
            buffer.removeSubrange(..<(offset + len))
            switch opcode {
            case 1: return String(decoding: payload, as: UTF8.self)
            case 8: throw Failure(description: "closed by server")
            case 9: try sendFrame(payload, opcode: 10)
            default: continue
            }
        }
    }

    /// The next message of a type, as a JSON object.
    public func receive(type: String, within seconds: Double = 5) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let text = try receiveText()
            if let o = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], o["type"] as? String == type {
                return o
            }
        }
        throw Failure(description: "no '\(type)' message within \(seconds) s")
    }
}
