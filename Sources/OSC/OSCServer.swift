import CLiblo
import Controls
import Glibc
import MIDI
import Parameters
import Synchronization
import Threads

/// Carillon over OSC: a UDP socket of its own on `configuration.endpoint`, read
/// by a thread of its own; each datagram from an admitted source is parsed by
/// liblo (`lo_server_dispatch_data`, bundles and timetags included) and applied
/// to the `ControlHub` as a web page or a controller would (`set`, `setControl`,
/// scenes), so it reaches the render thread only through the hub's subscribers
/// and the store's atomics. Notes go to `notes`, the session's sink.
///
/// Threads: `start` and `stop` from one thread (the session's); everything
/// else runs on the server's thread, but `counters` and `takeLog` (any thread).
public final class OSCServer: @unchecked Sendable {
    /// What the server has seen since the start.
    public struct Counters: Sendable, Equatable {
        /// Datagrams read from the socket (refused ones included).
        public var packets = 0
        /// Messages applied (set, control, scene, note, query, subscribe …).
        public var applied = 0
        /// Datagrams liblo could not parse (random bytes, truncated messages, bad type tags).
        public var malformed = 0
        public var unknownPaths = 0
        public var wrongArguments = 0
        /// Datagrams from a source outside loopback and `--osc-allow`.
        public var refusedSources = 0
        /// Bundle messages held for a future timetag, and those later applied.
        public var scheduled = 0
        /// Timetags more than `maxAhead` ahead, or more than `maxScheduled` waiting: dropped.
        public var refusedTimetags = 0
        /// Answers and feedback messages sent.
        public var sent = 0
        public var sendFailures = 0
        /// Notes with no sink to take them (a session without an engine).
        public var notesDropped = 0
        public var subscribers = 0
    }

    public static let maxSubscribers = 16
    /// A bundle further ahead than this is refused (seconds).
    public static let maxAhead = 60.0
    public static let maxScheduled = 10_000

    public let configuration: OSCConfiguration
    private let hub: ControlHub
    private let notes: (@Sendable (MIDIMessage) -> Void)?
    private let duration: (@Sendable () -> Double?)?
    private let presetNamed: (@Sendable (_ name: String, _ channel: Channel) -> Result<FontPreset, PresetNameError>)?
    /// The output's state: nil while it plays, "no audio: REASON, retrying" while it is gone (nil: always playing).
    private let audioState: (@Sendable () -> String?)?
    /// The server thread's: the state last sent to subscribers.
    private var audioSent: String?

    private var fd: Int32 = -1
    private var dispatcher: lo_server?
    private var dispatcherDirectory: String?
    private var thread: JoinableThread?
    private let stopping = Atomic<Bool>(false)
    private let countersLock = Mutex(Counters())
    private let logLines = Mutex<[String]>([])
    /// Parameter changes since the last feedback (index → value), from any thread under the hub's lock.
    private let pending = PendingChanges()
    private var hubToken: SubscriptionToken?
    /// The port bound (the one asked, or the one the system chose for 0).
    public private(set) var port: UInt16 = 0

    // The server thread's own state.
    private var source = sockaddr_in()
    private var subscribers: [sockaddr_in] = []
    private var schedule: [Scheduled] = []
    private var lastLog = 0.0
    private var lastLogged = Counters()
    private var lastRefusal: String?
    private var nextFeedback = 0.0

    private struct Scheduled {
        var due: Double          // monotonic seconds
        var request: OSCRequest
        var source: sockaddr_in
    }

    /// `notes`: where `/carillon/note` goes (nil: counted and dropped). `duration`: the
    /// piece's length in seconds for `/carillon/transport/seek` (nil or nil result: refused).
    /// `presetNamed`: a preset by its name on a channel, for `/carillon/channel/N/preset s`
    /// (nil: names refused; bank and program still taken).
    /// `audio`: the output's state, answered on `/carillon/audio` and sent to subscribers when it changes.
    public init(hub: ControlHub, configuration: OSCConfiguration,
                notes: (@Sendable (MIDIMessage) -> Void)? = nil, duration: (@Sendable () -> Double?)? = nil,
                presetNamed: (@Sendable (_ name: String, _ channel: Channel) -> Result<FontPreset, PresetNameError>)? = nil,
                audio: (@Sendable () -> String?)? = nil) throws(OSCError) {
        try configuration.validate()
        self.hub = hub
        self.configuration = configuration
        self.notes = notes
        self.duration = duration
        self.presetNamed = presetNamed
        self.audioState = audio
    }

    deinit { stop() }

    public var counters: Counters { countersLock.withLock { $0 } }

    /// Lines for the session's log since the last call (rate-limited counts of refusals). Any thread.
    public func takeLog() -> [String] { logLines.withLock { let l = $0; $0.removeAll(); return l } }

    /// "127.0.0.1:9000".
    public var listening: String { "\(configuration.endpoint.host):\(port)" }

    // MARK: - Start and stop

    /// Binds the socket, makes liblo's parser and starts the thread.
    public func start() throws(OSCError) {
        guard thread == nil else { return }
        try openSocket()
        do { try makeDispatcher() } catch { closeAll(); throw error }
        hubToken = hub.subscribe { [pending] change in pending.record(change) }
        _ = pending.take()  // the hub's start values: a subscriber gets its own dump
        stopping.store(false, ordering: .relaxed)
        do {
            thread = try JoinableThread(name: "OSC") { [self] in run() }
        } catch {
            closeAll()
            throw .thread(error.description)
        }
    }

    /// Ends the thread (within its poll interval, 50 ms) and closes the socket. Idempotent.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        thread?.join()
        thread = nil
        closeAll()
    }

    private func closeAll() {
        if let hubToken { hub.unsubscribe(hubToken); self.hubToken = nil }
        if fd >= 0 { close(fd); fd = -1 }
        if let dispatcher { lo_server_free(dispatcher); self.dispatcher = nil }
        if let dir = dispatcherDirectory {
            unlink(dir + "/parser"); rmdir(dir)
            dispatcherDirectory = nil
        }
    }

    private func openSocket() throws(OSCError) {
        let s = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard s >= 0 else { throw .call(function: "socket", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = configuration.endpoint.port.bigEndian
        guard let host = IPv4.parse(configuration.endpoint.host) else { close(s); throw .badEndpoint(configuration.endpoint.host) }
        address.sin_addr.s_addr = host.bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { let e = errno; close(s); throw .call(function: "bind \(configuration.endpoint.host):\(configuration.endpoint.port)", code: e) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &length) }
        }
        guard named == 0 else { let e = errno; close(s); throw .call(function: "getsockname", code: e) }
        port = UInt16(bigEndian: address.sin_port)
        // Room for a burst (a layout sending every widget at once) while the thread is busy.
        var size: Int32 = 1 << 20
        guard setsockopt(s, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            let e = errno; close(s); throw .call(function: "setsockopt SO_RCVBUF", code: e)
        }
        fd = s
    }

    /// liblo's parser: a server on a private Unix socket that is never read, only
    /// handed datagrams (`lo_server_dispatch_data`); its queue is off so a bundle's
    /// timetag reaches the handler (`lo_message_get_timestamp`) and Carillon schedules it.
    private func makeDispatcher() throws(OSCError) {
        var template = Array("/tmp/carillon-osc-XXXXXX".utf8CString)
        guard let dir = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw .call(function: "mkdtemp", code: errno)
        }
        let path = String(cString: dir)
        dispatcherDirectory = path
        guard let server = lo_server_new_with_proto(path + "/parser", LO_UNIX, { _, _, _ in }) else {
            throw .call(function: "lo_server_new_with_proto", code: errno)
        }
        dispatcher = server
        lo_server_enable_queue(server, 0, 1)
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard lo_server_add_method(server, nil, nil, { path, types, argv, argc, message, user in
            guard let user, let path else { return 1 }
            Unmanaged<OSCServer>.fromOpaque(user).takeUnretainedValue()
                .handle(path: path, types: types, argv: argv, argc: argc, message: message)
            return 0
        }, me) != nil else { throw .call(function: "lo_server_add_method", code: 0) }
    }

    // MARK: - The thread

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        lastLog = Self.monotonic()
        while !stopping.load(ordering: .relaxed) {
            let now = Self.monotonic()
            var wait = 0.05
            if let first = schedule.first { wait = min(wait, max(0, first.due - now)) }
            if !subscribers.isEmpty { wait = min(wait, max(0, nextFeedback - now)) }
            var ready: Int32 = 0
            if wait < 0.002, let first = schedule.first, first.due - now <= wait {
                // A bundle due within 2 ms: sleep to its time exactly (poll counts whole milliseconds).
                var until = timespec(tv_sec: Int(first.due), tv_nsec: Int((first.due - first.due.rounded(.down)) * 1e9))
                _ = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nil)
            } else {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                ready = poll(&p, 1, Int32(wait * 1000))
                if ready < 0 && errno != EINTR { note("poll failed: \(String(cString: strerror(errno)))"); usleep(10_000) }
            }
            if ready > 0 {
                // Up to 256 datagrams in a row, then the schedule and feedback get their turn.
                for _ in 0..<256 {
                    guard receive(into: &buffer) else { break }
                }
            }
            runDue()
            flushFeedback()
            logCounts()
        }
    }

    /// One datagram, if one is waiting: refused by source, else parsed and applied.
    private func receive(into buffer: inout [UInt8]) -> Bool {
        var from = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let n = buffer.withUnsafeMutableBytes { bytes in
            withUnsafeMutablePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    recvfrom(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, &length)
                }
            }
        }
        if n < 0 {
            if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { note("recvfrom failed: \(String(cString: strerror(errno)))") }
            return false
        }
        count { $0.packets += 1 }
        guard configuration.admits(UInt32(bigEndian: from.sin_addr.s_addr)) else {
            count { $0.refusedSources += 1 }
            lastRefusal = "a packet from \(IPv4.text(UInt32(bigEndian: from.sin_addr.s_addr))), outside the allowed networks"
            return true
        }
        guard n > 0, let dispatcher else { count { $0.malformed += 1 }; return true }
        source = from
        let result = buffer.withUnsafeMutableBytes { lo_server_dispatch_data(dispatcher, $0.baseAddress, n) }
        if result < 0 {
            count { $0.malformed += 1 }
            lastRefusal = "a malformed packet of \(n) bytes (liblo error \(-result))"
        }
        return true
    }

    /// liblo's handler for every message (a bundle's one by one).
    private func handle(path: UnsafePointer<CChar>, types: UnsafePointer<CChar>?, argv: UnsafeMutablePointer<UnsafeMutablePointer<lo_arg>?>?,
                        argc: Int32, message: lo_message?) {
        let typeText = types.map { String(cString: $0) } ?? ""
        let typeLetters = Array(typeText.utf8)
        var arguments: [OSCValue] = []
        for i in 0..<Int(max(argc, 0)) where i < typeLetters.count {
            guard let arg = argv?[i] else { arguments.append(.other(Character(UnicodeScalar(typeLetters[i])))); continue }
            switch typeLetters[i] {
            case UInt8(ascii: "i"): arguments.append(.int(Int64(arg.pointee.i)))
            case UInt8(ascii: "h"): arguments.append(.int(arg.pointee.h))
            case UInt8(ascii: "f"): arguments.append(.float(Double(arg.pointee.f)))
            case UInt8(ascii: "d"): arguments.append(.float(arg.pointee.d))
            case UInt8(ascii: "s"), UInt8(ascii: "S"):
                arguments.append(.string(String(cString: UnsafeRawPointer(arg).assumingMemoryBound(to: CChar.self))))
            case UInt8(ascii: "T"): arguments.append(.bool(true))
            case UInt8(ascii: "F"): arguments.append(.bool(false))
            default: arguments.append(.other(Character(UnicodeScalar(typeLetters[i]))))
            }
        }
        if argc == 0 { arguments = typeLetters.map { $0 == UInt8(ascii: "T") ? .bool(true) : $0 == UInt8(ascii: "F") ? .bool(false) : .other(Character(UnicodeScalar($0))) } }
        let pathText = String(cString: path)
        switch OSCAddressSpace.request(path: pathText, types: typeText, arguments: arguments) {
        case .failure(let refusal):
            if refusal.isWrongArguments { count { $0.wrongArguments += 1 } } else { count { $0.unknownPaths += 1 } }
            lastRefusal = refusal.description.count > 200 ? String(refusal.description.prefix(200)) + "…" : refusal.description
        case .success(let request):
            // A bundle's timetag: 0.1 is "now"; a time ahead is held until then.
            if let message {
                let tag = lo_message_get_timestamp(message)
                if !(tag.sec == 0 && tag.frac <= 1) {
                    let ahead = Self.seconds(tag) - Self.realtime()
                    if ahead > Self.maxAhead || (ahead > 0.0005 && schedule.count >= Self.maxScheduled) {
                        count { $0.refusedTimetags += 1 }
                        lastRefusal = "a bundle timed \(Int(ahead)) s ahead (at most \(Int(Self.maxAhead)) s, \(Self.maxScheduled) waiting)"
                        return
                    }
                    if ahead > 0.0005 {
                        let item = Scheduled(due: Self.monotonic() + ahead, request: request, source: source)
                        let place = schedule.firstIndex { $0.due > item.due } ?? schedule.count
                        schedule.insert(item, at: place)
                        count { $0.scheduled += 1 }
                        return
                    }
                }
            }
            apply(request, from: source)
        }
    }

    private func runDue() {
        guard !schedule.isEmpty else { return }
        let now = Self.monotonic()
        var due = 0
        while due < schedule.count && schedule[due].due <= now { due += 1 }
        guard due > 0 else { return }
        let items = schedule[0..<due]
        schedule.removeFirst(due)
        for item in items { apply(item.request, from: item.source) }
    }

    // MARK: - Requests

    private func apply(_ request: OSCRequest, from sender: sockaddr_in) {
        var applied = true
        switch request {
        case .set(let address, let value):
            hub.set(address, to: value)
            if address.spec.kind == .trigger && value >= 0.5 { hub.set(address, to: 0) }
        case .get(let address):
            send(OSCAddressSpace.path(of: address), .float(hub.value(of: address)), to: sender)
        case .control(let name, let value):
            if !hub.setControl(name, to: value) { refuseControl(name); applied = false }
        case .getControl(let name):
            if let state = hub.controlStates.first(where: { $0.name == name }) {
                send(OSCAddressSpace.path(ofControl: name), .float(state.value), to: sender)
            } else { refuseControl(name); applied = false }
        case .sceneIndex(let i):
            if hub.sceneNames.indices.contains(i) { hub.set(.sceneSelect, to: Double(i)) }
            else { refuse(.unknownPath("scene \(i) (the mapping has \(hub.sceneNames.count))")); applied = false }
        case .sceneName(let name):
            if !hub.selectScene(named: name) { refuse(.unknownPath("scene '\(name)'")); applied = false }
        case .saveScene(let name):
            do { try hub.saveScene(named: name) } catch { refuse(.notFound(error.description)); applied = false }
        case .getAudio:
            send(OSCAddressSpace.root + "/audio", .string(audioState?() ?? "playing"), to: sender)
        case .getScene:
            send(OSCAddressSpace.root + "/scene", .string(hub.currentScene ?? ""), to: sender)
        case .note(let channel, let key, let velocity):
            guard let notes else { count { $0.notesDropped += 1 }; lastRefusal = "a note: no engine takes notes here"; return }
            let c = Channel(channel - 1), k = UInt7(key)
            notes(velocity == 0 ? .noteOff(k, channel: c) : .noteOn(k, velocity: UInt7(velocity), channel: c))
        case .seek(let seconds):
            guard let length = duration?(), length > 0 else {
                refuse(.wrongArguments(path: OSCAddressSpace.root + "/transport/seek", types: "f", expected: "a piece (play); live has none"))
                return
            }
            hub.set(.transport(.position), to: min(100, seconds / length * 100))
        case .subscribe(let port):
            var sender = sender
            if let port { sender.sin_port = UInt16(port).bigEndian }
            if !subscribers.contains(where: { Self.same($0, sender) }) {
                guard subscribers.count < Self.maxSubscribers else {
                    refuse(.wrongArguments(path: OSCAddressSpace.root + "/subscribe", types: "", expected: "room: \(Self.maxSubscribers) subscribers at most"))
                    return
                }
                subscribers.append(sender)
                count { $0.subscribers = subscribers.count }
                sendState(to: sender)
            }
        case .preset(let number, .number(let bank, let program)):
            hub.selectPreset(onChannel: Channel(number - 1), bank: bank, program: UInt7(program))
        case .preset(let number, .name(let name)):
            let channel = Channel(number - 1)
            guard let presetNamed else {
                refuse(.notFound("preset '\(name)': no SoundFont here to look it up in; give bank and program (i i)")); return
            }
            switch presetNamed(name, channel) {
            case .success(let preset) where preset.bank > 127 && !(preset.bank == 128 && number == 10):
                refuse(.notFound("preset '\(preset.name)' is in bank \(preset.bank): bank select reaches 0…127, or 128 on channel 10")); return
            case .success(let preset):
                hub.selectPreset(onChannel: channel, bank: preset.bank, program: UInt7(preset.program))
            case .failure(let problem):
                refuse(.notFound(problem.description)); return
            }
        case .unsubscribe(let port):
            var sender = sender
            if let port { sender.sin_port = UInt16(port).bigEndian }
            subscribers.removeAll { Self.same($0, sender) }
            count { $0.subscribers = subscribers.count }
        }
        if applied { count { $0.applied += 1 } }
    }

    private func refuseControl(_ name: String) { refuse(.unknownPath("control '\(name)'")) }

    private func refuse(_ refusal: OSCRefusal) {
        if refusal.isWrongArguments { count { $0.wrongArguments += 1 } } else { count { $0.unknownPaths += 1 } }
        lastRefusal = refusal.description
    }

    /// A new subscriber: every parameter away from its default (triggers aside), then the changes.
    private func sendState(to subscriber: sockaddr_in) {
        for info in ParameterRegistry.standard.all where info.kind != .trigger {
            let value = hub.value(of: info.address)
            if value != info.defaultValue { send(OSCAddressSpace.path(of: info.address), .float(value), to: subscriber) }
        }
    }

    /// Each parameter's latest value since the last flush, to every subscriber, every `feedbackInterval`.
    private func flushFeedback() {
        let now = Self.monotonic()
        guard now >= nextFeedback else { return }
        nextFeedback = now + configuration.feedbackInterval
        let audio = audioState?()
        if audio != audioSent {
            audioSent = audio
            for subscriber in subscribers { send(OSCAddressSpace.root + "/audio", .string(audio ?? "playing"), to: subscriber) }
        }
        let changes = pending.take()
        guard !subscribers.isEmpty, !changes.isEmpty else { return }
        for (index, value) in changes.sorted(by: { $0.key < $1.key }) {
            guard let info = ParameterRegistry.standard.info(at: index) else { continue }
            let path = OSCAddressSpace.path(of: info.address)
            for subscriber in subscribers { send(path, .float(Double(value)), to: subscriber) }
        }
    }

    // MARK: - Sending

    /// One message to one address, from the server's socket (so answers come from the port asked).
    private func send(_ path: String, _ value: OSCValue, to target: sockaddr_in) {
        guard let message = lo_message_new() else { count { $0.sendFailures += 1 }; return }
        defer { lo_message_free(message) }
        let added: Int32
        switch value {
        case .string(let s): added = lo_message_add_string(message, s)
        case .int(let i): added = lo_message_add_int32(message, Int32(clamping: i))
        default: added = lo_message_add_float(message, Float(value.number ?? 0))
        }
        guard added == 0 else { count { $0.sendFailures += 1 }; return }
        var size = lo_message_length(message, path)
        var bytes = [UInt8](repeating: 0, count: size)
        let written = bytes.withUnsafeMutableBytes { lo_message_serialise(message, path, $0.baseAddress, &size) }
        guard written != nil else { count { $0.sendFailures += 1 }; return }
        var to = target
        let sent = bytes.withUnsafeBytes { b in
            withUnsafePointer(to: &to) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, b.baseAddress, size, Int32(MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        if sent == size { count { $0.sent += 1 } } else { count { $0.sendFailures += 1 } }
    }

    // MARK: - Counting and the log

    private func count(_ change: (inout Counters) -> Void) { countersLock.withLock { change(&$0) } }

    private func note(_ line: String) { logLines.withLock { $0.append("osc: " + line) } }

    /// At most one line per `logInterval`, only when a refusal count moved.
    private func logCounts() {
        let now = Self.monotonic()
        guard now - lastLog >= configuration.logInterval else { return }
        let c = counters
        let refusals = c.malformed + c.unknownPaths + c.wrongArguments + c.refusedSources + c.refusedTimetags + c.notesDropped
        let before = lastLogged.malformed + lastLogged.unknownPaths + lastLogged.wrongArguments + lastLogged.refusedSources
            + lastLogged.refusedTimetags + lastLogged.notesDropped
        guard refusals != before else { return }
        let elapsed = now - lastLog
        lastLog = now
        lastLogged = c
        note("\(refusals - before) message\(refusals - before == 1 ? "" : "s") not taken in \(String(format1: elapsed)) s; "
             + "since the start \(c.malformed) malformed, \(c.unknownPaths) unknown paths, \(c.wrongArguments) wrong arguments, "
             + "\(c.refusedSources) from refused sources, \(c.refusedTimetags) timetags refused"
             + (lastRefusal.map { " (last: \($0))" } ?? ""))
    }

    // MARK: - Time

    /// OSC timetags count from 1900; Unix time from 1970.
    static let ntpOffset = 2_208_988_800.0

    static func seconds(_ tag: lo_timetag) -> Double { Double(tag.sec) - ntpOffset + Double(tag.frac) / 4_294_967_296.0 }

    static func realtime() -> Double { clock(CLOCK_REALTIME) }
    static func monotonic() -> Double { clock(CLOCK_MONOTONIC) }

    private static func clock(_ id: clockid_t) -> Double {
        var t = timespec()
        clock_gettime(id, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    private static func same(_ a: sockaddr_in, _ b: sockaddr_in) -> Bool {
        a.sin_addr.s_addr == b.sin_addr.s_addr && a.sin_port == b.sin_port
    }
}

/// Each parameter's latest value since the last `take`: the hub's subscriber
/// writes (under the hub's lock, any thread), the server's thread takes.
final class PendingChanges: Sendable {
    private let changes = Mutex<[Int: Float]>([:])
    func record(_ change: ParameterChange) { changes.withLock { $0[change.index] = change.value } }
    func take() -> [Int: Float] { changes.withLock { c in let all = c; c.removeAll(keepingCapacity: true); return all } }
}

extension String {
    /// One decimal place, without Foundation.
    init(format1 v: Double) {
        let tenths = Int((v * 10).rounded())
        self = "\(tenths / 10).\(abs(tenths % 10))"
    }
}
