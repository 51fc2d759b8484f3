import CALSA
import Glibc
import MIDI
import Synchronization
import Threads

/// An ALSA sequencer client with one writable input port (others may
/// subscribe to it), following the system announce port so it can see
/// sources appear and go away; and, once asked for, one readable output port
/// (feedback to controllers, test senders) that `send` writes to directly.
/// The kernel stamps what reaches the input port with the real time of a
/// queue of ours (`ArrivalStamps`), so each message comes with its arrival
/// time on the monotonic clock.
///
/// Threads: create it, list ports, `connect` and `setAutoconnect` on one
/// (control) thread; `start` runs the input loop on a thread of its own that
/// calls the handler for every `SequencerEvent`. The handler runs on that
/// input thread, never on the render thread. `stop` or deinit ends the loop
/// (within `pollTimeout`) and deinit closes the client. `send` may be called
/// from one other thread (the control thread) while the input thread runs.
public final class SequencerClient: @unchecked Sendable {
    /// Our client number, e.g. 128.
    public let clientID: Int
    /// Our input port, e.g. 128:0: what `aplaymidi -p` and `aconnect` name.
    public let inputPort: SeqAddress
    /// The client name others see (`aconnect -l`).
    public let name: String

    let handle: SequencerHandle
    /// The kernel's arrival stamps on our input port (nil: see `arrivalStampingError`).
    let arrivals: ArrivalStamps?
    /// Why the input port does not stamp arrivals (no queue to spare, say):
    /// events then come with `arrival` nil and are timed when read.
    public let arrivalStampingError: ALSAError?
    private var outputPort: Int32?
    private var loop: InputLoop?
    private var thread: JoinableThread?

    /// How long one poll of the input loop waits before it checks its stop flag.
    public static let pollTimeoutMilliseconds: Int32 = 50

    /// Opens the sequencer (duplex, non-blocking), names the client, creates
    /// the input port and subscribes it to the system announce port.
    /// Throws `ALSAError` of kind `.sequencerUnavailable` when there is no
    /// sequencer (no /dev/snd/seq).
    public init(name: String = "carillon", inputPortName: String = "input") throws(ALSAError) {
        ALSALibrary.silenceErrorMessages()
        var seq: OpaquePointer?
        try check("snd_seq_open", snd_seq_open(&seq, "default", SND_SEQ_OPEN_DUPLEX, SND_SEQ_NONBLOCK),
            kind: .sequencerUnavailable)
        guard let seq else { throw ALSAError(kind: .sequencerUnavailable, function: "snd_seq_open", code: -ENODEV) }
        handle = SequencerHandle(seq)
        self.name = name
        try check("snd_seq_set_client_name", snd_seq_set_client_name(seq, name), context: name)
        clientID = Int(try check("snd_seq_client_id", snd_seq_client_id(seq)))
        let port = try check("snd_seq_create_simple_port", snd_seq_create_simple_port(seq, inputPortName,
            UInt32(SND_SEQ_PORT_CAP_WRITE | SND_SEQ_PORT_CAP_SUBS_WRITE),
            UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION)), context: inputPortName)
        inputPort = SeqAddress(client: clientID, port: Int(port))
        // Room for bursts (a dense file played fast, a controller's SysEx dump).
        try check("snd_seq_set_client_pool_input", snd_seq_set_client_pool_input(seq, 2000))
        try check("snd_seq_set_input_buffer_size", snd_seq_set_input_buffer_size(seq, 1 << 16))
        do {
            arrivals = try ArrivalStamps.enable(on: handle, port: port, name: "\(name) arrivals")
            arrivalStampingError = nil
        } catch {
            arrivals = nil
            arrivalStampingError = error
        }
        try check("snd_seq_connect_from", snd_seq_connect_from(seq, port,
            Int32(SND_SEQ_CLIENT_SYSTEM), Int32(SND_SEQ_PORT_SYSTEM_ANNOUNCE)), context: "system announce port")
    }

    deinit { stop() }

    // MARK: Ports

    /// Every port of every client, ours included, ordered by address.
    public func ports() throws(ALSAError) -> [PortInfo] {
        try handle.allPorts()
    }

    /// Ports others can read from (subscribe to), except our own and the system client's.
    public func sources() throws(ALSAError) -> [PortInfo] {
        try ports().filter { $0.isSource && $0.address.client != clientID && $0.address.client != 0 }
    }

    /// The sources `spec` names: a `client:port` address, or every source whose
    /// client or port name contains `spec`, ignoring case.
    public func resolve(source spec: String) throws(ALSAError) -> [PortInfo] {
        try resolve(spec, among: sources()) { .noMatchingSource(spec: spec, candidates: $0) }
    }

    /// The ports of `all` that `spec` names (an address or a name substring).
    private func resolve(_ spec: String, among all: [PortInfo],
                         notFound: ([String]) -> ALSAError.Kind) throws(ALSAError) -> [PortInfo] {
        if let address = SeqAddress(spec) {
            if let info = all.first(where: { $0.address == address }) { return [info] }
            // Not listed (e.g. not exported): let the kernel decide.
            if let info = try? handle.portInfo(address) { return [info] }
        } else {
            let needle = spec.lowercased()
            let matches = all.filter { $0.searchableName.lowercased().contains(needle) }
            if !matches.isEmpty { return matches }
        }
        throw ALSAError(kind: notFound(all.map(\.description)), function: "connect", code: -ENOENT)
    }

    /// Subscribes our input port to the sources `spec` names (see `resolve`)
    /// and returns them. Connecting an already connected source is not an error.
    @discardableResult
    public func connect(source spec: String) throws(ALSAError) -> [PortInfo] {
        let sources = try resolve(source: spec)
        for source in sources { try connect(source.address) }
        return sources
    }

    /// Subscribes our input port to `source`.
    public func connect(_ source: SeqAddress) throws(ALSAError) {
        try handle.connect(from: source, to: Int32(inputPort.port))
    }

    /// Removes the subscription `source` → our input port (its held notes are released by the input loop).
    public func disconnect(_ source: SeqAddress) throws(ALSAError) {
        try check("snd_seq_disconnect_from", snd_seq_disconnect_from(handle.seq, Int32(inputPort.port),
            Int32(source.client), Int32(source.port)), context: "\(source)")
    }

    /// Connects every current source `policy` accepts, and — once started —
    /// every matching port that appears later. Returns the ones connected now.
    @discardableResult
    public func setAutoconnect(_ policy: AutoconnectPolicy?) throws(ALSAError) -> [PortInfo] {
        autoconnect.value.withLock { $0 = policy }
        guard let policy else { return [] }
        var connected: [PortInfo] = []
        for source in try sources() where policy.accepts(source) {
            try connect(source.address)
            connected.append(source)
        }
        return connected
    }

    private final class PolicyBox: Sendable { let value = Mutex<AutoconnectPolicy?>(nil) }
    private let autoconnect = PolicyBox()

    // MARK: Input

    /// Starts the input thread; `handler` is called on it for every event.
    public func start(handler: @escaping @Sendable (SequencerEvent) -> Void) throws(ALSAError) {
        guard loop == nil else { return }
        let loop = InputLoop(handle: handle, inputPort: inputPort, clientID: clientID, arrivals: arrivals,
            autoconnect: { [autoconnect] in autoconnect.value.withLock { $0 } }, handler: handler)
        do { self.thread = try JoinableThread(name: "carillon-midi-in") { loop.run() } }
        catch { throw ALSAError(function: "pthread_create", code: -error.code, context: error.name) }
        self.loop = loop
    }

    /// Ends the input thread (returns once it has); safe to call more than once.
    public func stop() {
        loop?.requestStop()
        thread?.join()
        thread = nil
        loop = nil
    }

    /// Events the kernel dropped because our input buffer was full.
    public var inputOverruns: Int { loop?.overruns.load(ordering: .relaxed) ?? 0 }

    // MARK: Output (feedback to controllers, test senders)

    /// Sends `message` now to every subscriber of our output port (created on first use,
    /// readable and subscribable, named `output`). Returns that port's address.
    @discardableResult
    public func send(_ message: MIDIMessage) throws(ALSAError) -> SeqAddress {
        let port = try makeOutputPort()
        let rc = message.withSeqEvent { ev -> Int32 in
            carillon_seq_ev_set_source(&ev, UInt8(port))
            carillon_seq_ev_set_subs(&ev)
            carillon_seq_ev_set_direct(&ev)
            return snd_seq_event_output_direct(handle.seq, &ev)
        }
        try check("snd_seq_event_output_direct", rc)
        return SeqAddress(client: clientID, port: Int(port))
    }

    /// Our output port (created on first call).
    @discardableResult
    public func makeOutputPort(name: String = "output", hardware: Bool = false) throws(ALSAError) -> Int32 {
        if let outputPort { return outputPort }
        let type = SND_SEQ_PORT_TYPE_MIDI_GENERIC | (hardware ? SND_SEQ_PORT_TYPE_HARDWARE : SND_SEQ_PORT_TYPE_APPLICATION)
        let port = try check("snd_seq_create_simple_port", snd_seq_create_simple_port(handle.seq, name,
            UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ), UInt32(type)), context: name)
        outputPort = port
        return port
    }

    /// Subscribes `destination` to our output port (created if needed): what
    /// `send` sends reaches it. Connecting twice is not an error.
    public func connectOutput(to destination: SeqAddress) throws(ALSAError) {
        let port = try makeOutputPort()
        let rc = snd_seq_connect_to(handle.seq, port, Int32(destination.client), Int32(destination.port))
        if rc == -EBUSY { return }
        try check("snd_seq_connect_to", rc, context: "\(destination)")
    }

    /// Ports others can write to (receive from us), except our own and the system client's.
    public func destinations() throws(ALSAError) -> [PortInfo] {
        try ports().filter { $0.isDestination && $0.address.client != clientID && $0.address.client != 0 }
    }

    /// The destinations `spec` names: a `client:port` address, or every
    /// destination whose client or port name contains `spec`, ignoring case.
    public func resolve(destination spec: String) throws(ALSAError) -> [PortInfo] {
        try resolve(spec, among: destinations()) { .noMatchingDestination(spec: spec, candidates: $0) }
    }

    /// Subscribes the destinations `spec` names (see `resolve(destination:)`)
    /// to our output port (created if needed) and returns them.
    @discardableResult
    public func connectOutput(destination spec: String) throws(ALSAError) -> [PortInfo] {
        let destinations = try resolve(destination: spec)
        for destination in destinations { try connectOutput(to: destination.address) }
        return destinations
    }

    /// Sends `messages` in order, now, to every subscriber of our output port (see `send`).
    public func send(_ messages: [MIDIMessage]) throws(ALSAError) {
        for message in messages { try send(message) }
    }

    /// How many ports are subscribed to our output port.
    public func outputSubscriberCount() throws(ALSAError) -> Int {
        guard let outputPort else { return 0 }
        return try handle.subscriberCount(of: SeqAddress(client: clientID, port: Int(outputPort)))
    }
}

/// Owns the `snd_seq_t`; closes it when the last user (client or input loop) lets go.
final class SequencerHandle: @unchecked Sendable {
    let seq: OpaquePointer
    init(_ seq: OpaquePointer) { self.seq = seq }
    deinit { snd_seq_close(seq) }

    func connect(from source: SeqAddress, to port: Int32) throws(ALSAError) {
        let rc = snd_seq_connect_from(seq, port, Int32(source.client), Int32(source.port))
        if rc == -EBUSY { return }  // already subscribed
        try check("snd_seq_connect_from", rc, context: "\(source)")
    }

    func allPorts() throws(ALSAError) -> [PortInfo] {
        var cinfo: OpaquePointer?, pinfo: OpaquePointer?
        try check("snd_seq_client_info_malloc", snd_seq_client_info_malloc(&cinfo))
        defer { snd_seq_client_info_free(cinfo) }
        try check("snd_seq_port_info_malloc", snd_seq_port_info_malloc(&pinfo))
        defer { snd_seq_port_info_free(pinfo) }
        var out: [PortInfo] = []
        snd_seq_client_info_set_client(cinfo, -1)
        while snd_seq_query_next_client(seq, cinfo) >= 0 {
            let client = snd_seq_client_info_get_client(cinfo)
            snd_seq_port_info_set_client(pinfo, client)
            snd_seq_port_info_set_port(pinfo, -1)
            while snd_seq_query_next_port(seq, pinfo) >= 0 {
                out.append(Self.info(cinfo, pinfo))
            }
        }
        return out.sorted { $0.address < $1.address }
    }

    func portInfo(_ address: SeqAddress) throws(ALSAError) -> PortInfo {
        var cinfo: OpaquePointer?, pinfo: OpaquePointer?
        try check("snd_seq_client_info_malloc", snd_seq_client_info_malloc(&cinfo))
        defer { snd_seq_client_info_free(cinfo) }
        try check("snd_seq_port_info_malloc", snd_seq_port_info_malloc(&pinfo))
        defer { snd_seq_port_info_free(pinfo) }
        try check("snd_seq_get_any_client_info", snd_seq_get_any_client_info(seq, Int32(address.client), cinfo),
            context: "\(address)")
        try check("snd_seq_get_any_port_info", snd_seq_get_any_port_info(seq, Int32(address.client),
            Int32(address.port), pinfo), context: "\(address)")
        return Self.info(cinfo, pinfo)
    }

    func subscriberCount(of address: SeqAddress) throws(ALSAError) -> Int {
        var query: OpaquePointer?
        try check("snd_seq_query_subscribe_malloc", snd_seq_query_subscribe_malloc(&query))
        defer { snd_seq_query_subscribe_free(query) }
        var root = address.cValue
        snd_seq_query_subscribe_set_root(query, &root)
        snd_seq_query_subscribe_set_type(query, SND_SEQ_QUERY_SUBS_READ)
        snd_seq_query_subscribe_set_index(query, 0)
        var count = 0
        while snd_seq_query_port_subscribers(seq, query) >= 0 {
            count += 1
            snd_seq_query_subscribe_set_index(query, Int32(count))
        }
        return count
    }

    private static func info(_ cinfo: OpaquePointer?, _ pinfo: OpaquePointer?) -> PortInfo {
        let addr = snd_seq_port_info_get_addr(pinfo)!.pointee
        return PortInfo(
            address: SeqAddress(addr),
            clientName: String(cString: snd_seq_client_info_get_name(cinfo)),
            portName: String(cString: snd_seq_port_info_get_name(pinfo)),
            capabilities: .init(rawValue: snd_seq_port_info_get_capability(pinfo)),
            type: .init(rawValue: snd_seq_port_info_get_type(pinfo)),
            isKernelClient: snd_seq_client_info_get_type(cinfo) == SND_SEQ_KERNEL_CLIENT)
    }
}

/// The input thread's state: it alone reads events, decodes them and tracks held notes.
final class InputLoop: @unchecked Sendable {
    let overruns = Atomic<Int>(0)
    private let stopRequested = Atomic<Bool>(false)
    private let handle: SequencerHandle
    private let inputPort: SeqAddress
    private let clientID: Int
    private let arrivals: ArrivalStamps?
    private let autoconnect: @Sendable () -> AutoconnectPolicy?
    private let handler: @Sendable (SequencerEvent) -> Void
    private var decoder = SeqEventDecoder()
    private var held = HeldNotes<SeqAddress>()
    private var subscribed: Set<SeqAddress> = []
    private var messages: [MIDIMessage] = []

    init(handle: SequencerHandle, inputPort: SeqAddress, clientID: Int, arrivals: ArrivalStamps?,
        autoconnect: @escaping @Sendable () -> AutoconnectPolicy?,
        handler: @escaping @Sendable (SequencerEvent) -> Void
    ) {
        self.handle = handle; self.inputPort = inputPort; self.clientID = clientID; self.arrivals = arrivals
        self.autoconnect = autoconnect; self.handler = handler
    }

    func requestStop() { stopRequested.store(true, ordering: .releasing) }

    func run() {
        let seq = handle.seq
        let count = Int(snd_seq_poll_descriptors_count(seq, Int16(POLLIN)))
        var fds = [pollfd](repeating: pollfd(), count: max(count, 1))
        let filled = Int(snd_seq_poll_descriptors(seq, &fds, UInt32(fds.count), Int16(POLLIN)))
        while !stopRequested.load(ordering: .acquiring) {
            arrivals?.refineIfDue(now: monotonicNanoseconds())
            if snd_seq_event_input_pending(seq, 0) == 0 {
                let ready = poll(&fds, nfds_t(filled), SequencerClient.pollTimeoutMilliseconds)
                if ready <= 0 { continue }  // timeout, or EINTR: check the stop flag again
            }
            drain(seq)
        }
    }

    private func drain(_ seq: OpaquePointer) {
        while !stopRequested.load(ordering: .relaxed) {
            var ev: UnsafeMutablePointer<snd_seq_event_t>?
            let rc = snd_seq_event_input(seq, &ev)
            if rc == -EAGAIN { return }
            if rc == -ENOSPC {
                overruns.add(1, ordering: .relaxed)
                handler(.inputOverrun)
                continue
            }
            guard rc >= 0, let ev else { return }
            handle(ev.pointee)
        }
    }

    private func handle(_ ev: snd_seq_event_t) {
        let source = SeqAddress(ev.source)
        switch UInt32(ev.type) {
        case SND_SEQ_EVENT_PORT_SUBSCRIBED.rawValue:
            let c = ev.data.connect
            // Our own subscription to the announce port is bookkeeping, not a MIDI source.
            if SeqAddress(c.dest) == inputPort, SeqAddress(c.sender) != .systemAnnounce,
                subscribed.insert(SeqAddress(c.sender)).inserted
            {
                handler(.subscribed(SeqAddress(c.sender)))
            }
        case SND_SEQ_EVENT_PORT_UNSUBSCRIBED.rawValue:
            let c = ev.data.connect
            if SeqAddress(c.dest) == inputPort { lost(SeqAddress(c.sender)) }
        case SND_SEQ_EVENT_PORT_EXIT.rawValue:
            lost(SeqAddress(ev.data.addr))
        case SND_SEQ_EVENT_CLIENT_EXIT.rawValue:
            let client = Int(ev.data.addr.client)
            let gone = Set(held.sources).union(subscribed).filter { $0.client == client }
            for address in gone.sorted() { lost(address) }
        case SND_SEQ_EVENT_PORT_START.rawValue:
            portStarted(SeqAddress(ev.data.addr))
        default:
            guard source != .systemAnnounce else { return }
            let arrival = arrivals?.arrival(of: ev, handledAt: monotonicNanoseconds())
            messages.removeAll(keepingCapacity: true)
            decoder.decode(ev, into: &messages)
            for message in messages {
                held.track(message, from: source)
                handler(.message(message, source: source, arrival: arrival))
            }
        }
    }

    /// A source went away (or was unsubscribed): end what it holds.
    private func lost(_ source: SeqAddress) {
        decoder.reset(source: source)
        let wasSubscribed = subscribed.remove(source) != nil
        let releases = held.release(source)
        if wasSubscribed || !releases.isEmpty { handler(.unsubscribed(source)) }
        for message in releases { handler(.release(message, source: source)) }
    }

    private func portStarted(_ address: SeqAddress) {
        guard address.client != clientID, let info = try? handle.portInfo(address) else { return }
        guard let policy = autoconnect(), policy.accepts(info) else {
            handler(.portAppeared(info))
            return
        }
        do {
            try handle.connect(from: address, to: Int32(inputPort.port))
            handler(.autoconnected(info))
        } catch {
            handler(.autoconnectFailed(info, error))
        }
    }
}
