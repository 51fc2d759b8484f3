import MIDI
import Parameters
import Synchronization
import Yams

/// Presets named by name in `channels:` and scenes (`program: "Warm Pad"`),
/// looked up in the font the channel plays once the file is read.
extension MappingReader {
    /// A preset name as written: where, on which channel, in which scene (nil: the top level).
    struct PresetNameUse {
        var node: Node
        var name: String
        var channel: Channel
        var scene: Int?
    }

    /// `program:` a number 0…127, or a preset's name (resolved at the end of the read; nil until then).
    /// A quoted number ("5") is the number, not a preset called so.
    func program(_ node: Node, channel: Channel) -> UInt7? {
        if case .scalar(let s) = node, node.tagName == .str {
            if let n = Int(s.string.trimmingCharacters(in: .whitespaces)) {
                guard (0...127).contains(n) else { error(node, "program \(n) is out of range 0...127"); return nil }
                return UInt7(n)
            }
            guard !s.string.trimmingCharacters(in: .whitespaces).isEmpty else {
                error(node, "an empty preset name; give a program 0...127 or a preset's name")
                return nil
            }
            presetNames.append(PresetNameUse(node: node, name: s.string, channel: channel, scene: sceneBeingRead))
            return nil
        }
        return integer(node, in: 0...127, "program").map { UInt7($0) }
    }

    /// Sets the bank and program of each channel set-up that named its preset,
    /// from the font its channel plays (the top level's `soundfont:` for it,
    /// else the session's), or says why not at the name.
    func resolvePresetNames(in mapping: inout ControlMapping) {
        guard !presetNames.isEmpty else { return }
        guard let lookup = presetLookup else {
            for use in presetNames { error(use.node, "preset '\(use.name)' named by name, but no SoundFont is known here to look it up in; give its program number") }
            return
        }
        for use in presetNames {
            let fontName = mapping.channels.first { $0.channel == use.channel }?.soundFont
            let setups = use.scene.map { mapping.scenes[$0].channels } ?? mapping.channels
            guard let k = setups.firstIndex(where: { $0.channel == use.channel }) else { continue }
            let font: (path: String, presets: [FontPreset])
            switch lookup(fontName) {
            case .success(let found): font = found
            case .failure(let problem): error(use.node, "preset '\(use.name)': \(problem)"); continue
            }
            let preset: FontPreset
            switch FontPreset.named(use.name, in: font.presets, bank: setups[k].bank, channel: use.channel, font: font.path) {
            case .success(let found): preset = found
            case .failure(let problem): error(use.node, problem.description); continue
            }
            if use.scene != nil, preset.bank > 127, !(preset.bank == 128 && use.channel.intValue == 9) {
                error(use.node, "'\(preset.name)' is in bank \(preset.bank): a scene selects banks 0...127 (bank select, CC 0), or 128 on channel 10")
                continue
            }
            var setup = setups[k]
            setup.bank = preset.bank
            setup.program = UInt7(preset.program)
            if let s = use.scene { mapping.scenes[s].channels[k] = setup } else { mapping.channels[k] = setup }
        }
    }
}

extension ControlMapping {
    /// The font a channel's preset names are looked up in: given the
    /// channel's `soundfont:` (nil: the session's font), its path and
    /// presets, or the problem with it.
    public typealias PresetLookup = @Sendable (_ soundFont: String?) -> Result<(path: String, presets: [FontPreset]), PresetNameError>

    private static let presetLookupSlot = Mutex<PresetLookup?>(nil)

    /// How loads look up presets named by name. Set by a program that knows
    /// its SoundFont (`PresetCatalog.lookUpMappingPresets`); unset, a name is a mistake.
    public static func lookUpPresets(with lookup: @escaping PresetLookup) {
        presetLookupSlot.withLock { $0 = lookup }
    }

    static var presetLookup: PresetLookup? { presetLookupSlot.withLock { $0 } }
}
