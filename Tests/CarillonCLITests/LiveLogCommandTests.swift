import Foundation
import Testing
import WebSocketClient
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
        let socket = try RawClient.webSocket(port: webPort)
        // 100 moves a second: a finger on a fader; under the surface's flood limit (200/s).
        for i in 0..<moves {
            try socket.send(text: #"{"type":"control","name":"Level","position":\#(Double(i % 100) / 100 + 0.001)}"#)
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

