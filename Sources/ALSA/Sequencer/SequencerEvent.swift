import MIDI

/// What the input thread of a `SequencerClient` reports, in arrival order.
public enum SequencerEvent: Equatable, Sendable {
    /// A MIDI message a source sent to our input port. `arrival`: when it
    /// reached the port, on the monotonic clock (`monotonicNanoseconds`), from
    /// the kernel's stamp; nil when the event came unstamped (the client could
    /// not set up its arrival queue, or the message was fed in directly).
    case message(MIDIMessage, source: SeqAddress, arrival: UInt64? = nil)
    /// A note-off or sustain-off (CC 64 = 0) Carillon made up to end what a
    /// source that went away was holding. Route it exactly like `.message`.
    case release(MIDIMessage, source: SeqAddress)
    /// A source was subscribed to our input port (by us or anyone else).
    case subscribed(SeqAddress)
    /// A source was unsubscribed from our input port, or its port or client went away.
    case unsubscribed(SeqAddress)
    /// A port appeared after start, and the autoconnect policy connected it.
    case autoconnected(PortInfo)
    /// A port appeared after start that the autoconnect policy did not take.
    case portAppeared(PortInfo)
    /// Autoconnect tried and failed (the port went away first, or is exclusive).
    case autoconnectFailed(PortInfo, ALSAError)
    /// The kernel dropped input events: our input buffer overran.
    case inputOverrun

    /// The message and its source for `.message` and `.release`: what a router forwards.
    public var midi: (message: MIDIMessage, source: SeqAddress)? {
        switch self {
        case .message(let m, let s, _), .release(let m, let s): (m, s)
        default: nil
        }
    }

    /// When a `.message` reached our port (monotonic ns), if the kernel stamped it.
    public var arrival: UInt64? {
        if case .message(_, _, let arrival) = self { arrival } else { nil }
    }
}

/// Which sources `--autoconnect` connects, now and when they appear later.
public struct AutoconnectPolicy: Sendable {
    public var accepts: @Sendable (PortInfo) -> Bool

    public init(accepts: @escaping @Sendable (PortInfo) -> Bool) { self.accepts = accepts }

    /// Every readable source of another client, except the system client and Midi Through.
    public static let allSources = AutoconnectPolicy { info in
        info.isSource && info.address.client != 0 && !info.clientName.lowercased().hasPrefix("midi through")
    }

    /// Hardware-like sources only (cards, VirMIDI): not applications.
    public static let hardwareSources = AutoconnectPolicy { info in
        allSources.accepts(info) && info.isHardware
    }

    /// Sources whose client or port name contains `pattern`, ignoring case (a mapping file's port pattern).
    public static func named(_ pattern: String) -> AutoconnectPolicy {
        let needle = pattern.lowercased()
        return AutoconnectPolicy { info in info.isSource && info.searchableName.lowercased().contains(needle) }
    }
}
