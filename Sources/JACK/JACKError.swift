import CJACK
import Glibc

/// A failed libjack call, with — for the failures people actually meet (no
/// server, a port that cannot be made, a name that matches nothing) — a
/// sentence saying what to do.
public struct JACKError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// `jack_client_open` failed: no server runs (under this user, with this name).
        case serverUnavailable(server: String)
        /// `jack_port_register` failed for this port (a name in use, the server's port limit).
        case portRegistration(port: String)
        /// A connection by name found no port; `candidates` are the ports there are.
        case noMatchingPort(spec: String, candidates: [String])
        /// The server changed its sample rate while running.
        case sampleRateChanged(from: Int, to: Int)
        /// Any other failing call.
        case call
    }

    public var kind: Kind
    /// The C function that failed, e.g. `jack_activate`.
    public var function: String
    /// Its non-zero return code, or the `jack_status_t` bits of `jack_client_open`.
    public var code: Int32
    /// What the call was trying to do, when more than the function name helps.
    public var context: String?

    public init(kind: Kind = .call, function: String, code: Int32, context: String? = nil) {
        self.kind = kind; self.function = function; self.code = code; self.context = context
    }

    public var description: String {
        switch kind {
        case .serverUnavailable(let server):
            "no JACK server running ('\(server)', \(function) status 0x\(String(code, radix: 16))) — start jackd "
                + "(e.g. jackd -d alsa, or PipeWire's JACK) or use -a alsa"
        case .portRegistration(let port):
            "cannot register JACK port '\(port)' (\(function)) — is the name taken, or the server's port limit (jackd -p) reached?"
        case .noMatchingPort(let spec, let candidates):
            "no JACK port matches '\(spec)' (a full name or part of one, any case); "
                + (candidates.isEmpty ? "there are none" : "ports: " + candidates.joined(separator: ", "))
        case .sampleRateChanged(let from, let to):
            "the JACK server changed its sample rate from \(from) to \(to) Hz; carillon cannot follow a rate change "
                + "while running — start it again"
        case .call:
            "\(function) failed (code \(code))" + (context.map { " (\($0))" } ?? "")
        }
    }
}

/// The one checking helper every libjack call that returns 0 on success goes through.
@inline(__always)
func check(_ function: String, _ result: Int32, context: @autoclosure () -> String? = nil) throws(JACKError) {
    if result != 0 { throw JACKError(function: function, code: result, context: context()) }
}

/// Process-wide libjack settings.
public enum JACKLibrary {
    /// Stops libjack from printing its own lines to stderr ("Cannot connect to
    /// server socket…"): Carillon reports failures as `JACKError`. Done once,
    /// by the first `JACKClient`; harmless to call again.
    public static func silenceMessages() { _ = silenced }

    private static let silenced: Void = {
        jack_set_error_function { _ in }
        jack_set_info_function { _ in }
    }()

    /// The server a client connects to: `$JACK_DEFAULT_SERVER`, else `default` (libjack's rule).
    public static var serverName: String {
        getenv("JACK_DEFAULT_SERVER").map { String(cString: $0) } ?? "default"
    }
}
