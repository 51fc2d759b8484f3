import CFluidSynth

/// What a pool of synths and on-demand sample loading need to know about a
/// synth's presets and voices.
extension Synth {
    /// A preset of a loaded SoundFont, as FluidSynth addresses it.
    public struct PresetAddress: Hashable, Sendable {
        public var soundFontID: Int32
        public var bank: Int32
        public var program: Int32
        public init(soundFontID: Int32, bank: Int32, program: Int32) {
            self.soundFontID = soundFontID; self.bank = bank; self.program = program
        }
        /// FluidSynth's percussion bank.
        public var isPercussion: Bool { bank == 128 }
    }

    /// Voices sounding now (FluidSynth counts them as it starts and ends them).
    /// Whichever thread owns the synth at the time.
    @inline(__always) public var activeVoiceCount: Int { Int(fluid_synth_get_active_voice_count(handle)) }

    /// Voices the synth has (`synth.polyphony`, FluidSynth's own setting as
    /// the synth applied it): a note-on that finds none free steals one.
    /// Whichever thread owns the synth at the time.
    public var polyphony: Int { Int(fluid_synth_get_polyphony(handle)) }

    /// The SysEx device ID the synth answers besides 0x7F (`synth.device-id`).
    public var deviceID: Int { (try? settings.int("synth.device-id")) ?? 0 }

    /// A channel's place in FluidSynth's basic-channel table
    /// (fluid_synth_get_basic_channel): the basic channel of its group, the
    /// group's mode bits (0x1: poly off, 0x2: omni off) and size; nil for a
    /// channel that belongs to no group (disabled: it refuses notes).
    /// Whichever thread owns the synth at the time.
    public func mode(ofChannel channel: Int) -> (basic: Int, mode: Int, groupSize: Int)? {
        var basic: Int32 = -1, mode: Int32 = -1, size: Int32 = -1
        guard fluid_synth_get_basic_channel(handle, Int32(channel), &basic, &mode, &size) == FLUID_OK,
              basic >= 0, mode >= 0 else { return nil }
        return (Int(basic), Int(mode), Int(size))
    }

    /// The preset selected on `channel` (0...15), nil when none is.
    /// Whichever thread owns the synth at the time.
    public func preset(onChannel channel: Int) -> PresetAddress? {
        guard let preset = fluid_synth_get_channel_preset(handle, Int32(channel)),
              let font = fluid_preset_get_sfont(preset) else { return nil }
        return PresetAddress(soundFontID: fluid_sfont_get_id(font), bank: fluid_preset_get_banknum(preset),
                             program: fluid_preset_get_num(preset))
    }

    /// The bank a program change on `channel` looks in, as bank selects left
    /// it (fluid_synth_get_program; a drum channel looks in 128 whatever this
    /// says). No lock, no allocation (`synth.threadsafe-api` off): render thread.
    @inline(__always) public func storedBank(onChannel channel: Int) -> Int {
        var font: Int32 = 0, bank: Int32 = 0, program: Int32 = 0
        _ = fluid_synth_get_program(handle, Int32(channel), &font, &bank, &program)
        return Int(bank)
    }

    /// Keeps a preset's samples loaded (with `synth.dynamic-sample-loading`,
    /// FluidSynth otherwise loads them when a channel selects the preset and
    /// frees them when none does). Loads them now if needed. Not on the render thread.
    /// `preset.bank` is the font's own; FluidSynth looks the preset up at that
    /// bank plus the font's bank offset (`setBankOffset`), so the offset is added here.
    public func pin(_ preset: PresetAddress) throws(FluidSynthError) {
        try check(fluid_synth_pin_preset(handle, preset.soundFontID, preset.bank + bankOffset(preset), preset.program),
                  "fluid_synth_pin_preset")
    }

    /// Lets a pinned preset's samples go when no channel selects it. Not on the render thread.
    public func unpin(_ preset: PresetAddress) {
        _ = fluid_synth_unpin_preset(handle, preset.soundFontID, preset.bank + bankOffset(preset), preset.program)
    }

    /// The bank offset of the font `preset` is in (fluid_synth_get_bank_offset; 0 unless set).
    private func bankOffset(_ preset: PresetAddress) -> Int32 {
        fluid_synth_get_bank_offset(handle, preset.soundFontID)
    }
}
