import CALSA
import Glibc
import MIDI

/// A readable output port of a `SequencerClient` whose messages the kernel
/// delivers at a given time of the monotonic clock: scheduled on the
/// client's arrival queue (real time, absolute), so when they leave does not
/// depend on when the sending thread ran. MIDI clock out goes through one.
///
/// The queue's real time is `monotonic − offset`, the offset the input
/// thread keeps estimating (`QueueTimeOffset`); the client must be started.
/// Without arrival stamps (no queue) messages go out at once.
///
/// Threads: `connect` on the control thread; `send` from one sending thread
/// (fixed-size events written straight to the kernel: no buffer shared with
/// the client's other sends).
public final class ScheduledOutput: @unchecked Sendable {
    public let address: SeqAddress
    public let name: String
    private let client: SequencerClient
    private let port: Int32

    /// Creates the port `name` on `client` (readable, subscribable).
    public init(client: SequencerClient, name: String) throws(ALSAError) {
        self.client = client
        self.name = name
        port = try check("snd_seq_create_simple_port", snd_seq_create_simple_port(client.handle.seq, name,
            UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ),
            UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION)), context: name)
        address = SeqAddress(client: client.clientID, port: Int(port))
    }

    /// Subscribes the destinations `spec` names (`client:port` or a name
    /// substring, see `SequencerClient.resolve(destination:)`) to this port.
    @discardableResult
    public func connect(destination spec: String) throws(ALSAError) -> [PortInfo] {
        let found = try client.resolve(destination: spec)
        for d in found {
            let rc = snd_seq_connect_to(client.handle.seq, port, Int32(d.address.client), Int32(d.address.port))
            if rc == -EBUSY { continue }
            try check("snd_seq_connect_to", rc, context: "\(d.address)")
        }
        return found
    }

    /// How many ports are subscribed to this port.
    public func subscriberCount() throws(ALSAError) -> Int { try client.handle.subscriberCount(of: address) }

    /// Whether sends are timed (the client stamps arrivals and has an offset estimate).
    public var isTimed: Bool { client.arrivals.map { $0.publishedOffset.load(ordering: .relaxed) != .min } ?? false }

    /// Sends `message` to every subscriber at monotonic time `nanos` (at once
    /// when that has passed or the output is not timed).
    public func send(_ message: MIDIMessage, at nanos: UInt64) throws(ALSAError) {
        let arrivals = client.arrivals
        let offset = arrivals?.publishedOffset.load(ordering: .relaxed) ?? .min
        let rc = message.withSeqEvent { ev -> Int32 in
            carillon_seq_ev_set_source(&ev, UInt8(port))
            carillon_seq_ev_set_subs(&ev)
            if let arrivals, offset != .min {
                let queueTime = max(0, Int64(bitPattern: nanos) &- offset)
                ev.queue = UInt8(arrivals.queue)
                ev.flags &= ~UInt8(SND_SEQ_TIME_STAMP_MASK | SND_SEQ_TIME_MODE_MASK)
                ev.flags |= UInt8(SND_SEQ_TIME_STAMP_REAL | SND_SEQ_TIME_MODE_ABS)
                ev.time.time = snd_seq_real_time_t(tv_sec: UInt32(queueTime / 1_000_000_000),
                                                   tv_nsec: UInt32(queueTime % 1_000_000_000))
            } else {
                carillon_seq_ev_set_direct(&ev)
            }
            return snd_seq_event_output_direct(client.handle.seq, &ev)
        }
        try check("snd_seq_event_output_direct", rc, context: name)
    }
}
