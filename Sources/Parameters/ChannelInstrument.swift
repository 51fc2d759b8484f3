/// The instrument a MIDI channel's messages go to (the renderer's routing table).
public enum ChannelInstrument: String, CaseIterable, Hashable, Sendable {
    /// The SoundFont sampler (FluidSynth), every channel's default.
    case sampler
    /// The built-in polyphonic oscillator.
    case oscillator
}
