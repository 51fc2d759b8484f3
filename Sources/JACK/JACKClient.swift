import CJACK
import Glibc
import Synchronization

/// What a JACK client tells its owner, and on which thread.
public protocol JACKClientDelegate: AnyObject, Sendable {
    /// JACK's process thread, once per cycle of `frames` frames: the real-time
    /// rules hold (no allocation, lock, log, throw or wait). Read and write
    /// the ports' buffers here.
    func process(frames: Int)
    /// JACK's notification thread: the period is now `frames` (the process
    /// thread does not run meanwhile).
    func bufferSizeDidChange(to frames: Int)
    /// JACK's notification thread: the sample rate is now `rate` (also called
    /// once at activation with the current rate).
    func sampleRateDidChange(to rate: Int)
    /// JACK's notification thread: the server saw an xrun.
    func xrun()
    /// A JACK thread: the server shut down or threw the client out (too slow);
    /// the client is dead and must be closed.
    func serverDidShutDown(reason: String)
}

extension JACKClientDelegate {
    public func bufferSizeDidChange(to frames: Int) {}
    public func sampleRateDidChange(to rate: Int) {}
    public func xrun() {}
    public func serverDidShutDown(reason: String) {}
}

/// One client of a JACK server (jackd, or PipeWire's JACK): its ports, its
/// callbacks, its connections. The server must already run: the client never
/// starts one (`JackNoStartServer`), so a missing server is a clear error.
///
/// Threads: open, register, activate, connect and close from one owner
/// thread; the delegate's `process` runs on JACK's thread, the others on
/// JACK's notification thread. Deinit deactivates (waiting for a running
/// cycle) and closes the client, which unregisters its ports.
public final class JACKClient: @unchecked Sendable {
    /// The name the server gave (the one asked for, or with a suffix if taken).
    public let name: String
    /// The server connected to (`$JACK_DEFAULT_SERVER` or `default`).
    public let serverName: String
    private let client: OpaquePointer
    var handle: OpaquePointer { client }
    private var box: Unmanaged<DelegateBox>?
    /// The timebase master's callback context (`becomeTimebaseMaster`).
    var timebaseBox: Unmanaged<TimebaseBox>?
    private var active = false
    /// `activate` was called (and not `deactivate`): ports can be connected only then.
    public var isActive: Bool { active }

    /// True once the server shut down or threw this client out (`jack_on_info_shutdown`).
    /// From then on no call of this client reaches libjack: its calls read the server's
    /// shared memory, which a server started since reuses (`jack_get_ports` of such a
    /// client crashed the process: a zone's port looking for its destination after a
    /// restart, 1 run in 2). The owner's calls and the shutdown callback take the lock,
    /// so a call is either made before the server is known gone or not at all.
    public var isServerGone: Bool { server.withLock { $0.gone } }
    private let server = Mutex(ServerState())
    private struct ServerState: Sendable { var gone = false }

    /// Runs `body` (a libjack call from the owner's side) unless the server is gone.
    func whileServerLives<T>(_ body: () throws(JACKError) -> T) throws(JACKError) -> T {
        let result: Result<T, JACKError> = server.withLock { state in
            guard !state.gone else {
                return .failure(JACKError(kind: .serverUnavailable(server: serverName), function: "jack_on_info_shutdown", code: 0))
            }
            do throws(JACKError) { return .success(try body()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Holds the delegate without owning it: the delegate usually owns the
    /// client, and must deactivate it (or let it go) before it goes itself.
    /// The process thread calls `process`, which `ProcessBox` implements.
    private class DelegateBox {
        unowned(unsafe) let delegate: any JACKClientDelegate
        unowned(unsafe) let client: JACKClient
        init(_ delegate: any JACKClientDelegate, client: JACKClient) { self.delegate = delegate; self.client = client }
        func process(frames: Int) { preconditionFailure("a ProcessBox's") }
    }

    /// The process call through the delegate's own type, as an unretained
    /// reference: calling it through `delegate` (an `unowned(unsafe)` existential)
    /// made a strong copy, a swift_retain and a swift_release every cycle.
    private final class ProcessBox<Delegate: JACKClientDelegate>: DelegateBox {
        let processing: Unmanaged<Delegate>
        init(_ delegate: Delegate, client: JACKClient) {
            processing = .passUnretained(delegate)
            super.init(delegate, client: client)
        }
        override func process(frames: Int) { processing._withUnsafeGuaranteedRef { $0.process(frames: frames) } }
    }

    /// Opens a client on the running server. Throws `.serverUnavailable` when none runs.
    public init(name: String) throws(JACKError) {
        JACKLibrary.silenceMessages()
        serverName = JACKLibrary.serverName
        var status = jack_status_t(rawValue: 0)
        guard let client = carillon_jack_client_open(name, JackNoStartServer, &status) else {
            throw JACKError(kind: .serverUnavailable(server: serverName), function: "jack_client_open",
                            code: Int32(bitPattern: status.rawValue))
        }
        self.client = client
        self.name = jack_get_client_name(client).map { String(cString: $0) } ?? name
    }

    /// The server this client was on went away: it is never closed. libjack (jackd2
    /// 1.9.21) crashes in `jack_client_close` of such a client (seen at the end of a
    /// session whose server was killed, with or without a server started since); what
    /// it holds is left to the process. Call after `deactivate`.
    public func abandon() { abandoned = true }
    private var abandoned = false

    deinit {
        deactivate()
        if !abandoned { jack_client_close(client) }
        box?.release()
        timebaseBox?.release()
    }

    /// The server's sample rate, in Hz (0 once the server is gone).
    public var sampleRate: Int { (try? whileServerLives { Int(jack_get_sample_rate(client)) }) ?? 0 }
    /// Frames per cycle (the server's period) now (0 once the server is gone).
    public var bufferSize: Int { (try? whileServerLives { Int(jack_get_buffer_size(client)) }) ?? 0 }
    /// The server runs its process thread with real-time scheduling (`jackd -R`, the default).
    public var isRealtime: Bool { (try? whileServerLives { jack_is_realtime(client) != 0 }) ?? false }
    /// Process thread: the server's frame count at the start of the cycle being processed
    /// (`jack_last_frame_time`; wraps at 2³²). Every call of the process callback in one
    /// server cycle sees the same value.
    @inline(__always)
    public var cycleStartFrame: UInt32 { jack_last_frame_time(client) }

    /// Registers a port of this client (`name` without the client's prefix).
    public func register(_ name: String, _ type: JACKPort.PortType, _ direction: JACKPort.Direction) throws(JACKError) -> JACKPort {
        let flags = direction == .output ? JackPortIsOutput.rawValue : JackPortIsInput.rawValue
        return try whileServerLives { () throws(JACKError) -> JACKPort in
            guard let port = jack_port_register(client, name, type.cName, UInt(flags), 0) else {
                throw JACKError(kind: .portRegistration(port: "\(self.name):\(name)"), function: "jack_port_register", code: -1)
            }
            return JACKPort(port)
        }
    }

    /// Sets the callbacks and starts processing: `delegate.process` runs from
    /// now on, once per cycle, until `deactivate`. Once per client. The
    /// client does not keep `delegate` alive: it must `deactivate` before it ends.
    public func activate<Delegate: JACKClientDelegate>(_ delegate: Delegate) throws(JACKError) {
        precondition(box == nil, "activate once")
        let box = Unmanaged<DelegateBox>.passRetained(ProcessBox(delegate, client: self))
        self.box = box
        let arg = box.toOpaque()
        try check("jack_set_process_callback", jack_set_process_callback(client, { frames, arg in
            // No retain/release: the box lives as long as the client, the delegate longer.
            Unmanaged<DelegateBox>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.process(frames: Int(frames)) }
            return 0
        }, arg))
        try check("jack_set_buffer_size_callback", jack_set_buffer_size_callback(client, { frames, arg in
            Unmanaged<DelegateBox>.fromOpaque(arg!).takeUnretainedValue().delegate.bufferSizeDidChange(to: Int(frames))
            return 0
        }, arg))
        try check("jack_set_sample_rate_callback", jack_set_sample_rate_callback(client, { rate, arg in
            Unmanaged<DelegateBox>.fromOpaque(arg!).takeUnretainedValue().delegate.sampleRateDidChange(to: Int(rate))
            return 0
        }, arg))
        try check("jack_set_xrun_callback", jack_set_xrun_callback(client, { arg in
            Unmanaged<DelegateBox>.fromOpaque(arg!).takeUnretainedValue().delegate.xrun()
            return 0
        }, arg))
        jack_on_info_shutdown(client, { _, reason, arg in
            let text = reason.map { String(cString: $0) } ?? "no reason given"
            let box = Unmanaged<DelegateBox>.fromOpaque(arg!).takeUnretainedValue()
            box.client.server.withLock { $0.gone = true }
            box.delegate.serverDidShutDown(reason: text)
        }, arg)
        try check("jack_activate", jack_activate(client))
        active = true
    }

    /// Stops processing (waits for a running cycle to end). Idempotent. Once the server
    /// is gone its process thread is gone too: nothing to stop, and libjack is not called.
    public func deactivate() {
        guard active else { return }
        active = false
        // Not under the server lock: this waits for the process thread, on which jackd2 may call the shutdown callback.
        guard !isServerGone else { return }
        jack_deactivate(client)
    }

    /// Connects two ports by full name (`client:port`); an existing connection is fine.
    public func connect(_ source: String, to destination: String) throws(JACKError) {
        try whileServerLives { () throws(JACKError) in
            let rc = jack_connect(client, source, destination)
            if rc != 0 && rc != EEXIST {
                throw JACKError(function: "jack_connect", code: rc, context: "\(source) → \(destination)")
            }
        }
    }

    /// Full names of the ports of `type` that send (`.output`) or receive
    /// (`.input`); `physical` keeps the hardware's (`system:…`) only.
    public func ports(_ type: JACKPort.PortType, _ direction: JACKPort.Direction, physical: Bool = false) -> [String] {
        var flags = direction == .output ? JackPortIsOutput.rawValue : JackPortIsInput.rawValue
        if physical { flags |= JackPortIsPhysical.rawValue }
        return (try? whileServerLives { () -> [String] in
            guard let list = jack_get_ports(client, nil, type.cName, UInt(flags)) else { return [] }
            defer { jack_free(UnsafeMutableRawPointer(mutating: list)) }
            var names: [String] = []
            var i = 0
            while let name = list[i] { names.append(String(cString: name)); i += 1 }
            return names
        }) ?? []
    }

    /// The output ports of `type` whose full name contains `spec` (any case),
    /// or is it. Throws `.noMatchingPort` listing the candidates when none does.
    public func sources(matching spec: String, _ type: JACKPort.PortType) throws(JACKError) -> [String] {
        try others(matching: spec, type, .output)
    }

    /// The input ports of `type` (other clients') whose full name contains `spec`
    /// (any case), or is it: where `--clock-out` and a zone's port connect with `-a jack`.
    public func destinations(matching spec: String, _ type: JACKPort.PortType) throws(JACKError) -> [String] {
        try others(matching: spec, type, .input)
    }

    private func others(matching spec: String, _ type: JACKPort.PortType, _ direction: JACKPort.Direction) throws(JACKError) -> [String] {
        let all = ports(type, direction).filter { !$0.hasPrefix(name + ":") }
        if all.contains(spec) { return [spec] }
        let found = all.filter { $0.lowercased().contains(spec.lowercased()) }
        guard !found.isEmpty else { throw JACKError(kind: .noMatchingPort(spec: spec, candidates: all), function: "jack_get_ports", code: 0) }
        return found
    }
}

/// A port of a `JACKClient`, valid while its client is open (closing the
/// client unregisters it). Its buffers are the process thread's, for one cycle.
public struct JACKPort: @unchecked Sendable {
    public enum PortType: Sendable {
        case audio, midi
        var cName: UnsafePointer<CChar> { self == .audio ? carillon_jack_audio_type() : carillon_jack_midi_type() }
    }
    public enum Direction: Sendable { case input, output }

    private let port: OpaquePointer
    init(_ port: OpaquePointer) { self.port = port }

    /// `client:port`.
    public var fullName: String { String(cString: jack_port_name(port)) }
    /// How many ports this one is connected to now.
    public var connectionCount: Int { Int(jack_port_connected(port)) }

    /// Process thread: this cycle's audio samples (`frames` mono floats).
    @inline(__always)
    public func audioBuffer(frames: Int) -> UnsafeMutablePointer<Float> {
        jack_port_get_buffer(port, jack_nframes_t(frames)).assumingMemoryBound(to: Float.self)
    }

    /// Process thread: this cycle's MIDI events (an input port).
    @inline(__always)
    public func midiEvents(frames: Int) -> JACKMIDIInput { JACKMIDIInput(buffer: jack_port_get_buffer(port, jack_nframes_t(frames))) }

    /// Process thread: this cycle's MIDI buffer of an output port, cleared.
    @inline(__always)
    public func midiOutput(frames: Int) -> JACKMIDIOutput {
        let buffer = jack_port_get_buffer(port, jack_nframes_t(frames))
        jack_midi_clear_buffer(buffer)
        return JACKMIDIOutput(buffer: buffer)
    }
}

/// One cycle's MIDI events of an input port, in time order. Process thread only.
public struct JACKMIDIInput {
    let buffer: UnsafeMutableRawPointer?
    public var count: Int { Int(jack_midi_get_event_count(buffer)) }

    /// Event `index`: its frame offset in the cycle and its bytes (one whole
    /// message; valid for this cycle). Nil if libjack refuses the index.
    @inline(__always)
    public func event(_ index: Int) -> (offset: Int, bytes: UnsafeBufferPointer<UInt8>)? {
        var event = jack_midi_event_t()
        guard jack_midi_event_get(&event, buffer, UInt32(index)) == 0 else { return nil }
        return (Int(event.time), UnsafeBufferPointer(start: event.buffer, count: event.size))
    }
}

/// One cycle's MIDI buffer of an output port. Process thread only.
public struct JACKMIDIOutput {
    let buffer: UnsafeMutableRawPointer?

    /// Writes one message at `offset` frames into the cycle (offsets in
    /// non-decreasing order). False when the buffer is full or the offset is out of the cycle.
    @inline(__always) @discardableResult
    public func write(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Bool {
        jack_midi_event_write(buffer, jack_nframes_t(offset), bytes.baseAddress, bytes.count) == 0
    }
}
