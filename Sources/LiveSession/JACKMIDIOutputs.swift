import Engine
import Hosting
import JACK
import MIDI
import Threads
import Synchronization
import Sync

/// `-a jack`: Carillon's JACK MIDI output ports — `clock` for `--clock-out`,
/// and one per zone destination name (`carillon:Hardware Synth`) — each
/// connected to the JACK MIDI inputs whose name contains what was asked.
///
/// JACK MIDI is written in the process callback only, so every message goes
/// through a ring of its port: the zones push from the input thread (under
/// `KeyboardRouting`'s lock: one producer at a time), the clock from the
/// process thread itself; `writeCycle` (process thread) writes each port's
/// due messages at their offset in the cycle. A port is registered off the
/// process thread into a fixed table published by a count, so the process
/// thread never sees a half-made one.
final class JACKMIDIOutputs: @unchecked Sendable {
    static let capacity = 16
    /// The client on the server now (`rebind` moves the ports to another after a restart).
    private let clientBox: Mutex<JACKClient>
    private var client: JACKClient { clientBox.withLock { $0 } }
    private let ports: UnsafeMutablePointer<Port?>
    /// `ports` as the process thread reads them, unretained (a strong load of a stored
    /// reference is a swift_retain and a swift_release): a port, once made, stays in `ports`.
    private let processPorts: UnsafeMutablePointer<Unmanaged<Port>>
    private let count = Atomic<Int>(0)
    /// Messages JACK did not take (a full port buffer).
    let dropped = Atomic<Int>(0)
    /// `--clock-out`'s port (set before the client is activated), nil without it.
    var clockPort: Port? { didSet { processClockPort = clockPort.map { Unmanaged.passUnretained($0) } } }
    /// `clockPort` as the process thread reads it (unretained, as `processPorts`).
    private var processClockPort: Unmanaged<Port>?

    final class Port: @unchecked Sendable {
        let name: String
        /// Replaced by `rebind` only while no process callback runs.
        var port: JACKPort
        let ring = FrameMessageRing(capacity: 1024)
        init(name: String, port: JACKPort) { self.name = name; self.port = port }
    }

    init(client: JACKClient) {
        clientBox = Mutex(client)
        ports = .allocate(capacity: Self.capacity)
        ports.initialize(repeating: nil, count: Self.capacity)
        processPorts = .allocate(capacity: Self.capacity)
        Self.warmUp()
    }

    /// Swift makes some type metadata (optionals of our structs) on its first use, under a
    /// lock of the runtime: it is made here, off the process thread (rtcheck counted 3 locks without).
    private static func warmUp() {
        let ring = FrameMessageRing(capacity: 1024)
        _ = ring.push(FrameMessage(frame: 0, bytes: ClockEvent(frame: 0, kind: .clock).message.shortWireForm ?? ShortMIDIBytes(0xF8)))
        if let m = ring.peek() { ring.pop(); _ = m.bytes.withBytes { !$0.isEmpty } }
        let tap = ClockOutTap.Ring(capacity: 1024)
        _ = tap.push(ClockEvent(frame: 0, kind: .clock))
        if tap.peek() != nil { tap.pop() }
    }

    deinit {
        ports.deinitialize(count: Self.capacity)
        ports.deallocate()
        processPorts.deallocate()
    }

    /// The port named `name`, registered on first use (not on the process thread). One
    /// thread at a time registers (start, a reload: under the router's lock or before the output runs).
    func port(named name: String) throws(JACKError) -> Port {
        let n = count.load(ordering: .acquiring)
        for i in 0..<n where ports[i]!.name == name { return ports[i]! }
        guard n < Self.capacity else {
            throw JACKError(kind: .portRegistration(port: "\(client.name):\(name) (at most \(Self.capacity) MIDI outputs)"),
                            function: "jack_port_register", code: -1)
        }
        let p = Port(name: name, port: try client.register(name, .midi, .output))
        ports[n] = p
        (processPorts + n).initialize(to: .passUnretained(p))
        count.store(n + 1, ordering: .releasing)
        return p
    }

    /// Connects `port` to every JACK MIDI input whose name contains `spec` (any case);
    /// the names found. JACK connects only an active client's ports: before
    /// activation they are kept for `connectDeferred`.
    func connect(_ port: Port, to spec: String) throws(JACKError) -> [String] {
        let client = self.client
        let found = try client.destinations(matching: spec, .midi)
        asked.withLock { $0.append((port.name, spec)) }
        if client.isActive {
            for d in found { try client.connect(port.port.fullName, to: d) }
        } else {
            deferred.withLock { $0 += found.map { (port.port.fullName, $0) } }
        }
        return found
    }

    /// After activation: the connections asked for before it.
    func connectDeferred() throws(JACKError) {
        let pairs = deferred.withLock { d in defer { d = [] }; return d }
        let client = self.client
        for (source, destination) in pairs { try client.connect(source, to: destination) }
    }
    private let deferred = Mutex<[(String, String)]>([])
    /// Every (port name, destination spec) connected so far: made again after a server restart.
    private let asked = Mutex<[(String, String)]>([])
    /// What `reconnectAfterRestart` still has to make (the other clients come back in their own time).
    private let lostWithServer = Mutex<[(String, String)]>([])

    /// After the server went away (no process callback runs): each port registered
    /// again, under its name, on `fresh`, which is not active yet. Its connections
    /// are made again as their destinations appear (`reconnectAfterRestart`).
    func rebind(to fresh: JACKClient) throws(JACKError) {
        let n = count.load(ordering: .acquiring)
        for i in 0..<n { ports[i]!.port = try fresh.register(ports[i]!.name, .midi, .output) }
        clientBox.withLock { $0 = fresh }
        let pairs = asked.withLock { $0 }
        lostWithServer.withLock { $0 = pairs }
    }

    /// Off the process thread: the connections lost with the server, to the destinations there now.
    func reconnectAfterRestart() {
        let lost = lostWithServer.withLock { $0 }
        let client = self.client
        guard !lost.isEmpty, client.isActive else { return }
        let n = count.load(ordering: .acquiring)
        var left: [(String, String)] = []
        for (name, spec) in lost {
            guard let port = (0..<n).lazy.compactMap({ self.ports[$0] }).first(where: { $0.name == name }),
                  let found = try? client.destinations(matching: spec, .midi), !found.isEmpty else { left.append((name, spec)); continue }
            for d in found { try? client.connect(port.port.fullName, to: d) }
        }
        lostWithServer.withLock { $0 = left }
    }

    /// "JACK MIDI out: 2 messages not taken by JACK (a full port buffer)", nil when all went.
    var summary: String? {
        let n = dropped.load(ordering: .relaxed)
        return n == 0 ? nil : "JACK MIDI out: \(n) message\(n == 1 ? "" : "s") not taken by JACK (a full port buffer)"
    }

    /// Process thread: `--clock-out`'s events of the block just rendered, to the clock port's ring.
    @inline(__always)
    func takeClock(from tap: ClockOutTap) {
        processClockPort?._withUnsafeGuaranteedRef { port in
            while let e = tap.ring.peek() {
                tap.ring.pop()
                if let bytes = e.message.shortWireForm, !port.ring.push(FrameMessage(frame: e.frame, bytes: bytes)) {
                    tap.dropped.add(1, ordering: .relaxed)
                }
            }
        }
    }

    /// Process thread: each port's buffer cleared (JACK wants it every cycle), and the
    /// messages due before the cycle's end written at their offsets (a late one at the
    /// cycle's start; offsets never go back).
    @inline(__always)
    func writeCycle(start: UInt64, frames: Int) {
        let n = count.load(ordering: .acquiring)
        let end = start &+ UInt64(frames)
        for i in 0..<n {
            processPorts[i]._withUnsafeGuaranteedRef { p in
                let out = p.port.midiOutput(frames: frames)
                var last = 0
                while let m = p.ring.peek(), m.frame < end {
                    p.ring.pop()
                    last = max(last, m.frame > start ? Int(m.frame &- start) : 0)
                    if !m.bytes.withBytes({ out.write($0, at: last) }) { dropped.add(1, ordering: .relaxed) }
                }
            }
        }
    }
}

/// A message and the frame it is due at (0: as soon as possible).
struct FrameMessage: BitwiseCopyable {
    var frame: UInt64
    var bytes: ShortMIDIBytes
}

/// A port's ring: the producer never waits (a full ring returns false), the consumer is the process thread.
typealias FrameMessageRing = MessageRing<FrameMessage>

/// The zones' external ports with `-a jack`: a JACK MIDI output per
/// destination name, connected to the JACK MIDI inputs whose name contains it;
/// a name that matches none yet is connected when such an input appears
/// (`connectWaiting`, from the control loop). A message goes out at the start
/// of the next cycle.
final class JACKZoneOutput: ExternalMIDIOutput, @unchecked Sendable {
    private let outputs: JACKMIDIOutputs
    private let log: HostLog
    /// Written by `prepare`, read by `send`: both under the router's lock.
    private var ports: [String: JACKMIDIOutputs.Port] = [:]
    private let unsent = Atomic<Int>(0)
    /// Names no JACK MIDI input matched yet, with our port.
    private let waiting = Mutex<[String: JACKMIDIOutputs.Port]>([:])
    /// When `connectWaiting` last looked (monotonic ns): JACK's port list is read every `retryInterval` at most.
    private let lastLook = Atomic<UInt64>(0)
    static let retryInterval: UInt64 = 250_000_000

    init(outputs: JACKMIDIOutputs, log: HostLog) { self.outputs = outputs; self.log = log }

    func prepare(portNames names: [String]) {
        for name in names where ports[name] == nil {
            do {
                let port = try outputs.port(named: name)
                ports[name] = port
                do {
                    let found = try outputs.connect(port, to: name)
                    log.append("zones: \(port.port.fullName) → \(found.joined(separator: ", "))")
                } catch {
                    waiting.withLock { $0[name] = port }
                    log.append("zones: no JACK MIDI input matches \"\(name)\" yet (\(error)): \(port.port.fullName) is connected when one appears")
                }
            } catch {
                log.append("zones: no JACK MIDI output for \"\(name)\": \(error)")
            }
        }
    }

    /// Connects each waiting name to the JACK MIDI inputs that match it now. Off
    /// the process thread (live's control loop, at every poll: it looks at JACK's
    /// ports every quarter second at most).
    func connectWaiting() {
        let now = OutputClock.now()
        guard now &- lastLook.load(ordering: .relaxed) >= Self.retryInterval else { return }
        lastLook.store(now, ordering: .relaxed)
        let due = waiting.withLock { $0 }
        for (name, port) in due.sorted(by: { $0.key < $1.key }) {
            guard let found = try? outputs.connect(port, to: name), !found.isEmpty else { continue }
            waiting.withLock { _ = $0.removeValue(forKey: name) }
            log.append("zones: \(port.port.fullName) → \(found.joined(separator: ", ")) (appeared after the start)")
        }
    }

    func send(_ message: MIDIMessage, portName name: String) {
        guard let port = ports[name] else { return }
        guard let bytes = message.shortWireForm, port.ring.push(FrameMessage(frame: 0, bytes: bytes)) else {
            unsent.add(1, ordering: .relaxed)
            return
        }
    }

    /// "zones: 3 messages to JACK MIDI outputs not sent …", nil when all went.
    var summary: String? {
        let n = unsent.load(ordering: .relaxed)
        guard n > 0 else { return nil }
        return "zones: \(n) message\(n == 1 ? "" : "s") to JACK MIDI outputs not sent (SysEx, or a full ring: a cycle missed)"
    }
}
