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
}
