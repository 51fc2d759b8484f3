import Foundation
import MIDI
import Rig

/// One zone as a view shows it — the web page's keyboard strip, `live`'s
/// terminal view: plain numbers and short texts, so a front end needs
/// neither `Rig` nor the mapping's model. Made from a `Zone` off any real-time
/// path (it allocates).
public struct ZoneSummary: Hashable, Sendable {
    /// Where the zone's messages go: Carillon's channel, or a channel of an external port.
    public struct Destination: Hashable, Sendable {
        /// The external port's name (`to: { port: … }`); nil: one of Carillon's channels.
        public var port: String?
        /// 1…16.
        public var channel: Int
        /// `ch 2`, `Hardware Synth ch 1`.
        public var short: String { (port.map { $0 + " " } ?? "") + "ch \(channel)" }
        /// `channel 2`, `port Hardware Synth channel 1` (what a screen reader says).
        public var spoken: String { (port.map { "port \($0) " } ?? "") + "channel \(channel)" }

        public init(port: String?, channel: Int) { self.port = port; self.channel = channel }
    }

    public var name: String
    /// The key range, 0…127 (C4 = 60).
    public var low: Int
    public var high: Int
    /// The velocity range when it is not all of 1…127.
    public var velocities: ClosedRange<Int>?
    public var destinations: [Destination]
    /// Semitones (octaves folded in).
    public var transpose: Int
    /// The velocity shape in short (`×0.6+10`, `=100`, `s-curve 2`); nil: unchanged.
    public var velocity: String?
    /// What else narrows what the zone takes besides keys and velocities, in
    /// short (`from Upper Manual`, `in ch 2,3`, `notes,cc only`); empty for most.
    public var filters: [String]
    /// The zone's row in a strip where layered zones are stacked: the first row
    /// (0 up) where no zone listed before it covers any of its keys.
    public var row: Int

    /// `C-1..B2`, or one key's name (`C4`).
    public var keys: String {
        low == high ? Self.noteName(low) : "\(Self.noteName(low))..\(Self.noteName(high))"
    }

    /// What the zone takes besides its keys, in short: `vel 1..63`, then the filters; empty for most.
    public var takes: String {
        ((velocities.map { ["vel \($0.lowerBound)..\($0.upperBound)"] } ?? []) + filters).joined(separator: " ")
    }

    /// What it does, in short: destinations, transpose, velocity shape —
    /// `ch 2 +12`, `ch 3 vel ×0.6+10`, `Hardware Synth ch 1`, `ch 5 + ch 6`.
    public var short: String {
        var parts = [destinations.map(\.short).joined(separator: " + ")]
        if transpose != 0 { parts.append(Self.signed(transpose)) }
        if let velocity { parts.append("vel " + velocity) }
        return parts.joined(separator: " ")
    }

    /// One line: `Bass C-1..B2 → ch 2 +12`, `Soft C-1..G9 vel 1..79 → ch 5`.
    public var line: String { "\(name) \(keys)" + (takes.isEmpty ? "" : " " + takes) + " → " + short }

    /// A sentence for a screen reader: `Bass: keys C-1 to B2, to channel 2, transposed +12 semitones`.
    public var spoken: String {
        var parts = ["\(name): keys " + (low == high ? keys : keys.replacingOccurrences(of: "..", with: " to "))]
        parts.append("to " + destinations.map(\.spoken).joined(separator: " and "))
        if transpose != 0 { parts.append("transposed \(Self.signed(transpose)) semitones") }
        if let velocities { parts.append("velocities \(velocities.lowerBound) to \(velocities.upperBound)") }
        if let velocity { parts.append("velocity \(velocity)") }
        parts += filters
        return parts.joined(separator: ", ")
    }

    public init(name: String, low: Int, high: Int, velocities: ClosedRange<Int>? = nil, destinations: [Destination],
                transpose: Int = 0, velocity: String? = nil, filters: [String] = [], row: Int = 0) {
        self.name = name; self.low = low; self.high = high; self.velocities = velocities
        self.destinations = destinations; self.transpose = transpose; self.velocity = velocity
        self.filters = filters; self.row = row
    }

    /// A list of zones as a strip draws them: in their order, each on the
    /// first row free over its keys (a split shares a row; a layer stacks).
    public static func list(_ zones: [Zone]) -> [ZoneSummary] {
        var rows: [[ClosedRange<Int>]] = []
        return zones.map { zone in
            var s = ZoneSummary(zone)
            let keys = s.low...s.high
            let row = rows.firstIndex { taken in !taken.contains { $0.overlaps(keys) } } ?? rows.count
            if row == rows.count { rows.append([]) }
            rows[row].append(keys)
            s.row = row
            return s
        }
    }

    /// One zone on its own (row 0).
    public init(_ zone: Zone) {
        name = zone.name
        low = zone.keys.lowerBound.intValue
        high = zone.keys.upperBound.intValue
        velocities = zone.velocities == 1...127 || zone.velocities == 0...127
            ? nil : zone.velocities.lowerBound.intValue...zone.velocities.upperBound.intValue
        destinations = zone.destinations.map { d in
            switch d {
            case .channel(let c): Destination(port: nil, channel: c.intValue + 1)
            case .port(let name, let c): Destination(port: name, channel: c.intValue + 1)
            }
        }
        transpose = zone.transpose
        switch zone.velocity {
        case .unchanged: velocity = nil
        case .fixed(let v): velocity = "=\(v.intValue)"
        case .linear(let scale, let offset):
            velocity = "×" + Self.number(scale) + (offset == 0 ? "" : (offset < 0 ? "-" : "+") + Self.number(abs(offset)))
        case .curve(let c): velocity = c.name.hasPrefix("table") ? "table" : c.name
        }
        var filters: [String] = []
        switch zone.source {
        case .name(let n): filters.append("from \(n)")
        case .id(let id): filters.append("from port \(id)")
        case nil: break
        }
        if let channels = zone.channels {
            filters.append("in ch " + channels.map { $0.intValue + 1 }.sorted().map(String.init).joined(separator: ","))
        }
        if zone.kinds != .all {
            filters.append(MessageKinds.names.filter { zone.kinds.contains($0.1) }.map(\.0).joined(separator: ",") + " only")
        }
        self.filters = filters
        row = 0
    }

    /// C4 = 60 (`NoteName`); a number outside 0…127 is clamped.
    static func noteName(_ n: Int) -> String { NoteName.name(of: UInt7(min(max(n, 0), 127))) }

    static func signed(_ n: Int) -> String { n > 0 ? "+\(n)" : "\(n)" }

    static func number(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e9 ? String(Int(v)) : String(format: "%g", v)
    }
}
