import MIDI

/// A list of zones compiled into the router's flat tables. Made anywhere (it
/// allocates), installed on the input thread with `ZoneRouter.install(_:into:)`
/// (which does not). Immutable once installed, except for the port and source
/// resolution the router fills in.
public final class ZoneSet: @unchecked Sendable {
    public let zones: [Zone]

    /// Plain data (no references): copying one costs no retain on the input thread.
    struct Compiled {
        var sourceID: SourceID?      // .id match
        var anySource: Bool
        var sourceMask: UInt64 = 0   // the router's registered sources this zone takes
        var channelMask: UInt16
        var keyLo: UInt8, keyHi: UInt8, velLo: UInt8, velHi: UInt8
        var kinds: UInt8
        var transpose: Int
        var destStart: Int, destCount: Int
        var passesSustain: Bool, passesSostenuto: Bool
    }

    var compiled: [Compiled] = []
    /// Whether any zone takes only some sources (the router then looks the source up).
    /// The router's loops index the tables rather than call generic algorithms on
    /// them: unspecialised (debug) code instantiates their metadata on the heap.
    private(set) var namesSources = false
    /// Per zone: its pitch-bend range, sent when the set is installed.
    private(set) var bendRanges: [Zone.BendRange?] = []
    /// Per zone: the source name a `.name` match resolves (into `Compiled.sourceMask`) when installed or registered.
    var sourceNames: [String?] = []
    /// Per destination: index into `portNames` (-1 = internal, -2 = a MIDI effect chain) and channel.
    var destPort: [Int] = []
    /// Per destination: the MIDI effect chain it is (the caller's number), or -1.
    var destEffect: [Int] = []
    var destChannel: [UInt8] = []
    /// Per destination: the router's slot, filled on install (on the input
    /// thread: a table, so filling it allocates nothing; see `FixedTable`).
    private(set) var destSlot = FixedTable<UInt16>(repeating: 0, count: 0)
    public var portNames: [String] = []
    /// The MIDI effect chains (the caller's numbers) the set's zones go through.
    public private(set) var effectChains: [Int] = []
    /// 128 per zone: velocity in → out.
    var velocityTables: [UInt8] = []
    /// 128 per zone: controller in → out, 255 = dropped.
    var controllerTables: [UInt8] = []

    /// `effects`: per zone (in order; missing entries are nil), the number of
    /// the MIDI effect chain (`midi-fx`) its messages go through: such a
    /// zone's messages, matched and changed, go to that chain
    /// (`RoutedDestination.effect`) on its first destination's channel, and
    /// the chain sends its output to the zone's destinations.
    public init(_ zones: [Zone], effects: [Int?] = []) {
        self.zones = zones
        for (z, zone) in zones.enumerated() {
            var mask: UInt16 = 0
            if let channels = zone.channels { for c in channels { mask |= 1 << UInt16(c.value) } } else { mask = 0xFFFF }
            var passesSustain = true, passesSostenuto = true
            var cc = [UInt8](0..<128)
            for (from, to) in zone.controllers {
                cc[from.intValue] = to.map { $0.value } ?? 255
                if from.value == 64 { passesSustain = to?.value == 64 }
                if from.value == 66 { passesSostenuto = to?.value == 66 }
            }
            let start = destPort.count
            let effect = z < effects.count ? effects[z] : nil
            if let effect, let first = zone.destinations.first {
                let channel: Channel = switch first { case .channel(let c): c; case .port(_, let c): c }
                destPort.append(-2); destChannel.append(channel.value); destEffect.append(effect)
            } else {
                for d in zone.destinations {
                    destEffect.append(-1)
                    switch d {
                    case .channel(let c):
                        destPort.append(-1); destChannel.append(c.value)
                    case .port(let name, let c):
                        let p = portNames.firstIndex(of: name) ?? { portNames.append(name); return portNames.count - 1 }()
                        destPort.append(p); destChannel.append(c.value)
                    }
                }
            }
            var sourceID: SourceID?, sourceName: String?
            switch zone.source {
            case .id(let id): sourceID = id
            case .name(let n): sourceName = n.lowercased()  // matched within sources' lowercased names
            case nil: break
            }
            sourceNames.append(sourceName)
            compiled.append(Compiled(
                sourceID: sourceID, anySource: zone.source == nil,
                channelMask: mask,
                keyLo: zone.keys.lowerBound.value, keyHi: zone.keys.upperBound.value,
                velLo: max(1, zone.velocities.lowerBound.value), velHi: zone.velocities.upperBound.value,
                kinds: zone.kinds.rawValue, transpose: zone.transpose,
                destStart: start, destCount: destPort.count - start,
                passesSustain: passesSustain, passesSostenuto: passesSostenuto))
            velocityTables += zone.velocity.table
            controllerTables += cc
        }
        destSlot.release()
        destSlot = FixedTable(repeating: ZoneRouter.noSlot, count: destPort.count)
        namesSources = zones.contains { $0.source != nil }
        effectChains = Array(Set(destEffect.filter { $0 >= 0 })).sorted()
        bendRanges = zones.map(\.bendRange)
    }

    deinit { destSlot.release() }
}
