import Foundation

/// The unit a value is shown in. Values are stored in this unit: a gain in
/// dB is -6.0, a percentage is 0...100, a frequency is in Hz.
public enum ParameterUnit: String, CaseIterable, Sendable {
    case none = ""
    case decibels = "dB"
    case hertz = "Hz"
    case percent = "%"
    case semitones = "st"
    case beatsPerMinute = "bpm"
    case milliseconds = "ms"
    case seconds = "s"

    /// Names accepted in mapping files (`unit: dB`).
    public static let namesInFiles: [String: ParameterUnit] = [
        "none": .none, "dB": .decibels, "db": .decibels, "Hz": .hertz, "hz": .hertz,
        "%": .percent, "percent": .percent, "semitones": .semitones, "st": .semitones,
        "bpm": .beatsPerMinute, "ms": .milliseconds, "s": .seconds, "seconds": .seconds,
    ]

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
