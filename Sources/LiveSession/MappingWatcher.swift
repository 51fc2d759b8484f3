import Controls
import Hosting
import LV2
import MIDI
import MappingFiles
import Parameters
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
        let mapping: ControlMapping, effects: [MIDIEffectSpec]
        do {
            mapping = try ControlMapping.load(path: path)
            effects = try MIDIEffectSpec.all(in: mapping)
        } catch {
            if let plugins, let changes { plugins.host.revert(changes) }
            for line in "\(error)".split(separator: "\n") { log.append(String(line)) }
            log.append("mapping not reloaded: \(path) has mistakes; the previous mapping goes on")
            return
        }
        var effectLines: [String] = []
        if let plugins, let changes {
            for line in plugins.swap(changes) { log.append(line) }
            for address in changes.parameters { _ = set(address, to: ParameterRegistry.standard.info(for: address).defaultValue) }
            effectLines = plugins.place(effects)
        } else {
            effectLines = effects.map { "zone \($0.zoneLabel): midi-fx takes effect at the next start (this session runs no plugins)" }
        }
        // The chains are in their slots before the hub hands the zones the new mapping.
        let notApplied = replace(mapping: mapping)
        log.append("mapping reloaded: \(path) (\(mapping.controls.count) controls)")
        for line in effectLines + notApplied + (changes?.notApplied ?? []) { log.append(line) }
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
    /// The zones, whose table of MIDI effect chains a reload changes (nil: no keyboard, no chains).
    private let keyboard: KeyboardRouting?

    init(host: PluginHost, slots: PluginSlots, assembly: HostAssembly, keyboard: KeyboardRouting?) {
        self.host = host; self.slots = slots; self.assembly = assembly; self.keyboard = keyboard
    }

    /// The plugins the file at `path` and the command line ask for together,
    /// readied on the host (`PluginHost.prepareChange`).
    func prepare(mappingAt path: String) throws(LV2Error) -> PluginHost.Changes {
        var next = assembly
        let own = ControlMapping.plugins(path: path)
        next.channels = own.instruments.map { ChannelSetup(channel: Channel($0.channel), lv2: $0.uri) }
        next.mappingInserts = own.inserts
        return try host.prepareChange(instruments: next.instruments, inserts: next.inserts,
                                      midiEffects: MIDIEffectSpec.all(in: ControlMapping.midiEffects(path: path)))
    }

    /// Without a running session's plugins: the file's plugins' controls as names.
    static func register(mappingAt path: String) throws(LV2Error) {
        let own = ControlMapping.plugins(path: path), effects = MIDIEffectSpec.all(in: ControlMapping.midiEffects(path: path))
        guard !own.instruments.isEmpty || !own.inserts.isEmpty || !effects.isEmpty else { return }
        _ = try PluginHost(instruments: own.instruments, inserts: own.inserts, midiEffects: effects)
    }

    /// Puts the reloaded mapping's `midi-fx` chains (`MIDIEffectSpec.all(in:)`) in
    /// place: a chain whose zone is as it was goes on; one new or changed is made
    /// and takes a free slot (`KeyboardRouting.placeEffects`), where it starts
    /// with the next block. Before the hub takes the mapping. Returns lines to show.
    func place(_ effects: [MIDIEffectSpec]) -> [String] {
        guard let keyboard, slots.midiEffectSlots > 0 else {
            return effects.map { "zone \($0.zoneLabel): midi-fx takes effect at the next start" }
        }
        let (new, unplaced) = keyboard.placeEffects(effects)
        let (offered, error) = slots.swapMIDIEffects(new, from: host)
        keyboard.installEffects(offered)
        var lines = offered.map { slot, spec in
            "zone \(spec.zoneLabel): midi-fx now \(spec.uris.map { (try? host.world.plugin(uri: $0).name) ?? $0 }.joined(separator: " → "))"
        }
        if let error {
            lines.append("\(error)")
            lines += new.dropFirst(offered.count).map { "zone \($0.spec.zoneLabel): its midi-fx could not be made; it plays without them" }
        }
        lines += unplaced.map {
            "zone \($0.zoneLabel): midi-fx not applied: all \(slots.midiEffectSlots) chains are in use or still sounding;"
                + " it plays without them until a reload finds one free"
        }
        return lines
    }

    /// Commits `changes` and hands each new plugin to its slot; returns lines to show.
    func swap(_ changes: PluginHost.Changes) -> [String] {
        host.commit(changes)
        guard !changes.isEmpty else { return [] }
        do { try slots.swap(changes, from: host) } catch { return ["a plugin could not be made: \(error)"] }
        return changes.instruments.map { "channel \($0.channel + 1): now \(host.instrumentNames[$0.channel] ?? $0.uri) (crossfaded in)" }
            + changes.inserts.map { "\($0.spec.strip.key == "master" ? "the master" : "strip \($0.spec.strip.key)"): insert now \($0.spec.uri) (crossfaded in)" }
    }
}
