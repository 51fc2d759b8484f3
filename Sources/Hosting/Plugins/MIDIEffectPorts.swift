import Engine
import MIDI
import Synchronization

/// What the zones' MIDI effect chains send to external ports (a zone with
/// `midi-fx` and `to: { port: … }`). The chains run on the render thread,
/// where a port's send has no place (ALSA's is a system call; JACK's ring
/// has the input thread as its one producer), so they queue each message here,
/// lock-free, and a thread that may wait sends it on
/// (`KeyboardRouting.sendEffectPortMessages`: live's control loop, every half
/// period). A port name gets its number when a chain is made and keeps it for
/// the session, so what a replaced chain queued still goes where it was meant.
public final class MIDIEffectPorts: @unchecked Sendable {
    /// Port names there is room for (as the router's external ports).
    public static let capacity = 32
    /// Render thread → sender; an event's `frame` is its port's number.
    private let queue: EventQueue
    private let names = Mutex<[String]>([])

    public init(capacity: Int = 4096) { queue = EventQueue(capacity: capacity, sysExCapacity: 16) }

    /// The number of port `name`, given now if it is new; nil when `capacity` names have one. Off the render thread.
    func number(of name: String) -> UInt8? {
        names.withLock { names in
            if let k = names.firstIndex(of: name) { return UInt8(k) }
            guard names.count < Self.capacity else { return nil }
            names.append(name)
            return UInt8(names.count - 1)
        }
    }

    /// Render thread: `message` for port `port`; dropped (and counted) when the queue is full.
    @inline(__always)
    func push(_ message: ChannelMessage, port: UInt8) {
        _ = queue.push(TimedMessage(frame: UInt64(port), message: message))
    }

    /// Messages dropped for a full queue.
    public var dropped: Int { queue.overflowCount }

    /// The one sending thread: every queued message with its port's name, in the order queued.
    func drain(_ send: (MIDIMessage, String) -> Void) {
        guard queue.peek() != nil else { return }
        let names = self.names.withLock { $0 }
        while let event = queue.peek() {
            queue.pop()
            let port = Int(event.frame), m = event.message
            guard port < names.count, let message = MIDIMessage(status: m.status, data1: m.data1, data2: m.data2) else { continue }
            send(message, names[port])
        }
    }
}
