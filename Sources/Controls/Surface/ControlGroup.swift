import Parameters

/// Controls that belong together on a page, as a controller's strip does: a
/// mapping's `group:`, or else what the controls drive (all of channel 3's
/// controls, the oscillator's, the transport's).
public struct ControlGroup: Hashable, Sendable {
    public var name: String
    /// The controls' names top to bottom: dials, selectors, buttons and pads,
    /// faders, readouts (a hardware strip's knob over its buttons over its
    /// fader); mapping order within each.
    public var controls: [String]
    /// The mixer strip whose meter goes beside the group's fader: the strip
    /// the first fader on a strip parameter moves, else the first control's
    /// on one, else none (a pitch-bend fader has no meter).
    public var strip: ParameterAddress.StripID?
    /// Every control drives the transport: the page puts the group in the transport's bar.
    public var isTransport: Bool

    /// The groups of `definitions`: in `order` (a mapping's `groups:`) first,
    /// the others in the order their first control comes.
    public static func arrange(_ definitions: [ControlDefinition], order: [String] = []) -> [ControlGroup] {
        var names = order
        var members: [String: [ControlDefinition]] = [:]
        for d in definitions {
            let name = d.group ?? d.drivenGroup
            if members[name] == nil, !names.contains(name) { names.append(name) }
            members[name, default: []].append(d)
        }
        return names.compactMap { name in
            guard let list = members[name] else { return nil }
            // The meter goes beside the fader: the strip a fader's gain (or pan …) moves, else another control's.
            let strip = (list.filter { $0.kind == .fader } + list).lazy.compactMap(\.mixerStrip).first
            let addresses = list.flatMap(\.drivenAddresses)
            let sorted = list.enumerated().sorted { a, b in
                (a.element.kind.rankInGroup, a.offset) < (b.element.kind.rankInGroup, b.offset)
            }
            return ControlGroup(
                name: name, controls: sorted.map(\.element.name), strip: strip,
                isTransport: !addresses.isEmpty && addresses.allSatisfy {
                    if case .transport = $0 { true } else { false }
                })
        }
    }
}

extension ControlDefinition {
    /// What the control drives: its targets, or the parameter a readout shows.
    var drivenAddresses: [ParameterAddress] { targets.map(\.address) + (readoutParameter.map { [$0] } ?? []) }

    /// The mixer strip whose own parameter (gain, pan, mute, solo) its first target is.
    var mixerStrip: ParameterAddress.StripID? {
        if case .strip(let s, _) = drivenAddresses.first { s } else { nil }
    }

    /// The group a control without `group:` goes in: named for what its first target drives.
    var drivenGroup: String {
        guard let address = drivenAddresses.first else { return "Controls" }
        if let strip = address.groupingStrip { return strip.groupName }
        switch address {
        case .masterGain, .plugin: return "Master"
        case .reverb: return "Reverb"
        case .chorus: return "Chorus"
        case .transport: return "Transport"
        case .sceneSelect: return "Scenes"
        case .rigTranspose: return "Keyboard"
        default: return "Controls"
        }
    }
}

extension ParameterAddress {
    /// The mixer strip an address's control belongs with: a strip's own
    /// parameters, a channel's MIDI, the oscillator's and the tone's sound.
    var groupingStrip: StripID? {
        switch self {
        case .strip(let s, _): s
        case .channelCC(let c, _), .channelProgram(let c), .channelPitchBend(let c), .channelNote(let c), .channelGate(let c):
            .channel(c)
        case .osc: .oscillator
        case .tone: .tone
        case .plugin(let k): PluginParameters.row(k)?.strip
        default: nil
        }
    }
}

extension ParameterAddress.StripID {
    /// A group's name for the strip: `Channel 3`, `Oscillator`, `Track 2` …
    var groupName: String {
        switch self {
        case .channel(let c): "Channel \(c.intValue + 1)"
        case .oscillator: "Oscillator"
        case .tone: "Tone"
        case .reverb: "Reverb"
        case .chorus: "Chorus"
        case .track(let n): "Track \(n + 1)"
        }
    }
}

extension ControlKind {
    /// Top to bottom in a group.
    var rankInGroup: Int {
        switch self {
        case .knob, .encoder: 0
        case .selector: 1
        case .toggle, .button, .momentary, .pad: 2
        case .fader: 3
        case .readout: 4
        }
    }
}
