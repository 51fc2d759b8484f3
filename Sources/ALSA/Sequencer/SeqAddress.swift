import CALSA

/// A sequencer port address, `client:port` (e.g. `24:0`).
public struct SeqAddress: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var client: Int
    public var port: Int

    public init(client: Int, port: Int) { self.client = client; self.port = port }

    /// Parses `client:port`; nil for anything else (a name is matched by `SequencerClient.resolve`).
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let c = Int(parts[0]), let p = Int(parts[1]),
            (0...255).contains(c), (0...255).contains(p)
        else { return nil }
        self.init(client: c, port: p)
    }

    init(_ addr: snd_seq_addr_t) { self.init(client: Int(addr.client), port: Int(addr.port)) }

    var cValue: snd_seq_addr_t { snd_seq_addr_t(client: UInt8(client), port: UInt8(port)) }

    public var description: String { "\(client):\(port)" }

    public static func < (a: Self, b: Self) -> Bool { (a.client, a.port) < (b.client, b.port) }

    /// Client 0 port 1: the system announce port, source of CLIENT/PORT START/EXIT events.
    public static let systemAnnounce = SeqAddress(client: Int(SND_SEQ_CLIENT_SYSTEM), port: Int(SND_SEQ_PORT_SYSTEM_ANNOUNCE))
}

/// One sequencer port as `aconnect -l` shows it.
public struct PortInfo: Hashable, Sendable, CustomStringConvertible {
    public var address: SeqAddress
    public var clientName: String
    public var portName: String
    public var capabilities: Capabilities
    public var type: PortType
    /// True when the owning client is a kernel client (a sound card, VirMIDI, Midi Through).
    public var isKernelClient: Bool

    public init(
        address: SeqAddress, clientName: String, portName: String,
        capabilities: Capabilities, type: PortType, isKernelClient: Bool
    ) {
        self.address = address; self.clientName = clientName; self.portName = portName
        self.capabilities = capabilities; self.type = type; self.isKernelClient = isKernelClient
    }

    /// Others can subscribe to it to receive what it sends: a MIDI source.
    public var isSource: Bool {
        capabilities.contains([.read, .subscribeRead]) && !capabilities.contains(.noExport)
    }
    /// Others can subscribe it to send to it.
    public var isDestination: Bool {
        capabilities.contains([.write, .subscribeWrite]) && !capabilities.contains(.noExport)
    }
    /// Hardware or a kernel driver (what `--autoconnect` means by "a keyboard"), not an application.
    public var isHardware: Bool {
        type.contains(.hardware) || type.contains(.port) || (isKernelClient && !type.contains(.application))
    }

    /// `24:0 'Virtual Raw MIDI 2-0' 'VirMIDI 2-0'`.
    public var description: String { "\(address) '\(clientName)' '\(portName)'" }

    /// Text used to match a `--connect` name: client and port names.
    public var searchableName: String { "\(clientName):\(portName)" }

    /// Port capabilities (`SND_SEQ_PORT_CAP_*`).
    public struct Capabilities: OptionSet, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let read = Self(rawValue: UInt32(SND_SEQ_PORT_CAP_READ))
        public static let write = Self(rawValue: UInt32(SND_SEQ_PORT_CAP_WRITE))
        public static let duplex = Self(rawValue: UInt32(SND_SEQ_PORT_CAP_DUPLEX))
        public static let subscribeRead = Self(rawValue: UInt32(SND_SEQ_PORT_CAP_SUBS_READ))
        public static let subscribeWrite = Self(rawValue: UInt32(SND_SEQ_PORT_CAP_SUBS_WRITE))
        public static let noExport = Self(rawValue: UInt32(SND_SEQ_PORT_CAP_NO_EXPORT))

        /// `r`, `w`, `R` (others may subscribe to read), `W`, `x` (not exported): e.g. `rwRW`.
        public var description: String {
            var s = ""
            if contains(.read) { s += "r" }
            if contains(.write) { s += "w" }
            if contains(.subscribeRead) { s += "R" }
            if contains(.subscribeWrite) { s += "W" }
            if contains(.noExport) { s += "x" }
            return s.isEmpty ? "-" : s
        }
    }

    /// Port type bits (`SND_SEQ_PORT_TYPE_*`).
    public struct PortType: OptionSet, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let specific = Self(rawValue: UInt32(SND_SEQ_PORT_TYPE_SPECIFIC))
        public static let midiGeneric = Self(rawValue: UInt32(SND_SEQ_PORT_TYPE_MIDI_GENERIC))
        public static let synth = Self(rawValue: UInt32(SND_SEQ_PORT_TYPE_SYNTH))
        public static let hardware = Self(rawValue: UInt32(SND_SEQ_PORT_TYPE_HARDWARE))
        public static let software = Self(rawValue: UInt32(SND_SEQ_PORT_TYPE_SOFTWARE))
        public static let port = Self(rawValue: UInt32(SND_SEQ_PORT_TYPE_PORT))
        public static let application = Self(rawValue: UInt32(SND_SEQ_PORT_TYPE_APPLICATION))

        public var description: String {
            var parts: [String] = []
            if contains(.hardware) { parts.append("hardware") }
            if contains(.port) { parts.append("port") }
            if contains(.software) { parts.append("software") }
            if contains(.synth) { parts.append("synth") }
            if contains(.application) { parts.append("application") }
            if contains(.midiGeneric) { parts.append("midi") }
            return parts.isEmpty ? "-" : parts.joined(separator: ",")
        }
    }
}
