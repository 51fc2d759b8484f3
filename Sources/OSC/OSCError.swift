import Glibc

/// Why the OSC server could not be set up or run: each C failure names the
/// function and its error; each user mistake says what to write instead.
public enum OSCError: Error, Equatable, CustomStringConvertible {
    /// A C call failed (`socket`, `bind`, `lo_server_new_with_proto` …) with this errno (0 when it sets none).
    case call(function: String, code: Int32)
    /// `--osc` was not `[ADDR:]PORT`.
    case badEndpoint(String)
    /// `--osc-allow` was not `ADDR/BITS`.
    case badNetwork(String)
    /// A bind address other than loopback with no `--osc-allow`.
    case needsAllowList(String)
    /// The server's thread could not start.
    case thread(String)

    public var description: String {
        switch self {
        case .call(let function, let code):
            "\(function) failed" + (code == 0 ? "" : ": \(String(cString: strerror(code)))")
        case .badEndpoint(let s): "'\(s)' is not [ADDR:]PORT (an IPv4 address and a port 0…65535, e.g. 9000 or 127.0.0.1:9000)"
        case .badNetwork(let s): "'\(s)' is not a network ADDR/BITS (e.g. 192.168.1.0/24, or 10.0.0.7 for one host)"
        case .needsAllowList(let host): "binding OSC to \(host) (beyond loopback) needs --osc-allow CIDR: the networks whose packets are taken"
        case .thread(let why): why
        }
    }
}
