#if canImport(Glibc)
import Glibc
#endif

/// Every command's one-line messages on stderr, in one shape:
/// `carillon: error: <what>` and `carillon: warning: <what>`. Written with a
/// single write(2), so a line is whole even from a signal-driven exit path.
enum Diagnostics {
    static func error(_ message: String) { emit("carillon: error: \(message)\n") }

    static func warning(_ message: String) { emit("carillon: warning: \(message)\n") }

    /// Reports the error and exits with status 1.
    static func fail(_ message: String) -> Never {
        error(message)
        Glibc.exit(1)
    }

    private static func emit(_ line: String) {
        var line = line
        line.withUTF8 { _ = Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
