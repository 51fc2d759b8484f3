/// What each parameter drives, in a few words: `carillon parameters` and the
/// generated docs (docs/parameters.md) print it beside the table's row.
extension ParameterAddress {
    public var drives: String {
        switch self {
        case .masterGain: "the master output's gain"
        case .strip(.channel, let p): "MIDI channel N's mixer strip: " + Self.strip(p)
        case .strip(.oscillator, let p): "the oscillator's strip: " + Self.strip(p)
        case .strip(.tone, let p): "the tone's strip: " + Self.strip(p)
        case .strip(.reverb, let p): "the shared reverb return's strip (without --channel-effects; solo-safe): " + Self.strip(p)
        case .strip(.chorus, let p): "the shared chorus return's strip (without --channel-effects; solo-safe): " + Self.strip(p)
        case .strip(.track, let p): "audio-file track N's mixer strip (--track, tracks:): " + Self.strip(p)
        case .reverb(.level): "the reverb return's level (FluidSynth's synth.reverb.level)"
        case .reverb(.roomSize): "reverb room size (synth.reverb.room-size)"
        case .reverb(.damping): "reverb damping (synth.reverb.damp)"
        case .reverb(.width): "reverb stereo width (synth.reverb.width)"
        case .reverb(.enabled): "reverb on or off (faded, no click)"
        case .chorus(.level): "the chorus return's level (synth.chorus.level)"
        case .chorus(.depth): "chorus modulation depth (synth.chorus.depth)"
        case .chorus(.speed): "chorus modulation speed (synth.chorus.speed)"
        case .chorus(.voices): "chorus voices (synth.chorus.nr)"
        case .chorus(.enabled): "chorus on or off (faded, no click)"
        case .channelCC: "control change C to the sampler on MIDI channel N"
        case .channelProgram: "program change to the sampler on MIDI channel N"
        case .channelPitchBend: "pitch bend to the sampler on MIDI channel N (8192 = centre)"
        case .channelNote: "the pitch channel.N.gate plays on MIDI channel N (a new pitch while held: a new note)"
        case .channelGate: "holds channel.N.note down on MIDI channel N: note-on (velocity 100) at on, note-off at off"
        case .transport(.play): "play the piece (a press)"
        case .transport(.stop): "stop the piece (a press)"
        case .transport(.tempo): "the piece's tempo (its first tempo = ×1)"
        case .transport(.position): "seek, as % of the piece"
        case .transport(.loop): "loop the piece on or off"
        case .tone(.frequency): "the tone generator's frequency"
        case .tone(.waveform): "the tone's waveform: 0 sine, 1 square, 2 sawtooth, 3 triangle"
        case .tone(.enabled): "the tone generator on or off"
        case .tone(.note): "the tone's frequency as a MIDI pitch, from tone.a4"
        case .tone(.a4): "the reference pitch A4 for tone.note"
        case .osc(.waveform): "the oscillator's waveform: 0 sine, 1 square, 2 sawtooth, 3 triangle, 4 noise"
        case .osc(.attack): "the oscillator's envelope: attack time"
        case .osc(.decay): "the oscillator's envelope: decay time"
        case .osc(.sustain): "the oscillator's envelope: sustain level"
        case .osc(.release): "the oscillator's envelope: release time"
        case .osc(.detune): "the oscillator's detune"
        case .sceneSelect: "switch to the mapping's scene at this place in scenes: (0 = the first)"
        case .rigTranspose: "the keyboard's transposition: semitones added to every note it plays, with or without zones (a held note ends where it began)"
        case .plugin(let k): PluginParameters.row(k)?.drives ?? "an unregistered plugin control"
        }
    }

    /// A strip parameter by its name (balance spelled out), so a new one needs no text here.
    private static func strip(_ p: StripParameter) -> String { p == .pan ? "balance (-1 left, 1 right)" : p.rawValue }
}
