import Foundation

/// Where the web surface listens and who may use it.
///
/// Loopback only by default. Any other address needs a token: every HTTP
/// request and WebSocket upgrade must then carry it (`?token=…` or
/// `Authorization: Bearer …`), so a page on the local network cannot drive
/// the host by guessing its port.
public struct WebSurfaceConfiguration: Sendable, Equatable {
    public var host: String
    public var port: Int
    /// Required for a non-loopback `host`; optional (and then checked) on loopback.
    public var token: String?
    /// Largest JSON message accepted; longer ones are refused and counted.
    /// Frames over `maxFrameBytes` close the connection (1009, by the WebSocket layer).
    public var maxMessageBytes = 4096
    public var maxFrameBytes = 1 << 16
    /// Messages a client may send per second (sustained) and in a burst; more are refused and counted.
    public var messagesPerSecond = 200.0
    public var burst = 400.0
    /// Changes go out at most this often per control (coalesced in between).
    public var updateInterval: Duration = .milliseconds(20)
    /// Meters, counters and transport go out this often.
    public var statusInterval: Duration = .milliseconds(100)

    public init(host: String = "127.0.0.1", port: Int, token: String? = nil) {
        self.host = host
        self.port = port
        self.token = token
    }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case badAddress(String)
        case tokenRequired(String)
        case weakToken

        public var description: String {
            switch self {
            case .badAddress(let s): "'\(s)' is not [ADDR:]PORT (e.g. 8080, 0.0.0.0:8080, [::1]:8080)"
            case .tokenRequired(let host):
                "binding the web surface to \(host) (not loopback) needs a token: give --web-token or let one be generated"
            case .weakToken: "the web token must be at least 16 characters of letters, digits, '-' or '_'"
            }
        }
    }

    /// `8080`, `0.0.0.0:8080`, `localhost:8080`, `[::1]:8080`; the address defaults to 127.0.0.1.
    public static func parse(_ spec: String) throws(Failure) -> (host: String, port: Int) {
        var host = "127.0.0.1", portText = Substring(spec)
        if spec.hasPrefix("[") {
            guard let close = spec.firstIndex(of: "]"), spec[spec.index(after: close)...].hasPrefix(":") else {
                throw .badAddress(spec)
            }
            host = String(spec[spec.index(after: spec.startIndex)..<close])
            portText = spec[spec.index(close, offsetBy: 2)...]
        } else if let colon = spec.lastIndex(of: ":") {
            host = String(spec[..<colon])
            portText = spec[spec.index(after: colon)...]
            guard !host.isEmpty, !host.contains(":") else { throw .badAddress(spec) }
        }
        guard let port = Int(portText), (0...65535).contains(port), String(port) == portText else { throw .badAddress(spec) }
        return (host, port)
    }

    /// 127.0.0.0/8, ::1 and `localhost`: reachable from this machine only.
    public static func isLoopback(_ host: String) -> Bool {
        let h = host.lowercased()
        if h == "localhost" || h == "::1" || h == "0:0:0:0:0:0:0:1" { return true }
        let parts = h.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    public var isLoopback: Bool { Self.isLoopback(host) }

    /// Refuses a non-loopback bind without a token, and a short or odd token.
    public func validate() throws(Failure) {
        if let token {
            guard token.count >= 16, token.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
            else { throw .weakToken }
        } else if !isLoopback {
            throw .tokenRequired(host)
        }
    }

    /// 32 hex digits from the system's random source.
    public static func generateToken() -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<4).map { _ in String(format: "%08x", UInt32.random(in: .min ... .max, using: &g)) }.joined()
    }
}
