import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `carillon live` off a terminal (stdout a pipe, as under a service manager):
/// a fader moved from the web page hundreds of times gives no line per value
/// unless `-v`; the status line comes every 10 s (every 2 s with `-v`).
@Suite(.serialized) struct LiveLogCommandTests {
    typealias R = RenderCommandTests

    /// Runs `live --no-audio --web 0` with a one-fader mapping for `seconds`, moves the
    /// fader `moves` times through the page's WebSocket, and returns stdout's lines.
    static func liveLog(seconds: Double, moves: Int, extra: [String]) throws -> (lines: [String], status: Int32) {
        let dir = R.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
            controls:
              - { name: Level, kind: fader, source: { cc: 7 }, range: [-60, 6], unit: dB, targets: [strip.1.gain] }
            """.write(toFile: "\(dir)/m.yaml", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: R.carillon)
        process.arguments = ["live", "--no-audio", "--mapping", "\(dir)/m.yaml", "--web", "0",
                             "--duration", "\(seconds)"] + extra
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        let text = LockedText()
        out.fileHandleForReading.readabilityHandler = { handle in text.append(handle.availableData) }
        try process.run()
        // The page's address, printed at start: web: http://127.0.0.1:PORT/
        var port: Int?
        for _ in 0..<200 where port == nil {
            usleep(25_000)
            if let r = text.value.firstRange(of: "http://127.0.0.1:") {
                port = Int(text.value[r.upperBound...].prefix { $0.isNumber })
            }
        }
        let webPort = try #require(port, "no web line in: \(text.value)")
        let socket = try MiniWebSocket(port: webPort)
        // 100 moves a second: a finger on a fader; under the surface's flood limit (200/s).
        for i in 0..<moves {
            try socket.send(#"{"type":"control","name":"Level","position":\#(Double(i % 100) / 100 + 0.001)}"#)
            usleep(10_000)
        }
        process.waitUntilExit()
        out.fileHandleForReading.readabilityHandler = nil
        text.append(out.fileHandleForReading.readDataToEndOfFile())
        return (text.value.split(separator: "\n").map(String.init), process.terminationStatus)
    }

    @Test func live_offATerminal_logsNoValues_andAStatusLineEvery10s() throws {
        let (lines, status) = try Self.liveLog(seconds: 11, moves: 300, extra: [])
        #expect(status == 0)
        #expect(lines.filter { $0.hasPrefix("parameter ") }.isEmpty, "\(lines)")
        let statusLines = lines.filter { $0.hasPrefix("status t=") }
        #expect(statusLines.count == 1 && statusLines.first?.hasPrefix("status t=10.") == true, "\(statusLines)")
        // Start (MIDI in, audio, web), the page, the status, the end: a handful of lines for 300 moves.
        #expect(lines.count < 12, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("web: http://127.0.0.1:") })
        #expect(lines.contains("web: 1 page open (1 since the start)"), "\(lines)")
        #expect(lines.contains { $0.hasPrefix("carillon live: ended.") })
    }

    @Test func live_verbose_logsEachValue_andAStatusLineEvery2s() throws {
        let (lines, status) = try Self.liveLog(seconds: 5, moves: 200, extra: ["-v"])
        #expect(status == 0)
        let values = lines.filter { $0.hasPrefix("parameter strip.1.gain = ") }
        #expect(values.count >= 150, "\(values.count) value lines")
        let statusLines = lines.filter { $0.hasPrefix("status t=") }
        #expect(statusLines.count == 2, "\(statusLines)")   // t=2.0 and t=4.0
    }
}

/// Text read from a pipe on another thread.
final class LockedText: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func append(_ d: Data) { lock.lock(); data += d; lock.unlock() }
    var value: String { lock.lock(); defer { lock.unlock() }; return String(decoding: data, as: UTF8.self) }
}

/// Just enough of a WebSocket client to send text frames to 127.0.0.1:port/ws.
final class MiniWebSocket {
    let fd: Int32
    struct Failure: Error, CustomStringConvertible { var description: String }

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let r = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard r == 0 else { close(fd); throw Failure(description: "connect: errno \(errno)") }
        try write(Array(("GET /ws HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").utf8))
        var head = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &head, head.count, 0)
        let text = String(decoding: head[0..<max(0, n)], as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 101") else { throw Failure(description: "upgrade answered: \(text)") }
    }

    deinit { close(fd) }

    func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send: errno \(errno)") }
            sent += n
        }
    }

    /// One masked text frame (payload under 126 bytes).
    func send(_ text: String) throws {
        let payload = Array(text.utf8), mask: [UInt8] = [1, 2, 3, 4]
        precondition(payload.count < 126)
        try write([0x81, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $0.element ^ mask[$0.offset & 3] })
    }
}
