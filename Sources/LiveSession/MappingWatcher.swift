import Controls
import Hosting
import LV2
import MIDI
import Parameters
import Sampling
import Synchronization
import Threads
import Glibc
#if canImport(Glibc)
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
    /// (file:line:column) and the running mapping stays. `plugins`: a running
    /// session's, which take the file's other LV2 instruments and inserts
    /// (crossfaded in), their controls at their defaults; without, the file's
    /// plugins' controls are only names its targets may use.
    func reload(from path: String, log: HostLog, plugins: LivePlugins? = nil) {
        var changes: PluginHost.Changes?
        do throws(LV2Error) {
            if let plugins { changes = try plugins.prepare(mappingAt: path) } else { try LivePlugins.register(mappingAt: path) }
        } catch {
            log.append("\(path): \(error)")
            log.append("mapping not reloaded: \(path) names a plugin that cannot be used; the previous mapping goes on")
            return
        }
        let mapping: ControlMapping
        do { mapping = try ControlMapping.load(path: path) } catch {
            if let plugins, let changes { plugins.host.revert(changes) }
            for line in "\(error)".split(separator: "\n") { log.append(String(line)) }
            log.append("mapping not reloaded: \(path) has mistakes; the previous mapping goes on")
            return
        }
        if let plugins, let changes {
            for line in plugins.swap(changes) { log.append(line) }
            for address in changes.parameters { _ = set(address, to: ParameterRegistry.standard.info(for: address).defaultValue) }
        }
        let notApplied = replace(mapping: mapping)
        log.append("mapping reloaded: \(path) (\(mapping.controls.count) controls)")
        for line in notApplied + (changes?.notApplied ?? []) { log.append(line) }
    }
}

/// A live session's plugins as mapping reloads change them: the plugin host,
/// the renderer's slots, and the plugins the command line gave (which the
/// file's own join). Used by one thread at a time (the watcher's; the
/// session's end after the watcher stopped).
final class LivePlugins: @unchecked Sendable {
    let host: PluginHost
    let slots: PluginSlots
    private let assembly: HostAssembly

    init(host: PluginHost, slots: PluginSlots, assembly: HostAssembly) {
        self.host = host; self.slots = slots; self.assembly = assembly
    }

    /// The plugins the file at `path` and the command line ask for together,
    /// readied on the host (`PluginHost.prepareChange`).
    func prepare(mappingAt path: String) throws(LV2Error) -> PluginHost.Changes {
        var next = assembly
        let own = ControlMapping.plugins(path: path)
        next.channels = own.instruments.map { ChannelSetup(channel: Channel($0.channel), lv2: $0.uri) }
        next.mappingInserts = own.inserts
        return try host.prepareChange(instruments: next.instruments, inserts: next.inserts)
    }

    /// Without a running session's plugins: the file's plugins' controls as names.
    static func register(mappingAt path: String) throws(LV2Error) {
        let own = ControlMapping.plugins(path: path)
        guard !own.instruments.isEmpty || !own.inserts.isEmpty else { return }
        _ = try PluginHost(instruments: own.instruments, inserts: own.inserts)
    }

    /// Commits `changes` and hands each new plugin to its slot; returns lines to show.
    func swap(_ changes: PluginHost.Changes) -> [String] {
        guard !changes.isEmpty else { return [] }
        host.commit(changes)
        do { try slots.swap(changes, from: host) } catch { return ["a plugin could not be made: \(error)"] }
        return changes.instruments.map { "channel \($0.channel + 1): now \(host.instrumentNames[$0.channel] ?? $0.uri) (crossfaded in)" }
            + changes.inserts.map { "\($0.spec.strip.key == "master" ? "the master" : "strip \($0.spec.strip.key)"): insert now \($0.spec.uri) (crossfaded in)" }
    }
}
