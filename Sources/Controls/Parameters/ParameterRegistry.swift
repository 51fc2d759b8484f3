import Foundation
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

    /// The value clamped into range, rounded for integer, toggle and trigger kinds.
    public func clamp(_ value: Double) -> Double {
        let v = min(max(value, range.lowerBound), range.upperBound)
        return kind == .continuous ? v : v.rounded()
    }

    /// The value with its unit, e.g. "-6.0 dB".
    public func format(_ value: Double) -> String {
        switch kind {
        case .toggle, .trigger: value >= 0.5 ? "on" : "off"
        case .integer: unit.format(value, integral: true)
        case .continuous: unit.format(value)
        }
    }
}

/// Every parameter address with its range, unit and default. The engine and
/// the mapping loader share this one table (`ParameterRegistry.standard`).
///
/// Ranges and units: gains in dB (-60 means silence), pan -1 (left) … 1 (right),
/// reverb and chorus as FluidSynth takes them, `channel.N.cc.K` and
/// `channel.N.program` 0...127, `channel.N.pitch-bend` 0...16383 (8192 centre),
/// `transport.tempo` in bpm, `transport.position` in % of the song,
/// `tone.waveform` 0 sine, 1 square, 2 sawtooth, 3 triangle.
public struct ParameterRegistry: Sendable {
    private let infos: [ParameterInfo]

    public static let standard = ParameterRegistry()

    private init() {
        infos = ParameterAddress.all.map(Self.describe)
    }

    /// How many parameters exist (= `ParameterAddress.count`).
    public var count: Int { infos.count }

    /// Every parameter, in index order.
    public var all: [ParameterInfo] { infos }

    public func info(for address: ParameterAddress) -> ParameterInfo { infos[address.index] }

    public func info(at index: Int) -> ParameterInfo? { infos.indices.contains(index) ? infos[index] : nil }

    /// Parses an address; if it is unknown, the closest known address (for "did you mean").
    public func resolve(_ text: String) -> Result<ParameterAddress, UnknownAddress> {
        if let address = ParameterAddress(text) { return .success(address) }
        return .failure(UnknownAddress(text: text, suggestion: Self.suggestion(for: text)))
    }

    public struct UnknownAddress: Error, Sendable {
        public let text: String
        public let suggestion: String?
    }

    /// A spelling close to `text` among addresses of the same shape.
    static func suggestion(for text: String) -> String? {
        // Channel/strip numbers and CC numbers are kept as typed; compare the shape.
        let templates = [
            "master.gain", "strip.N.gain", "strip.N.pan", "strip.N.mute", "strip.N.solo",
            "channel.N.cc.K", "channel.N.program", "channel.N.pitch-bend",
        ] + ParameterAddress.Reverb.allCases.map { "synth.reverb.\($0.rawValue)" }
            + ParameterAddress.Chorus.allCases.map { "synth.chorus.\($0.rawValue)" }
            + ParameterAddress.Transport.allCases.map { "transport.\($0.rawValue)" }
            + ParameterAddress.Tone.allCases.map { "tone.\($0.rawValue)" }
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
        result = result.replacingOccurrences(of: ".N.", with: ".\(n).")
        if result.hasSuffix(".K") { result = String(result.dropLast()) + k }
        return result == text ? nil : result
    }

    private static func describe(_ address: ParameterAddress) -> ParameterInfo {
        func info(_ range: ClosedRange<Double>, _ unit: ParameterUnit, _ def: Double, _ kind: ParameterInfo.Kind)
            -> ParameterInfo
        {
            ParameterInfo(address: address, range: range, unit: unit, defaultValue: def, kind: kind)
        }
        switch address {
        case .masterGain: return info(-60...6, .decibels, 0, .continuous)
        case .strip(_, .gain): return info(-60...6, .decibels, 0, .continuous)
        case .strip(_, .pan): return info(-1...1, .none, 0, .continuous)
        case .strip(_, .mute), .strip(_, .solo): return info(0...1, .none, 0, .toggle)
        // FluidSynth's ranges and defaults (synth.reverb.* / synth.chorus.* settings).
        case .reverb(.roomSize): return info(0...1, .none, 0.2, .continuous)
        case .reverb(.damping): return info(0...1, .none, 0, .continuous)
        case .reverb(.width): return info(0...100, .none, 0.5, .continuous)
        case .reverb(.level): return info(0...1, .none, 0.9, .continuous)
        case .reverb(.enabled): return info(0...1, .none, 1, .toggle)
        case .chorus(.level): return info(0...10, .none, 2, .continuous)
        case .chorus(.depth): return info(0...256, .milliseconds, 8, .continuous)
        case .chorus(.speed): return info(0.1...5, .hertz, 0.3, .continuous)
        case .chorus(.voices): return info(0...99, .none, 3, .integer)
        case .chorus(.enabled): return info(0...1, .none, 1, .toggle)
        case .channelCC(_, let cc):
            // General MIDI power-on values: volume 100, pan centre, expression full.
            let def: Double = switch cc.value { case 7: 100; case 10: 64; case 11: 127; default: 0 }
            return info(0...127, .none, def, .integer)
        case .channelProgram: return info(0...127, .none, 0, .integer)
        case .channelPitchBend: return info(0...16383, .none, 8192, .integer)
        case .transport(.play), .transport(.stop): return info(0...1, .none, 0, .trigger)
        case .transport(.loop): return info(0...1, .none, 0, .toggle)
        case .transport(.tempo): return info(20...300, .beatsPerMinute, 120, .continuous)
        case .transport(.position): return info(0...100, .percent, 0, .continuous)
        case .tone(.frequency): return info(20...20000, .hertz, 440, .continuous)
        case .tone(.level): return info(-60...0, .decibels, -12, .continuous)
        case .tone(.waveform): return info(0...3, .none, 0, .integer)
        case .tone(.enabled): return info(0...1, .none, 0, .toggle)
        }
    }
}
