import MIDI
import Parameters

/// One strip of the mixer: what it carries, for the meters' labels and the
/// stems' file names. The renderer's strips, in order: the instrument's
/// channel strips, the oscillator, the tone, the effect returns (only when
/// the instrument's reverb and chorus are shared by all channels), the tracks.
public enum MixerStrip: Hashable, Sendable {
    /// The instrument's strip `n` (0-based; MIDI channel n + 1 with 16 strips).
    case channel(Int)
    case oscillator
    case tone
    /// The shared reverb and chorus returns (`synth.reverb.level`, `synth.chorus.level`).
    case reverb, chorus
    /// Audio-file track `n` (0-based, `track.(n+1).*`) and its source's name.
    case track(Int, name: String)

    /// The strip's parameters in the table (`strip(id, …)`). A shared effect
    /// return's gain comes after the effect's level (`synth.reverb.level`).
    public var parameters: ParameterAddress.StripID {
        switch self {
        case .channel(let n): .channel(Channel(truncatingIfNeeded: n))
        case .oscillator: .oscillator
        case .tone: .tone
        case .reverb: .reverb
        case .chorus: .chorus
        case .track(let n, _): .track(n)
        }
    }

    /// A short label for a meter: `1`…`16`, `osc`, `tone`, `reverb`, `chorus`, the track's name.
    public var name: String {
        switch self {
        case .channel(let n): "\(n + 1)"
        case .oscillator: "osc"
        case .tone: "tone"
        case .reverb: "reverb"
        case .chorus: "chorus"
        case .track(let n, let name): name.isEmpty ? "track \(n + 1)" : name
        }
    }

    /// A file name without extension for the strip's stem: `ch01`…`ch16`,
    /// `osc`, `tone`, `reverb`, `chorus`, `track1-drums` (the name kept to
    /// letters, digits, `-` and `_`).
    public var fileStem: String {
        switch self {
        case .channel(let n): return n < 9 ? "ch0\(n + 1)" : "ch\(n + 1)"
        case .oscillator, .tone, .reverb, .chorus: return name
        case .track(let n, let name):
            let kept = String(name.unicodeScalars.map { scalar -> Character in
                let c = Character(scalar)
                return scalar.isASCII && (c.isLetter || c.isNumber || c == "-" || c == "_") ? c : "_"
            }.prefix(40))
            return kept.isEmpty ? "track\(n + 1)" : "track\(n + 1)-\(kept)"
        }
    }
}
