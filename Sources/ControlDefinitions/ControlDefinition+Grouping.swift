import Parameters

// What a control drives, and the group and strip that follow from it: the mapping reader
// names a pad's group with it, and `ControlGroup` arranges a page by it.
extension ControlDefinition {
    /// What the control drives: its targets, or the parameter a readout shows.
    package var drivenAddresses: [ParameterAddress] { targets.map(\.address) + (readoutParameter.map { [$0] } ?? []) }

    /// The mixer strip whose own parameter (gain, pan, mute, solo) its first target is.
    package var mixerStrip: ParameterAddress.StripID? {
        if case .strip(let s, _) = drivenAddresses.first { s } else { nil }
    }

    /// The group a control without `group:` goes in: named for what its first target drives.
    package var drivenGroup: String {
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
    package var groupingStrip: StripID? {
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
    package var groupName: String {
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
