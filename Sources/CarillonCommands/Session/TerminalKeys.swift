#if canImport(Glibc)
import Glibc
#endif

/// Single keys from the terminal, without Enter and without echo (cbreak
/// mode: Ctrl-C still interrupts), read without waiting. Only on a terminal:
/// `init` returns nil when standard input is not one. The terminal's own
/// settings come back on `restore()`, on deinit, and at exit (an error that
/// ends the process on the way still leaves a usable shell).
final class TerminalKeys {
    enum Key: Equatable {
        case character(Character)
        case up, down
        case escape
    }

    /// The settings to restore at exit; one terminal per process.
    nonisolated(unsafe) private static var saved: termios?
    nonisolated(unsafe) private static var exitHookInstalled = false

    private var pendingBytes: [UInt8] = []

    init?() {
        guard isatty(0) == 1 else { return nil }
        var settings = termios()
        guard tcgetattr(0, &settings) == 0 else { return nil }
        Self.saved = settings
        if !Self.exitHookInstalled {
            Self.exitHookInstalled = true
            atexit { TerminalKeys.restoreSaved() }
        }
        var raw = settings
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        // VMIN 0, VTIME 0: read returns at once with what is there.
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 0
        }
        guard tcsetattr(0, TCSANOW, &raw) == 0 else { Self.saved = nil; return nil }
    }

    deinit { restore() }

    func restore() { Self.restoreSaved() }

    private static func restoreSaved() {
        guard var settings = saved else { return }
        saved = nil
        _ = tcsetattr(0, TCSANOW, &settings)
    }

    /// The keys typed since the last call (arrow keys decoded), none if nothing was.
    func read() -> [Key] {
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = Glibc.read(0, &buffer, buffer.count)
        if n > 0 { pendingBytes += buffer[0..<n] }
        return Self.decode(&pendingBytes)
    }

    /// Keys from bytes; an escape sequence cut off at the end waits for its rest.
    static func decode(_ bytes: inout [UInt8]) -> [Key] {
        var keys: [Key] = []
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == 0x1B {
                if i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "[") || bytes[i + 1] == UInt8(ascii: "O") {
                    guard i + 2 < bytes.count else { break }
                    switch bytes[i + 2] {
                    case UInt8(ascii: "A"): keys.append(.up)
                    case UInt8(ascii: "B"): keys.append(.down)
                    default: break  // other keys with sequences: ignored
                    }
                    i += 3
                    continue
                }
                keys.append(.escape)
            } else if b < 0x80 {
                keys.append(.character(Character(Unicode.Scalar(b))))
            }
            i += 1
        }
        bytes.removeFirst(min(i, bytes.count))
        return keys
    }
}
