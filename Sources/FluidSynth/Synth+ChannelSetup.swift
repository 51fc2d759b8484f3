import CFluidSynth

/// A mapping file's per-channel set-up (bank, program, SoundFont), applied
/// before rendering starts: FluidSynth's bank numbers (128 = percussion),
/// which bank-select CCs cannot reach in its default GS style.
extension Synth {
    /// Loads a SoundFont *without* selecting its presets on every channel
    /// (the font loaded by `loadSoundFont(at:)` stays the default). Before rendering.
    public func loadExtraSoundFont(at path: String) throws(FluidSynthError) -> SoundFont {
        try load(path: path, view: nil, selectingPresets: false)
    }

    /// Loads `view` of a font *without* selecting its presets on every
    /// channel, as `loadExtraSoundFont(at:)` loads a file. Before rendering.
    public func loadExtraSoundFont(_ view: VirtualSoundFont) throws(FluidSynthError) -> SoundFont {
        try load(path: view.file.path, view: view, selectingPresets: false)
    }

    /// Moves `font`'s banks up by `offset` (fluid_synth_set_bank_offset):
    /// FluidSynth then finds its bank-B preset at bank B + `offset`, for bank
    /// selects and program changes alike. Before rendering.
    public func setBankOffset(_ offset: Int, of font: SoundFont) throws(FluidSynthError) {
        try check(fluid_synth_set_bank_offset(handle, font.id, Int32(offset)), "fluid_synth_set_bank_offset")
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
