import Synchronization

/// The parameter rows of the plugins a session loads: one per control input
/// port, `plugin.N.SYMBOL` for MIDI channel N's LV2 instrument,
/// `insert.STRIP.K.SYMBOL` for the K-th insert on a strip and
/// `fx.ZONE.K.SYMBOL` for the K-th of a zone's MIDI effects. The session adds
/// them when it has read its plugins' data, before any mapping is read or
/// hub made, so from then on they are addresses like any other
/// (`ParameterAddress.plugin`): mapping files, `mapping check`, learn,
/// scenes and the surfaces take them from the registry.
///
/// Process-wide and append-only: a name added again keeps its row (and
/// index) with the new description, so sessions in one process (tests) can
/// load other plugins on the same channel. Any thread (a lock guards it);
/// the render thread never reads it.
public enum PluginParameters {
    /// Rows there is room for; their store slots are reserved up front.
    public static let capacity = 2048

    /// One control port as a parameter.
    public struct Row: Hashable, Sendable {
        /// `plugin.3.cutoff`, `insert.master.1.feedback`.
        public let name: String
        public let spec: ParameterSpec
        /// What it drives, for `carillon parameters` and the surfaces: the plugin's and the port's names.
        public let drives: String
        /// The strip whose group its control joins on the page (nil: the master).
        public let strip: ParameterAddress.StripID?

        /// A control port's row: `kind` from the port's properties (integer,
        /// toggle, enumeration: integer), its range and default as the plugin declares them.
        public init(name: String, range: ClosedRange<Double>, defaultValue: Double, kind: ParameterInfo.Kind,
                    unit: ParameterUnit, drives: String, strip: ParameterAddress.StripID?) {
            let conversion: StoreConversion = switch kind {
            case .toggle, .trigger: .onOff
            case .integer: .rounded
            case .continuous: .none
            }
            let clampedDefault = min(max(defaultValue, range.lowerBound), range.upperBound)
            spec = ParameterSpec(range, unit, kind == .continuous ? clampedDefault : clampedDefault.rounded(), kind,
                                 .store(conversion))
            self.name = name; self.drives = drives; self.strip = strip
        }
    }

    private static let rows = Mutex<(list: [Row], byName: [String: Int])>(([], [:]))

    /// Adds (or refreshes) rows; returns each one's address, in order. Throws
    /// when the table is full.
    public static func register(_ new: [Row]) throws(Full) -> [ParameterAddress] {
        try rows.withLock { (table) throws(Full) -> [ParameterAddress] in
            var addresses: [ParameterAddress] = []
            for row in new {
                if let k = table.byName[row.name] {
                    table.list[k] = row
                    addresses.append(.plugin(k))
                } else {
                    guard table.list.count < capacity else { throw Full(name: row.name) }
                    table.byName[row.name] = table.list.count
                    addresses.append(.plugin(table.list.count))
                    table.list.append(row)
                }
            }
            return addresses
        }
    }

    /// More plugin controls than `capacity` in one process.
    public struct Full: Error, Sendable, CustomStringConvertible {
        public let name: String
        public var description: String { "more than \(PluginParameters.capacity) plugin controls; \(name) has no room" }
    }

    /// Row `k`, nil when none is registered there.
    public static func row(_ k: Int) -> Row? {
        rows.withLock { k >= 0 && k < $0.list.count ? $0.list[k] : nil }
    }

    /// The row named `name`.
    public static func address(named name: String) -> ParameterAddress? {
        rows.withLock { $0.byName[name].map { .plugin($0) } }
    }

    /// Every registered row's address, in index order.
    public static var all: [ParameterAddress] { rows.withLock { (0..<$0.list.count).map { .plugin($0) } } }

    /// The registered name closest to `text` (for "did you mean").
    static func suggestion(for text: String) -> String? {
        let names = rows.withLock { $0.list.map(\.name) }
        return EditDistance.closest(to: text, among: names).flatMap { $0 == text ? nil : $0 }
    }
}
