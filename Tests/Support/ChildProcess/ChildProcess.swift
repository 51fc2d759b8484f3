import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A child process for tests that must never hang on it: a tool that runs
/// until it is killed (`oscdump`), or a command with a bound on its run.
///
/// Why not Foundation's `Process`: a child it spawns inherits the signal mask
/// of the spawning thread, and a test runner's threads may block SIGTERM, so
/// `terminate()` can stay pending forever and `waitUntilExit()` with it; its
/// `Pipe`s are inherited by every child spawned meanwhile (no close-on-exec),
/// so a reader waits for EOF from a process that is not the one it started;
/// and a `readabilityHandler` at EOF is called again and again with no data.
///
/// Here: `posix_spawn` with an empty signal mask and default handlers, in a
/// process group of its own (so a kill reaches anything it starts); standard
/// output into a close-on-exec socket read by a thread of its own with `poll`
/// (EOF ends it); `kill` sends SIGKILL to the group, reaps with a bounded
/// wait and ends the reader. Call `kill` (or `waitForExit` until it returns a
/// status) when done: the reader thread holds the object until then.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    private let readFD: Int32
    private let text = Mutex("")
    private let done = Atomic<Bool>(false)
    private let readerEnded = DispatchSemaphore(value: 0)
    private var status: Int32?

    /// Starts `path` with `arguments`; its standard output is collected
    /// (`output`), its standard error goes to /dev/null unless `stderrToOutput`.
    public init(_ path: String, _ arguments: [String], stderrToOutput: Bool = false) throws {
        // A socket pair, close-on-exec from its creation (Glibc's module has no pipe2):
        // no other child spawned meanwhile holds its write end open.
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        if stderrToOutput { posix_spawn_file_actions_adddup2(&actions, fds[1], 2) }
        else { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none); sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, &attributes, argv, environ)
        close(fds[1])
        guard rc == 0 else { close(fds[0]); throw POSIXError(.init(rawValue: rc) ?? .EIO) }
        pid = child
        readFD = fds[0]
        let reader = Thread { [self] in readUntilEOF() }
        reader.start()
    }

    deinit {
        if status == nil { kill() }
        close(readFD)
    }

    /// What it wrote so far.
    public var output: String { text.withLock { $0 } }

    private func readUntilEOF() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var pfd = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
        while !done.load(ordering: .acquiring) {
            guard poll(&pfd, 1, 50) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { read(readFD, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            let chunk = String(decoding: buffer[0..<n], as: UTF8.self)
            text.withLock { $0 += chunk }
        }
        readerEnded.signal()
    }

    /// Reaps it if it has ended within `seconds`: its exit status (128 + the
    /// signal when killed), or nil while it still runs.
    @discardableResult
    public func waitForExit(seconds: Double) -> Int32? {
        if let status { return status }
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            var raw: Int32 = 0
            let r = waitpid(pid, &raw, WNOHANG)
            if r == pid {
                let code = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
                status = code
                // The output after its end is in the socket: let the reader drain it (bounded).
                _ = readerEnded.wait(timeout: .now() + 2)
                done.store(true, ordering: .releasing)
                return code
            }
            if r < 0 && errno != EINTR { status = -1; done.store(true, ordering: .releasing); return -1 }
            usleep(10_000)
        } while Date() < deadline
        return nil
    }

    /// SIGKILL to its process group (it cannot be caught or blocked), then
    /// reaped within 5 s; the reader stops. Returns its status (nil if it
    /// was still not reaped: a zombie the kernel will not let go of).
    @discardableResult
    public func kill() -> Int32? {
        if let status { return status }
        _ = Glibc.kill(-pid, SIGKILL)
        _ = Glibc.kill(pid, SIGKILL)
        let s = waitForExit(seconds: 5)
        done.store(true, ordering: .releasing)
        _ = readerEnded.wait(timeout: .now() + 1)
        return s
    }

    /// Polls every 10 ms, for at most `seconds`, until `output` satisfies `condition`.
    public func waitForOutput(seconds: Double, _ condition: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            if condition(output) { return true }
            usleep(10_000)
        } while Date() < deadline
        return condition(output)
    }
}
