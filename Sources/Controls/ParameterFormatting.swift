import Foundation
import Parameters

// How values read in the view, the web surface and the logs: display only,
// so it lives here and not in the dependency-free Parameters target.

extension ParameterUnit {
    /// A short display string: "-6.0 dB", "440 Hz", "+2 st", "50 %".
    public func format(_ value: Double, integral: Bool = false) -> String {
        let number: String
        if integral, value.isFinite, abs(value) < 1e15 {
            number = String(Int(value.rounded()))
        } else {
            switch self {
            case .hertz where abs(value) >= 1000: number = String(format: "%.2fk", value / 1000)
            case .hertz, .beatsPerMinute, .milliseconds: number = String(format: "%.1f", value)
            case .percent: number = String(format: "%.0f", value)
            case .decibels where value <= -60: return "-inf dB"
            case .decibels, .semitones: number = String(format: "%+.1f", value)
            default: number = String(format: "%.2f", value)
            }
        }
        return self == .none ? number : "\(number) \(rawValue)"
    }
}

extension ParameterInfo {
    /// The value with its unit, e.g. "-6.0 dB".
    public func format(_ value: Double) -> String {
        switch kind {
        case .toggle, .trigger: value >= 0.5 ? "on" : "off"
        case .integer: unit.format(value, integral: true)
        case .continuous: unit.format(value)
        }
    }
}
