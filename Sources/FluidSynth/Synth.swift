import CFluidSynth
#if canImport(Glibc)
import Glibc
#endif

/// A `fluid_synth_t`.
///
/// Threads: create it, load fonts and change effects before rendering starts.
/// Once rendering, only the render thread calls the MIDI methods and `process`;
/// those are marked "render thread" and neither allocate, lock (with
/// `synth.threadsafe-api` off, as `Synth.offlineSettings` sets it) nor throw:
/// they return `false` when FluidSynth refused the event (no preset on the
/// channel, for instance), for the caller to count.
public final class Synth {
    let handle: OpaquePointer
    /// Kept alive as long as the synth: FluidSynth reads it after creation.
    public let settings: Settings

    public init(settings: Settings) throws(FluidSynthError) {
        self.settings = settings
        let loader = try VirtualSoundFontLoader.make(settings)
        guard let synth = new_fluid_synth(settings.handle) else {
            delete_fluid_sfloader(loader)
            throw .callFailed(function: "new_fluid_synth")
        }
        handle = synth
        // FluidSynth takes a loader only before the first font, and tries it before its own.
        fluid_synth_add_sfloader(handle, loader)
    }

    deinit { delete_fluid_synth(handle) }

    /// Loads an SF2 or SF3 file and selects its presets on every channel.
    public func loadSoundFont(at path: String) throws(FluidSynthError) -> SoundFont {
        try load(path: path, view: nil, selectingPresets: true)
    }

    /// Loads a view of a SoundFont (see `VirtualSoundFont`) and selects its
    /// presets on every channel; the font keeps the view alive. Not on the render thread.
    public func loadSoundFont(_ view: VirtualSoundFont) throws(FluidSynthError) -> SoundFont {
        try load(path: view.file.path, view: view, selectingPresets: true)
    }

    /// `fluid_synth_sfload` of a file, or of `view` (its registered name), with or
    /// without selecting its presets on every channel: the one way fonts load.
    func load(path: String, view: VirtualSoundFont?, selectingPresets: Bool) throws(FluidSynthError) -> SoundFont {
        if view == nil, let problem = SoundFont.problem(with: path) { throw problem }
        // A damaged file makes libinstpatch (FluidSynth's DLS loader, tried after
        // the SF2 one) log GLib criticals on stderr; the typed error says it all.
        let muted = carillon_glib_mute()
        defer { carillon_glib_unmute(muted) }
        let reason = view == nil ? "damaged or truncated (FluidSynth could not load it)"
                                 : "FluidSynth could not load a reduced view of it"
        let id = try check(fluid_synth_sfload(handle, view?.name ?? path, selectingPresets ? 1 : 0), "fluid_synth_sfload",
                           orThrow: .soundFontUnreadable(path: path, reason: reason))
        return SoundFont(path: path, id: id, synth: self, view: view)
    }

    // MARK: Layout

    /// Stereo audio channels (`synth.audio-channels`).
    public var audioChannelCount: Int { Int(fluid_synth_count_audio_channels(handle)) }
    /// Output groups voices are assigned to: MIDI channel `c` sounds in group `c % audioGroupCount`.
    public var audioGroupCount: Int { Int(fluid_synth_count_audio_groups(handle)) }
    /// Effects channels per effects group (reverb and chorus: 2).
    public var effectsChannelCount: Int { Int(fluid_synth_count_effects_channels(handle)) }
    public var effectsGroupCount: Int { Int(fluid_synth_count_effects_groups(handle)) }
    public var sampleRate: Double {
        (try? settings.double("synth.sample-rate")) ?? 44_100
    }

    // MARK: Effects (not the render thread)

    public func setReverb(on: Bool) throws(FluidSynthError) {
        try check(fluid_synth_reverb_on(handle, -1, on ? 1 : 0), "fluid_synth_reverb_on")
    }
    public func setReverbLevel(_ level: Double) throws(FluidSynthError) {
        try check(fluid_synth_set_reverb_group_level(handle, -1, level), "fluid_synth_set_reverb_group_level")
    }
    public func setChorus(on: Bool) throws(FluidSynthError) {
        try check(fluid_synth_chorus_on(handle, -1, on ? 1 : 0), "fluid_synth_chorus_on")
    }
    public func setChorusLevel(_ level: Double) throws(FluidSynthError) {
        try check(fluid_synth_set_chorus_group_level(handle, -1, level), "fluid_synth_set_chorus_group_level")
    }
    public func setGain(_ gain: Double) {
        fluid_synth_set_gain(handle, Float(gain))
    }

    // MARK: MIDI (render thread)

    @inline(__always) public func noteOn(channel: Int32, key: Int32, velocity: Int32) -> Bool {
        fluid_synth_noteon(handle, channel, key, velocity) == FLUID_OK
    }
    @inline(__always) public func noteOff(channel: Int32, key: Int32) -> Bool {
        // FLUID_FAILED for a key not sounding is normal, not a refusal.
        _ = fluid_synth_noteoff(handle, channel, key); return true
    }
    @inline(__always) public func controlChange(channel: Int32, controller: Int32, value: Int32) -> Bool {
        fluid_synth_cc(handle, channel, controller, value) == FLUID_OK
    }
    @inline(__always) public func programChange(channel: Int32, program: Int32) -> Bool {
        fluid_synth_program_change(handle, channel, program) == FLUID_OK
    }
    @inline(__always) public func pitchBend(channel: Int32, value: Int32) -> Bool {
        fluid_synth_pitch_bend(handle, channel, value) == FLUID_OK
    }
    @inline(__always) public func channelPressure(channel: Int32, value: Int32) -> Bool {
        fluid_synth_channel_pressure(handle, channel, value) == FLUID_OK
    }
    @inline(__always) public func keyPressure(channel: Int32, key: Int32, value: Int32) -> Bool {
        fluid_synth_key_pressure(handle, channel, key, value) == FLUID_OK
    }
    /// Resets every channel and stops every voice (a new piece). Render thread.
    @inline(__always) public func systemReset() -> Bool {
        fluid_synth_system_reset(handle) == FLUID_OK
    }
    @inline(__always) public func allSoundsOff() -> Bool {
        fluid_synth_all_sounds_off(handle, -1) == FLUID_OK
    }
    /// A channel message given as its wire bytes (status with channel, two data bytes).
    @inline(__always) public func send(status: UInt8, data1: UInt8, data2: UInt8) -> Bool {
        let channel = Int32(status & 0x0F), d1 = Int32(data1), d2 = Int32(data2)
        switch status & 0xF0 {
        case 0x80: return noteOff(channel: channel, key: d1)
        case 0x90: return d2 == 0 ? noteOff(channel: channel, key: d1) : noteOn(channel: channel, key: d1, velocity: d2)
        case 0xA0: return keyPressure(channel: channel, key: d1, value: d2)
        case 0xB0: return controlChange(channel: channel, controller: d1, value: d2)
        case 0xC0: return programChange(channel: channel, program: d1)
        case 0xD0: return channelPressure(channel: channel, value: d1)
        case 0xE0: return pitchBend(channel: channel, value: d2 << 7 | d1)
        default: return false
        }
    }

    /// A System Exclusive message, the bytes between F0 and F7 (both
    /// excluded), as FluidSynth's own MIDI player passes it on: GM/GM2 System
    /// On, Roland GS DT1 (reset, drum-part assignment), Yamaha XG, MIDI
    /// Tuning; anything else is ignored. Render thread (MIDI Tuning bulk
    /// dumps make FluidSynth allocate a tuning: the one exception). Returns
    /// false when FluidSynth rejected it.
    @inline(__always) public func sysEx(_ data: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = data.baseAddress, !data.isEmpty else { return false }
        return base.withMemoryRebound(to: CChar.self, capacity: data.count) {
            fluid_synth_sysex(handle, $0, Int32(data.count), nil, nil, nil, 0) == FLUID_OK
        }
    }

    // MARK: Effects (render thread)
    //
    // FluidSynth 2.3 queues these for its mixer in a lock-free ring (no lock
    // with synth.threadsafe-api off, no allocation); they take effect at the
    // next `process`. All effect groups (-1).

    @inline(__always) public func setReverbRoomSize(_ value: Double) -> Bool {
        fluid_synth_set_reverb_group_roomsize(handle, -1, value) == FLUID_OK
    }
    @inline(__always) public func setReverbDamping(_ value: Double) -> Bool {
        fluid_synth_set_reverb_group_damp(handle, -1, value) == FLUID_OK
    }
    @inline(__always) public func setReverbWidth(_ value: Double) -> Bool {
        fluid_synth_set_reverb_group_width(handle, -1, value) == FLUID_OK
    }
    @inline(__always) public func reverbOn(_ on: Bool) -> Bool {
        fluid_synth_reverb_on(handle, -1, on ? 1 : 0) == FLUID_OK
    }
    @inline(__always) public func setChorusVoices(_ count: Int) -> Bool {
        fluid_synth_set_chorus_group_nr(handle, -1, Int32(clamping: count)) == FLUID_OK
    }
    @inline(__always) public func setChorusDepth(milliseconds: Double) -> Bool {
        fluid_synth_set_chorus_group_depth(handle, -1, milliseconds) == FLUID_OK
    }
    @inline(__always) public func setChorusSpeed(hertz: Double) -> Bool {
        fluid_synth_set_chorus_group_speed(handle, -1, hertz) == FLUID_OK
    }
    @inline(__always) public func chorusOn(_ on: Bool) -> Bool {
        fluid_synth_chorus_on(handle, -1, on ? 1 : 0) == FLUID_OK
    }

    /// Renders `frames` frames and adds them to planar buffers: `out` holds
    /// `outCount` buffers (left/right of audio channel 0, 1, …; FluidSynth wraps
    /// when fewer than `2 × audioChannelCount`), `fx` holds `fxCount` buffers
    /// (reverb L/R, chorus L/R per effects group). Buffers must be zeroed by the
    /// caller. Render thread. Returns false when FluidSynth rejected the layout.
    @inline(__always)
    public func process(
        frames: Int,
        fx: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?, fxCount: Int,
        out: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?, outCount: Int
    ) -> Bool {
        fluid_synth_process(handle, Int32(frames), Int32(fxCount), fx, Int32(outCount), out) == FLUID_OK
    }
}

extension Settings {
    /// Settings for a synth that one render thread drives through `process`:
    /// `audioGroups` stereo outputs (one per MIDI channel when 16), no locking
    /// API, no audio driver, SysEx device ID 16; `gain` is FluidSynth's `synth.gain` (0.2 as its command line).
    /// `effectsGroups` reverb and chorus units (`synth.effects-groups`): MIDI
    /// channel `c` sends to unit `c % effectsGroups`.
    public static func forRendering(sampleRate: Double, gain: Double = 0.2, audioGroups: Int = 16,
                                    effectsGroups: Int = 1, polyphony: Int? = nil) throws(FluidSynthError) -> Settings {
        let settings = try Settings()
        try settings.set("synth.sample-rate", sampleRate)
        try settings.set("synth.audio-channels", audioGroups)
        try settings.set("synth.audio-groups", audioGroups)
        try settings.set("synth.effects-groups", effectsGroups)
        try settings.set("synth.threadsafe-api", false)
        // Roland GS and Yamaha XG SysEx in real files address device 0x10;
        // FluidSynth 2.3.1 answers only device 0 by default and so drops them.
        // Its later versions answer 16 by default (FluidSynth PR #1385): so does Carillon.
        try settings.set("synth.device-id", 16)
        try settings.set("synth.gain", gain)
        if let polyphony { try settings.set("synth.polyphony", polyphony) }
        return settings
    }
}
