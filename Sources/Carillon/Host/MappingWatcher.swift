import Controls
import Synchronization
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// Watches one file with inotify and calls `changed` (on its own thread)
/// after the file was written or replaced and then left alone for a moment.
///
/// The folder is watched, not the file: editors save by writing a new file
/// and renaming it over the old one, which a watch on the file itself would
/// lose. Writes in quick succession are taken as one change.
public final class MappingWatcher {
    public struct Failure: Error, CustomStringConvertible {
        public let function: String
        public let code: Int32
        public let path: String
        public var description: String {
            "cannot watch \(path) for changes: \(function) failed: \(String(cString: strerror(code)))"
        }
    }

    /// How long the file must stay quiet after a change before `changed` runs.
    public static let settleMilliseconds: Int32 = 100

    private let fd: Int32
    private let stop = StopFlag()
    private var thread: JoinableThread?

    public init(path: String, changed: @escaping @Sendable () -> Void) throws(Failure) {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw Failure(function: "inotify_init1", code: errno, path: path) }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_ATTRIB)
        guard inotify_add_watch(fd, folder, mask) >= 0 else {
            let code = errno
            close(fd)
            throw Failure(function: "inotify_add_watch", code: code, path: folder)
        }
        let fd = self.fd, stop = self.stop
        do {
            thread = try JoinableThread(name: "mapping watcher") {
                Self.run(fd: fd, name: name, stop: stop, changed: changed)
            }
        } catch {
            close(fd)
            throw Failure(function: "pthread_create", code: -error.code, path: path)
        }
    }

    /// Ends the watch (idempotent). Not from `changed` itself.
    public func cancel() {
        guard let thread else { return }
        stop.flag.store(true, ordering: .releasing)   // seen after the thread's next poll (≤ 100 ms)
        thread.join()
        self.thread = nil
        close(fd)
    }

    deinit { cancel() }

    private final class StopFlag: Sendable { let flag = Atomic<Bool>(false) }

    private static func run(fd: Int32, name: String, stop: StopFlag,
                            changed: @Sendable () -> Void) {
        let bufferSize = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: bufferSize, alignment: 8)
        defer { buffer.deallocate() }
        var pending = false
        while !stop.flag.load(ordering: .acquiring) {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, pending ? settleMilliseconds : 50)
            if ready > 0 {
                var n = read(fd, buffer, bufferSize)
                while n > 0 {
                    var offset = 0
                    while offset + MemoryLayout<inotify_event>.size <= n {
                        let event = (buffer + offset).assumingMemoryBound(to: inotify_event.self)
                        let length = Int(event.pointee.len)
                        if length > 0 {
                            let nameStart = (buffer + offset + MemoryLayout<inotify_event>.size).assumingMemoryBound(to: CChar.self)
                            if String(cString: nameStart) == name { pending = true }
                        }
                        offset += MemoryLayout<inotify_event>.size + length
                    }
                    n = read(fd, buffer, bufferSize)
                }
            } else if ready == 0, pending {
                // Quiet for the settle time after a change: the file is complete.
                pending = false
                changed()
            }
        }
    }
}

extension ControlHub {
    /// Loads the mapping file at `path` again (the watcher's `changed`):
    /// swapped in when it has no mistakes; else every mistake is logged
    /// (file:line:column) and the running mapping stays.
    func reload(from path: String, log: HostLog) {
        do {
            let mapping = try ControlMapping.load(path: path)
            let notApplied = replace(mapping: mapping)
            log.append("mapping reloaded: \(path) (\(mapping.controls.count) controls)")
            for line in notApplied { log.append(line) }
        } catch {
            for line in "\(error)".split(separator: "\n") { log.append(String(line)) }
            log.append("mapping not reloaded: \(path) has mistakes; the previous mapping goes on")
        }
    }
}
