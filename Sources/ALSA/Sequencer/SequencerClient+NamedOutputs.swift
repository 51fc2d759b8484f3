import CALSA
import Glibc
import MIDI

/// Output ports of our own for other gear: a keyboard zone's hardware synth,
/// a MIDI clock's followers. Each is a readable, subscribable port named for
/// what it feeds (`carillon:Hardware Synth`), so `aconnect -l` shows where a
/// zone's notes go, and each is connected to the destinations its spec names
/// (as `--connect` names sources). Unlike `send(_:)`'s feedback port, a port
/// here is one destination's alone: two zones bound for two synths never hear
/// each other's notes.
///
/// Threads: make and connect ports on the control thread; `send(_:from:)`
/// may be called from one other thread (the input thread) while the input
/// loop runs: it writes one event straight to the kernel (no allocation, no
/// lock, no wait beyond the kernel's).
extension SequencerClient {
    /// A new output port of ours named `name`: readable and subscribable.
    public func makeOutputPort(named name: String) throws(ALSAError) -> SeqAddress {
        let port = try check("snd_seq_create_simple_port", snd_seq_create_simple_port(handle.seq, name,
            UInt32(SND_SEQ_PORT_CAP_READ | SND_SEQ_PORT_CAP_SUBS_READ),
            UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC | SND_SEQ_PORT_TYPE_APPLICATION)), context: name)
        return SeqAddress(client: clientID, port: Int(port))
    }

    /// Subscribes the destinations `spec` names (a `client:port` address, or every
    /// destination whose client or port name contains `spec`, ignoring case) to
    /// our port `port`, and returns them. Connecting twice is not an error.
    @discardableResult
    public func connect(_ port: SeqAddress, toDestination spec: String) throws(ALSAError) -> [PortInfo] {
        let found = try resolve(destination: spec)
        for destination in found {
            let rc = snd_seq_connect_to(handle.seq, Int32(port.port), Int32(destination.address.client),
                                        Int32(destination.address.port))
            if rc == -EBUSY { continue }
            try check("snd_seq_connect_to", rc, context: "\(port) → \(destination.address)")
        }
        return found
    }

    /// Sends `message` now from our port `port` to every subscriber of it.
    public func send(_ message: MIDIMessage, from port: SeqAddress) throws(ALSAError) {
        let rc = message.withSeqEvent { ev -> Int32 in
            carillon_seq_ev_set_source(&ev, UInt8(truncatingIfNeeded: port.port))
            carillon_seq_ev_set_subs(&ev)
            carillon_seq_ev_set_direct(&ev)
            return snd_seq_event_output_direct(handle.seq, &ev)
        }
        try check("snd_seq_event_output_direct", rc, context: "\(port)")
    }

    /// How many ports are subscribed to our port `port`.
    public func subscriberCount(of port: SeqAddress) throws(ALSAError) -> Int {
        try handle.subscriberCount(of: port)
    }
}
