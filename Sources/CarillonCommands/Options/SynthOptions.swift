import ArgumentParser
import Hosting
import Sampling
import Controls
import Parameters
import OfflineRender

/// The sampler's flags, named as the `fluidsynth` command line names them where it has them.
struct SynthOptions: ParsableArguments {
    @Option(name: .long, help: Self.soundFontHelp)
    var soundfont: [String] = []

    /// `--soundfont`'s help, the same wherever it is taken (`mapping check` too: a mapping's preset names).
    static let soundFontHelp = ArgumentHelp(
        "The SoundFont (SF2/SF3) to play with; render takes several (repeat it; see --soundfont-pick), live and play one.",
        discussion: "Default: $CARILLON_SOUNDFONT, then soundfonts/ in the repository, then /usr/share/sounds/sf2/default-GM.sf2, FluidR3_GM.sf2, TimGM6mb.sf2, and last soundfonts/carillon-test.sf2 (see soundfonts/README.md).",
        valueName: "file")

    @Option(name: [.customShort("g"), .long], help: ArgumentHelp("Synth gain, as fluidsynth's -g (0...10).", valueName: "gain"))
    var gain: Double = 0.2

    @Flag(inversion: .prefixedNo, help: "Reverb on or off.")
    var reverb = true

    @Option(name: .customLong("reverb-level"), help: ArgumentHelp("Reverb level (0...1; FluidSynth's default 0.9).", valueName: "level"))
    var reverbLevel: Double?

    @Flag(inversion: .prefixedNo, help: "Chorus on or off.")
    var chorus = true

    @Option(name: .customLong("chorus-level"), help: ArgumentHelp("Chorus level (0...10; FluidSynth's default 2).", valueName: "level"))
    var chorusLevel: Double?

    @Flag(name: .customLong("channel-effects"), inversion: .prefixedNo, help: ArgumentHelp(
        "A reverb and chorus per MIDI channel (FluidSynth's synth.effects-groups 16): muting or soloing a channel takes its effects along.",
        discussion: "Default: off (render turns it on for --stems: each stem carries its own effects); the mix sounds the same either way."))
    var channelEffects: Bool?

    @Option(name: .customLong("oscillator-channel"), help: ArgumentHelp(
        "A MIDI channel (1...16) the built-in oscillator plays instead of the SoundFont; repeatable.",
        valueName: "channel"))
    var oscillatorChannel: [Int] = []

    @Option(name: .customLong("a4"), help: ArgumentHelp(
        "The pitch of A4 for the oscillator and the tone's tone.note, in Hz (400...480).", valueName: "hz"))
    var a4: Double = 440

    @Option(name: .customLong("track"), help: ArgumentHelp(
        "An audio file (WAV, FLAC, Ogg, MP3) played with the piece, from its start; repeatable, up to \(HostOptions.maxTracks).",
        valueName: "file"))
    var track: [String] = []

    @OptionGroup var plugins: PluginOptions

    @Option(name: .customLong("plugin-state"), help: ArgumentHelp(
        "A folder of LV2 plugin states: each plugin's (PREFIX.ttl: plugin.3.ttl, insert.master.1.ttl) is restored at start; live and play write them there at the end.",
        discussion: "A state holds the plugin's control values (they become the parameters' start values; --set still wins) and what the plugin's own state interface saves.",
        valueName: "folder"))
    var pluginState: String?

    @Option(name: .customLong("set"), help: ArgumentHelp(
        "A parameter's value from the start, as NAME=VALUE in its own unit: any name 'carillon parameters' lists, plugin controls (plugin.N.SYMBOL, insert.STRIP.K.SYMBOL) included; repeatable.",
        valueName: "name=value"))
    var setValues: [String] = []

    func validate() throws {
        for text in setValues { _ = try checked { () throws(RenderOptionError) in try RenderOptionChecks.settingText(text) } }
        for spec in plugins.instruments where oscillatorChannel.contains(spec.channel + 1) {
            throw ValidationError("MIDI channel \(spec.channel + 1) is given to both --instrument and --oscillator-channel")
        }
        guard track.count <= HostOptions.maxTracks else {
            throw ValidationError("at most \(HostOptions.maxTracks) --track files, found \(track.count)")
        }
        try checked { () throws(RenderOptionError) in
            try RenderOptionChecks.oscillatorChannels(oscillatorChannel)
            try RenderOptionChecks.gain(gain)
            // The parameters' own ranges, from the parameter table.
            try RenderOptionChecks.parameter("--a4", a4, .tone(.a4))
            if let reverbLevel { try RenderOptionChecks.parameter("--reverb-level", reverbLevel, .reverb(.level)) }
            if let chorusLevel { try RenderOptionChecks.parameter("--chorus-level", chorusLevel, .chorus(.level)) }
        }
    }

    /// The sampler's settings and what the host plays around it, the same for live, play and render.
    var hostOptions: HostOptions {
        var options = HostOptions()
        options.sampler.gain = gain
        options.sampler.reverb = reverb
        options.sampler.reverbLevel = reverbLevel
        options.sampler.chorus = chorus
        options.sampler.chorusLevel = chorusLevel
        options.sampler.effectsPerChannel = channelEffects ?? false
        options.oscillatorChannels = oscillatorChannel.map { $0 - 1 }
        options.a4 = a4
        options.tracks = track
        options.inserts = plugins.inserts
        options.instruments = plugins.instruments
        options.settings = settings
        options.pluginState = pluginState
        return options
    }

    /// `--set`'s values, each name resolved (after `plugins.registerParameters`)
    /// and each value in its parameter's range; a mistake ends the command with one line.
    private var settings: [ParameterChange] {
        setValues.map { text in
            do throws(RenderOptionError) { return try RenderOptionChecks.setting(text) } catch { Diagnostics.fail("\(error)") }
        }
    }

    /// The SoundFont's path, by the documented search order (`live` and `play`:
    /// one font, `refuseSeveralSoundFonts`).
    func locateSoundFont() throws(SoundFontLocator.Failure) -> String {
        try SoundFontLocator(explicitPath: soundfont.first).locate()
    }

    /// `render`'s fonts: each `--soundfont` given, each of which must exist,
    /// or the one the search order finds.
    func locateSoundFonts() throws(SoundFontLocator.Failure) -> [String] {
        guard !soundfont.isEmpty else { return [try SoundFontLocator().locate()] }
        return try soundfont.map { path throws(SoundFontLocator.Failure) in try SoundFontLocator(explicitPath: path).locate() }
    }

    /// `live` and `play` play one font: a synth that any program change on any
    /// channel may ask for any preset of (a mapping's `channels:` can give a
    /// channel a font of its own). Taking one of several silently would hide a mistake.
    func refuseSeveralSoundFonts(_ command: String) throws {
        guard soundfont.count > 1 else { return }
        throw ValidationError("\(command) plays one SoundFont; --soundfont is given \(soundfont.count) times "
            + "(render takes several; a mapping's channels: can give a channel its own font)")
    }
}
