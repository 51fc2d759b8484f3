import ALSA
import Controls
import MIDI
import Threads
import Synchronization

/// Feedback to controllers: the sequencer client's output port (`carillon:1`,
/// named `feedback`) connected to the controllers, and the hub's feedback
/// messages sent out of it at each control tick (see `ControlHub.observeFeedback`).
/// Others may connect to the port too (`aconnect carillon:1 …`).
final class ControllerFeedback: Sendable {
    private let client: SequencerClient
    private let log: HostLog
    private let failures = Atomic<Int>(0)

    /// Messages the sequencer refused (a destination that does not read); logged once.
    var failedSends: Int { failures.load(ordering: .relaxed) }

    /// Creates the port and connects it: to every destination `explicit`
    /// names (`--feedback`; no match is an error), else to those the
    /// mapping's `port:` pattern names (none is only logged: the controller
    /// may be unplugged). Returns the destinations connected.
    init(client: SequencerClient, hub: ControlHub, explicit: [String], mappingPort: String?, log: HostLog)
        throws(ALSAError)
    {
        self.client = client
        self.log = log
        let port = try client.makeOutputPort(name: "feedback")
        var connected: [PortInfo] = []
        for spec in explicit { connected += try client.connectOutput(destination: spec) }
        for pattern in Self.destinations(explicit: explicit, mappingPort: mappingPort) where explicit.isEmpty {
            do { connected += try client.connectOutput(destination: pattern) } catch {
                log.append("feedback: no destination matches the mapping's port '\(pattern)' (\(error))")
            }
        }
        let from = SeqAddress(client: client.clientID, port: Int(port))
        for d in connected { log.append("feedback from \(from) to \(d.address) '\(d.clientName)'") }
        hub.observeFeedback { [self] messages in self.send(messages) }
    }

    /// What the feedback port is connected to: the `--feedback` destinations,
    /// or when there are none the mapping's `port:` pattern (if it has one).
    static func destinations(explicit: [String], mappingPort: String?) -> [String] {
        explicit.isEmpty ? mappingPort.map { [$0] } ?? [] : explicit
    }

    /// On the control thread, at its tick.
    private func send(_ messages: [MIDIMessage]) {
        do { try client.send(messages) } catch {
            if failures.add(1, ordering: .relaxed).newValue == 1 { log.append("feedback not sent: \(error)") }
        }
    }
}
