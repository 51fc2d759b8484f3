import Glibc

/// Where the server listens: an IPv4 address and a UDP port (0: any free port).
public struct OSCEndpoint: Sendable, Equatable {
    public var host: String
    public var port: UInt16

    public init(host: String = "127.0.0.1", port: UInt16) { self.host = host; self.port = port }

    /// `9000`, `127.0.0.1:9000`, `0.0.0.0:9000`. The address is 127.0.0.1 unless given.
    public static func parse(_ spec: String) throws(OSCError) -> OSCEndpoint {
        let parts = spec.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let portText = parts.last, let port = UInt16(portText) else { throw .badEndpoint(spec) }
        let host = parts.count == 2 ? String(parts[0]) : "127.0.0.1"
        guard IPv4.parse(host) != nil else { throw .badEndpoint(spec) }
        return OSCEndpoint(host: host, port: port)
    }

    /// 127.0.0.0/8.
    public var isLoopback: Bool { IPv4.parse(host).map(OSCNetwork.loopback.contains) ?? false }
}

/// An IPv4 network (`--osc-allow 192.168.1.0/24`); a bare address is one host (/32).
public struct OSCNetwork: Sendable, Equatable, CustomStringConvertible {
    /// Host byte order.
    public let address: UInt32
    public let prefix: Int

    public static let loopback = OSCNetwork(address: 0x7F00_0000, prefix: 8)

    public init(address: UInt32, prefix: Int) {
        self.prefix = min(max(prefix, 0), 32)
        self.address = address & Self.mask(self.prefix)
    }

    public static func parse(_ spec: String) throws(OSCError) -> OSCNetwork {
        let parts = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPv4.parse(String(parts[0])) else { throw .badNetwork(spec) }
        var prefix = 32
        if parts.count == 2 {
            guard let p = Int(parts[1]), (0...32).contains(p), String(p) == parts[1] else { throw .badNetwork(spec) }
            prefix = p
        }
        return OSCNetwork(address: address, prefix: prefix)
    }

    public func contains(_ host: UInt32) -> Bool { host & Self.mask(prefix) == address }

    private static func mask(_ prefix: Int) -> UInt32 { prefix == 0 ? 0 : ~UInt32(0) << UInt32(32 - prefix) }

    public var description: String { "\(IPv4.text(address))/\(prefix)" }
}

/// Dotted IPv4 text ⇄ a host-order number, through inet_pton/inet_ntop.
enum IPv4 {
    static func parse(_ text: String) -> UInt32? {
        var a = in_addr()
        guard inet_pton(AF_INET, text, &a) == 1 else { return nil }
        return UInt32(bigEndian: a.s_addr)
    }

    static func text(_ host: UInt32) -> String {
        var a = in_addr(s_addr: host.bigEndian)
        var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &a, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// What the server is asked to do: where it listens, whom it takes packets from.
public struct OSCConfiguration: Sendable {
    public var endpoint: OSCEndpoint
    /// Networks besides loopback whose packets are taken; every other source is refused and counted.
    public var allowed: [OSCNetwork]
    /// How often subscribers get the changes (each parameter's latest value once per interval), seconds.
    public var feedbackInterval: Double
    /// At most this many log lines about refused or broken packets per `logInterval` seconds.
    public var logInterval: Double

    public init(endpoint: OSCEndpoint, allowed: [OSCNetwork] = [], feedbackInterval: Double = 0.02, logInterval: Double = 2) {
        self.endpoint = endpoint
        self.allowed = allowed
        self.feedbackInterval = feedbackInterval
        self.logInterval = logInterval
    }

    /// A bind beyond loopback needs an allow list (as `--web` needs a token).
    public func validate() throws(OSCError) {
        if !endpoint.isLoopback && allowed.isEmpty { throw .needsAllowList(endpoint.host) }
    }

    /// Loopback, then `allowed`.
    public func admits(_ host: UInt32) -> Bool {
        OSCNetwork.loopback.contains(host) || allowed.contains { $0.contains(host) }
    }
}
