import MIDI

/// What the registry knows about one parameter.
public struct ParameterInfo: Hashable, Sendable {
    /// How a parameter's value is meant.
    public enum Kind: String, Sendable {
        /// Any value in the range.
        case continuous
        /// Whole numbers only (a program, a CC value, a waveform number).
        case integer
        /// 0 = off, 1 = on.
        case toggle
        /// Acts when it becomes 1 (play, stop): a momentary control sends 1,
        /// then 0 at the next `ControlSurface.tick()`. A consumer should treat
        /// each change to 1 as an event (queue it, or count it with a change
        /// counter), not sample the value once per block, or a press shorter
        /// than a block can be missed.
        case trigger
    }

    public let address: ParameterAddress
    public let range: ClosedRange<Double>
    public let unit: ParameterUnit
    public let defaultValue: Double
    public let kind: Kind

    public var index: Int { address.index }

    /// How the engine applies it (the parameter table's row).
    public var application: ParameterApplication { address.spec.application }

    /// The value clamped into range, rounded for integer, toggle and trigger
    /// kinds; NaN or infinity gives the default.
    public func clamp(_ value: Double) -> Double { address.spec.clamp(value) ?? defaultValue }
}

/// Every parameter address with its range, unit and default, as the
/// parameter table (`ParameterAddress.spec`) declares them: the engine and
/// the mapping loader share this one table (`ParameterRegistry.standard`).
public struct ParameterRegistry: Sendable {
    private let infos: [ParameterInfo]

    public static let standard = ParameterRegistry()

    /// The built-in rows, by index; the plugin rows are read as they are registered.
    private init() {
        infos = ParameterAddress.builtIn.map(Self.describe)
    }

    /// How many parameters exist: the built-in ones and the plugin rows registered so far.
    public var count: Int { all.count }

    /// Every parameter, in index order.
    public var all: [ParameterInfo] { infos + PluginParameters.all.map(Self.describe) }

    public func info(for address: ParameterAddress) -> ParameterInfo {
        if case .plugin = address { return Self.describe(address) }
        return infos[address.index]
    }

    /// The parameter at a dense index; nil outside the table (or a plugin slot with no row).
    public func info(at index: Int) -> ParameterInfo? {
        if infos.indices.contains(index) { return infos[index] }
        return ParameterAddress(index: index).map(Self.describe)
    }

    /// Parses an address; if it is unknown, the closest known address (for "did you mean").
    public func resolve(_ text: String) -> Result<ParameterAddress, UnknownAddress> {
        if let address = ParameterAddress(text) { return .success(address) }
        if text.hasPrefix("plugin.") || text.hasPrefix("insert.") || text.hasPrefix("fx.") {
            return .failure(UnknownAddress(text: text, suggestion: PluginParameters.suggestion(for: text)))
        }
        return .failure(UnknownAddress(text: text, suggestion: Self.suggestion(for: text)))
    }

    public struct UnknownAddress: Error, Sendable {
        public let text: String
        public let suggestion: String?
    }

    /// A spelling close to `text` among addresses of the same shape.
    static func suggestion(for text: String) -> String? {
        // Channel/strip numbers and CC numbers are kept as typed; compare the shape.
        let templates = shapes
        var parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var numbers: [String] = []
        for i in parts.indices where Int(parts[i]) != nil {
            numbers.append(parts[i])
            parts[i] = numbers.count == 1 ? "N" : "K"
        }
        let shape = parts.joined(separator: ".")
        guard let best = EditDistance.closest(to: shape, among: templates) else { return nil }
        // Put the typed numbers back, or a valid example when they are out of range.
        var result = best
        let n = numbers.first.flatMap(Int.init).map { (1...16).contains($0) ? String($0) : "1" } ?? "1"
        let k = numbers.dropFirst().first.flatMap(Int.init).map { (0...127).contains($0) ? String($0) : "0" } ?? "0"
        result = result.split(separator: ".", omittingEmptySubsequences: false)
            .map { $0 == "N" ? Substring(n) : $0 }.joined(separator: ".")
        if result.hasSuffix(".K") { result = String(result.dropLast()) + k }
        return result == text ? nil : result
    }

    private static func describe(_ address: ParameterAddress) -> ParameterInfo {
        let spec = address.spec
        return ParameterInfo(address: address, range: spec.range, unit: spec.unit, defaultValue: spec.defaultValue,
                             kind: spec.kind)
    }

    /// Every address's shape, numbers written N (channel) and K (controller):
    /// "strip.N.gain", "channel.N.cc.K", "master.gain" …, in index order.
    private static let shapes: [String] = {
        var seen = Set<String>(), result: [String] = []
        for address in ParameterAddress.builtIn {
            var parts = address.description.split(separator: ".").map(String.init)
            var numbers = 0
            for i in parts.indices where Int(parts[i]) != nil {
                numbers += 1
                parts[i] = numbers == 1 ? "N" : "K"
            }
            let shape = parts.joined(separator: ".")
            if seen.insert(shape).inserted { result.append(shape) }
        }
        return result
    }()
}
