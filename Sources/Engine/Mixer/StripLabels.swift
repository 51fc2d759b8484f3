import MIDI
import Parameters

/// What the meters and the stems call a strip. The mixer's strips are the
/// parameter table's `StripID`s; a track's label and file name also carry
/// its source's name (`name`, empty for the others).
extension ParameterAddress.StripID {
    /// A short label for a meter: `1`…`16`, `osc`, `tone`, `reverb`, `chorus`,
    /// a track's `name` (`track N` without one).
    public func label(name: String = "") -> String {
        switch self {
        case .channel(let c): "\(c.intValue + 1)"
        case .oscillator: "osc"
        case .tone: "tone"
        case .reverb: "reverb"
        case .chorus: "chorus"
        case .track(let n): name.isEmpty ? "track \(n + 1)" : name
        }
    }

    /// A file name without extension for the strip's stem: `ch01`…`ch16`,
    /// `osc`, `tone`, `reverb`, `chorus`, `track1-drums` (a track's `name`
    /// kept to letters, digits, `-` and `_`).
    public func fileStem(name: String = "") -> String {
        switch self {
        case .channel(let c):
            let n = c.intValue
            return n < 9 ? "ch0\(n + 1)" : "ch\(n + 1)"
        case .oscillator, .tone, .reverb, .chorus: return label()
        case .track(let n):
            let kept = String(name.unicodeScalars.map { scalar -> Character in
                let c = Character(scalar)
                return scalar.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_") ? c : "_"
            }.prefix(40))
            return kept.isEmpty ? "track\(n + 1)" : "track\(n + 1)-\(kept)"
        }
    }

    /// Channel strip `n` (0-based; MIDI channel n + 1 with 16 strips).
    public static func channel(_ n: Int) -> Self { .channel(Channel(truncatingIfNeeded: n)) }
}
