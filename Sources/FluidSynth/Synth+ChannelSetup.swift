import CFluidSynth

/// A mapping file's per-channel set-up (bank, program, SoundFont), applied
/// before rendering starts: FluidSynth's bank numbers (128 = percussion),
/// which bank-select CCs cannot reach in its default GS style.
extension Synth {
    /// Loads a SoundFont *without* selecting its presets on every channel
    /// (the font loaded by `loadSoundFont(at:)` stays the default). Before rendering.
    public func loadExtraSoundFont(at path: String) throws(FluidSynthError) -> SoundFont {
        if let problem = SoundFont.problem(with: path) { throw problem }
        let id = try check(fluid_synth_sfload(handle, path, 0), "fluid_synth_sfload",
                           orThrow: .soundFontUnreadable(path: path, reason: "damaged or truncated (FluidSynth could not load it)"))
        return SoundFont(path: path, id: id, synth: self)
    }

    /// Selects bank `bank` (0...16383, 128 = percussion) and `program` on a
    /// channel (0...15). False when FluidSynth has no such preset. Before rendering.
    public func select(channel: Int, bank: Int, program: Int) -> Bool {
        fluid_synth_bank_select(handle, Int32(channel), Int32(bank)) == FLUID_OK
            && fluid_synth_program_change(handle, Int32(channel), Int32(program)) == FLUID_OK
    }

    /// Selects a preset of one particular SoundFont on a channel. Before rendering.
    public func select(channel: Int, soundFont: SoundFont, bank: Int, program: Int) -> Bool {
        fluid_synth_program_select(handle, Int32(channel), soundFont.id, Int32(bank), Int32(program)) == FLUID_OK
    }
}
