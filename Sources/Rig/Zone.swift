import MIDI

/// Identifies an input port for the router: whatever number the caller gives a
/// connected source (ALSA `client << 8 | port`, a JACK port's index …).
public typealias SourceID = UInt32

/// One zone of a keyboard rig: which messages it takes (match) and what it makes
/// of them (actions). Several zones may take the same message: a layer.
/// Plain data; `ZoneSet` compiles a list of zones into the router's tables.
public struct Zone: Hashable, Sendable {
    public var name: String

    // MARK: Match
    /// The input port, by name or ID; nil takes every source.
    public var source: SourceMatch?
    /// Input channels (0-based `Channel`); nil takes every channel.
    public var channels: Set<Channel>?
    public var keys: ClosedRange<UInt7> = 0...127
    public var velocities: ClosedRange<UInt7> = 1...127
    public var kinds: MessageKinds = .all

    // MARK: Actions
    /// Where the zone's messages go (at least one).
    public var destinations: [Destination]
    /// Semitones added to every key (octaves already folded in: 12 per octave).
    public var transpose: Int = 0
    public var velocity: VelocityShape = .unchanged
    /// CC renumbering: `from → to`, or `from → nil` to drop that controller.
    public var controllers: [UInt7: UInt7?] = [:]
    /// Pitch-bend range in semitones (and cents), sent as RPN 0 to every destination when the zone set is installed.
    public var bendRange: BendRange?
    /// LV2 MIDI plugins (URIs) the zone's messages pass through; kept in the model, hosted by the lead's code later.
    public var midiFX: [String] = []

    public init(name: String, destinations: [Destination]) {
        self.name = name
        self.destinations = destinations
    }

    public enum SourceMatch: Hashable, Sendable {
        case name(String)
        case id(SourceID)
    }

    /// An internal Carillon channel (0-based), or a channel of an external output port, by name.
    public enum Destination: Hashable, Sendable {
        case channel(Channel)
        case port(String, channel: Channel)
    }

    public struct BendRange: Hashable, Sendable {
        public var semitones: UInt7
        public var cents: UInt7
        public init(semitones: UInt7, cents: UInt7 = 0) { self.semitones = semitones; self.cents = cents }
    }

    /// Does the zone take a message of this kind from this source and channel (keys and velocities aside)?
    public func takesKind(_ kind: MessageKinds) -> Bool { kinds.contains(kind) }
}

/// Which channel messages a zone takes.
public struct MessageKinds: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let notes = MessageKinds(rawValue: 1)
    public static let controllers = MessageKinds(rawValue: 2)
    public static let pitchBend = MessageKinds(rawValue: 4)
    /// Channel pressure and polyphonic key pressure.
    public static let pressure = MessageKinds(rawValue: 8)
    public static let program = MessageKinds(rawValue: 16)
    public static let all: MessageKinds = [.notes, .controllers, .pitchBend, .pressure, .program]
    /// The names mapping files use, in order.
    public static let names: [(String, MessageKinds)] = [
        ("notes", .notes), ("cc", .controllers), ("pitch-bend", .pitchBend), ("pressure", .pressure), ("program", .program),
    ]
}
