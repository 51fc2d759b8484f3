import CFluidSynth

extension Synth {
    /// Voices sounding now (releases and sustained notes included). Render thread.
    @inline(__always) public var activeVoiceCount: Int { Int(fluid_synth_get_active_voice_count(handle)) }
}
