import CFluidSynth

extension SoundFont.Preset {
    /// FluidSynth's percussion bank: a drum kit.
    public var isDrumKit: Bool { bank == 128 }
}

extension SoundFont {
    /// Every preset of the SF2 or SF3 file at `path`, as FluidSynth reads it
    /// (its shell's `inst` lists the same), in bank then program order.
    ///
    /// Read by FluidSynth rather than `SoundFontFile` because FluidSynth is
    /// what plays the font: these are exactly the presets a bank select and
    /// program change reach, under the names it gives them, SF3 included.
    /// Its dynamic sample loading reads the preset data and no sample (the
    /// font is loaded without selecting presets, which would load theirs):
    /// FluidR3_GM's list in about 0.1 s. Not on the render thread.
    public static func presets(at path: String) throws(FluidSynthError) -> [Preset] {
        let settings = try Settings()   // first: it silences FluidSynth's own logging, which `problem` would print to
        if let problem = problem(with: path) { throw problem }
        try settings.set("synth.dynamic-sample-loading", true)
        try settings.set("synth.threadsafe-api", false)
        let synth = try Synth(settings: settings)
        let muted = carillon_glib_mute()
        defer { carillon_glib_unmute(muted) }
        let id = try check(fluid_synth_sfload(synth.handle, path, 0), "fluid_synth_sfload",
                           orThrow: .soundFontUnreadable(path: path, reason: "damaged or truncated (FluidSynth could not load it)"))
        return SoundFont(path: path, id: id, synth: synth).presets
    }
}
