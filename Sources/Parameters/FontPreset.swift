import MIDI
import Parameters

/// A SoundFont preset as a channel selects it: bank (FluidSynth's numbers;
/// 128 is the percussion bank), program and name. The hub, mappings and OSC
/// know a font's presets as these (`Sampling.PresetCatalog` reads them).
public struct FontPreset: Hashable, Sendable {
    public var bank: Int
    public var program: Int
    public var name: String
    public init(bank: Int, program: Int, name: String) { self.bank = bank; self.program = program; self.name = name }

    /// FluidSynth's percussion bank: a drum kit.
    public var isDrumKit: Bool { bank == 128 }
}

/// Why no preset answers to a name.
public struct PresetNameError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
    public init(description: String) { self.description = description }
}

extension FontPreset {
    /// The preset called `name` among `presets` (exactly, else ignoring
    /// case and surrounding spaces); in `bank` only, when one is given. Where
    /// several answer, channel 10 (`channel` 9) takes the drum kit, any other
    /// the lowest bank: what a GM player expects of "Standard" or "Piano".
    /// `font` names the font in the message, with the closest name ("did you mean").
    public static func named(_ name: String, in presets: [FontPreset], bank: Int? = nil, channel: Channel? = nil,
                             font: String) -> Result<FontPreset, PresetNameError> {
        let inBank = bank.map { b in presets.filter { $0.bank == b } } ?? presets
        var found = inBank.filter { $0.name == name }
        if found.isEmpty {
            let wanted = name.trimmed.lowercased()
            found = inBank.filter { $0.name.trimmed.lowercased() == wanted }
        }
        let drums = channel?.intValue == 9
        if let best = found.min(by: { a, b in
            (drums ? (a.isDrumKit ? 0 : 1) : 0, a.bank, a.program) < (drums ? (b.isDrumKit ? 0 : 1) : 0, b.bank, b.program)
        }) {
            return .success(best)
        }
        var message = "no preset named '\(name)'" + (bank.map { " in bank \($0)" } ?? "") + " in \(font)"
        if let close = EditDistance.closest(to: name, among: inBank.map(\.name)) {
            message += "; did you mean '\(close)'?"
        }
        message += " (`carillon presets \(font)` lists them)"
        return .failure(PresetNameError(description: message))
    }
}

extension String {
    fileprivate var trimmed: String {
        var s = Substring(self)
        while s.first == " " { s.removeFirst() }
        while s.last == " " { s.removeLast() }
        return String(s)
    }
}
