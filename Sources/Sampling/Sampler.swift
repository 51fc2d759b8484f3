import FluidSynth
import Parameters
import Threads

/// The sampler's settings, the same for `live`, `play` and `render` (their
/// flags are named as the `fluidsynth` command line names them). What the host
/// adds around the sampler (tracks, plugins, the oscillator) is `HostOptions`.
public struct SamplerOptions: Sendable {
    /// FluidSynth's `synth.gain` (its command line's `-g`; default 0.2, as there).
    public var gain = 0.2
    public var reverb = true
    public var chorus = true
    /// `--reverb-level` / `--chorus-level`: start values of the `synth.reverb.level`
    /// and `synth.chorus.level` parameters (the mixer's effect returns), in
    /// FluidSynth's units; nil leaves the parameter table's default.
    public var reverbLevel: Double?
    public var chorusLevel: Double?
    /// Load a preset's samples only when a piece selects it (FluidSynth's
    /// `synth.dynamic-sample-loading`): `render` pins what each piece selects
    /// before it plays; `live` pins what its rig names and loads the rest as
    /// they are selected, off the render thread (`presetsOnDemand(rig:)`).
    /// `play` loads the whole font.
    public var loadsSamplesOnDemand = false
    /// `--channel-effects`: a reverb and chorus per MIDI channel (FluidSynth's
    /// `synth.effects-groups` = 16) instead of one shared pair, so a channel's
    /// strip carries its own effects (mute, solo, stems); see the README for the cost.
    public var effectsPerChannel = false
    public init() {}

    /// The rates FluidSynth 2.3 renders at (`synth.sample-rate`: 8000…96000 Hz).
    public static let sampleRates = 8_000...96_000

    /// The parameters these options set before anything runs.
    public var startValues: [ParameterChange] {
        var changes: [ParameterChange] = []
        if let reverbLevel { changes.append(ParameterChange(.reverb(.level), Float(reverbLevel))) }
        if let chorusLevel { changes.append(ParameterChange(.chorus(.level), Float(chorusLevel))) }
        return changes
    }
}

/// A FluidSynth sampler built and loaded for one host: the synth as the
/// engine's instrument, the main SoundFont, and a mapping's per-channel fonts.
/// The one synth factory of live, play and render.
public final class Sampler {
    public let instrument: FluidSynthInstrument
    /// The main SoundFont: the file at `soundFontPath` or a view of it (see
    /// `SampleSelection`); nil only after a reload (`loadSoundFont`) failed.
    public private(set) var soundFont: SoundFont?
    public let soundFontPath: String
    /// The mapping's per-channel SoundFonts, by channel (0...15).
    private let channelFonts: [Int: SoundFont]
    /// The fonts loaded beside the main one, in the order given (`--timbres`
    /// across a SoundFont set; see `ExtraFont`).
    public let extraSoundFonts: [SoundFont]

    /// A font a render's synth loads beside the main one (`--timbres` across a
    /// SoundFont set): a view of it, or the file when `view` is nil, its banks
    /// moved up by `bankOffset` as it loads (`FontBankLayout`'s offset; by
    /// default out of reach, `parkedBankOffset`, until `setBankOffsets`).
    public struct ExtraFont {
        public var path: String
        public var view: VirtualSoundFont?
        public var bankOffset: Int
        public init(path: String, view: VirtualSoundFont?, bankOffset: Int = Sampler.parkedBankOffset) {
            self.path = path; self.view = view; self.bankOffset = bankOffset
        }
    }

    /// A bank offset no bank select or drum channel reaches (FluidSynth's
    /// banks run 0...16383): a font there answers no program change.
    public static let parkedBankOffset = 16_384

    public enum Failure: Error, CustomStringConvertible {
        case synth(FluidSynthError)
        case soundFont(FluidSynthError)
        case channelSoundFont(channel: Int, String)

        public var description: String {
            switch self {
            case .synth(let e): "\(e)"
            case .soundFont(let e): "\(e)"
            case .channelSoundFont(let c, let e): "the mapping's SoundFont for channel \(c + 1): \(e)"
            }
        }
    }

    /// Creates the synth at `sampleRate`, loads the mapping's channel fonts,
    /// then the main font (last, so it answers every program change that
    /// names no font): `view` of it when given, else the file at `path`. The
    /// slow part: do it once.
    /// `planning`: a synth that only replays a score's selections and never
    /// sounds (`RenderJob`'s scout): one output, one effects group, 16 voices,
    /// so it costs little memory.
    /// `channelViews`: views to load in place of the channel fonts' files, by located path.
    public init(soundFont path: String, sampleRate: Double, options: SamplerOptions,
                channels: [ChannelSetup] = [], view: VirtualSoundFont? = nil, planning: Bool = false,
                extraFonts: [ExtraFont] = [], channelViews: [String: VirtualSoundFont] = [:]) throws(Failure) {
        soundFontPath = path
        do throws(FluidSynthError) {
            let settings = planning
                ? try Settings.forRendering(sampleRate: sampleRate, gain: options.gain, audioGroups: 1, polyphony: 16)
                : try Settings.forRendering(sampleRate: sampleRate, gain: options.gain,
                                            effectsGroups: options.effectsPerChannel ? 16 : 1)
            if options.loadsSamplesOnDemand { try settings.set("synth.dynamic-sample-loading", true) }
            let synth = try Synth(settings: settings)
            try synth.setReverb(on: options.reverb)
            try synth.setChorus(on: options.chorus)
            instrument = FluidSynthInstrument(synth: synth)
        } catch { throw .synth(error) }
        var fonts: [Int: SoundFont] = [:], byPath: [String: SoundFont] = [:]
        for setup in channels {
            guard let name = setup.soundFont else { continue }
            let channel = setup.channel.intValue
            do {
                let located = try SoundFontLocator(explicitPath: name).locate()
                if byPath[located] == nil {
                    if let view = channelViews[located] { byPath[located] = try instrument.synth.loadExtraSoundFont(view) }
                    else { byPath[located] = try instrument.synth.loadExtraSoundFont(at: located) }
                }
                fonts[channel] = byPath[located]
            } catch { throw .channelSoundFont(channel: channel, "\(error)") }
        }
        channelFonts = fonts
        var extras: [SoundFont] = []
        do throws(FluidSynthError) {
            for extra in extraFonts {
                let font: SoundFont
                if let view = extra.view { font = try instrument.synth.loadExtraSoundFont(view) }
                else { font = try instrument.synth.loadExtraSoundFont(at: extra.path) }
                try instrument.synth.setBankOffset(extra.bankOffset, of: font)
                extras.append(font)
            }
        } catch { throw .soundFont(error) }
        extraSoundFonts = extras
        try loadSoundFont(view)
    }

    /// Moves the extra fonts' banks up by `offsets` (one each, in their
    /// order; the main font stays at 0): `FontBankLayout`'s offsets. No voice
    /// may sound; the next program changes find presets by them. Not on the render thread.
    public func setBankOffsets(_ offsets: [Int]) throws(Failure) {
        precondition(offsets.count == extraSoundFonts.count)
        do throws(FluidSynthError) {
            for (font, offset) in zip(extraSoundFonts, offsets) { try instrument.synth.setBankOffset(offset, of: font) }
        } catch { throw .soundFont(error) }
    }

    /// Live's sampler with presets on demand (`options.loadsSamplesOnDemand`): the
    /// font at `path`, and each channel's `soundfont:`, loaded as a view of every zone
    /// whose sample headers end where FluidSynth's on-demand loader needs them
    /// (`SoundFontFile.view`, as a render's by note). FluidSynth before 2.4.4 loads each
    /// sample on demand with the 46 words after its end and plays them (its issue
    /// #1484): loaded from the file, live sounded unlike `--whole-font`, `play` and the
    /// render of its take at every sample's end (a click of up to 3e-2 with TimGM6mb's
    /// drums). A font the reader refuses loads from the file, with a line in `problems`.
    public convenience init(onDemandSession path: String, sampleRate: Double, options: SamplerOptions,
                            channels: [ChannelSetup] = [], problems: inout [String]) throws(Failure) {
        func wholeView(_ path: String) -> VirtualSoundFont? {
            guard SoundFontHydra.onDemandPadding > 0 else { return nil }
            do throws(SoundFontFileError) {
                let file = try SoundFontFile(path: path)
                return file.view(keeping: file.hydra.allZones)
            } catch {
                problems.append("\(path): samples loaded on demand as FluidSynth reads them from the file, each with "
                                + "\(SoundFontHydra.onDemandPadding) words past its end (\(error)); --whole-font plays them as written")
                return nil
            }
        }
        var channelViews: [String: VirtualSoundFont] = [:]
        for name in channels.compactMap(\.soundFont) {
            // A name that cannot be found is left to the designated init's message.
            guard let located = try? SoundFontLocator(explicitPath: name).locate(), channelViews[located] == nil else { continue }
            channelViews[located] = wholeView(located)
        }
        try self.init(soundFont: path, sampleRate: sampleRate, options: options, channels: channels, view: wholeView(path),
                      channelViews: channelViews)
    }

    /// Loads `view` of the main font (nil: the file itself) in place of the
    /// one loaded (if any) and selects its presets on every channel. No voice
    /// may sound (`FluidSynthInstrument.resetAndFinishVoices`). Not on the render thread.
    func loadSoundFont(_ view: VirtualSoundFont?) throws(Failure) {
        soundFont = nil
        do throws(FluidSynthError) {
            if let view { soundFont = try instrument.synth.loadSoundFont(view) }
            else { soundFont = try instrument.synth.loadSoundFont(at: soundFontPath) }
        } catch { throw .soundFont(error) }
    }


    /// Pins the presets `rig` names (a mapping's scenes' channels) and every
    /// channel's present one, and makes the loader of the others, for a
    /// sampler made with `loadsSamplesOnDemand`. After `apply`, before the
    /// render thread runs; the caller starts the loader.
    public func presetsOnDemand(rig: [ChannelSetup], log: HostLog? = nil) throws(Failure) -> OnDemandPresets {
        guard let soundFont else { preconditionFailure("a sampler has its font") }
        var others: [SoundFont] = []
        for font in channelFonts.values where !others.contains(where: { $0 === font }) { others.append(font) }
        do throws(FluidSynthError) {
            return try OnDemandPresets(synth: instrument.synth, mainFont: soundFont, otherFonts: others, rig: rig, log: log)
        } catch { throw .soundFont(error) }
    }

    /// Selects each channel's preset as a mapping's `channels:` asks (FluidSynth's
    /// bank numbers: 128 is percussion). Before the render thread owns the synth.
    /// Returns a line for each channel with no such preset.
    public func apply(_ channels: [ChannelSetup]) -> [String] {
        var problems: [String] = []
        for setup in channels where setup.bank != nil || setup.program != nil || setup.soundFont != nil {
            let channel = setup.channel.intValue, bank = setup.bank ?? 0, program = Int(setup.program?.value ?? 0)
            let ok = channelFonts[channel].map {
                instrument.synth.select(channel: channel, soundFont: $0, bank: bank, program: program)
            } ?? instrument.synth.select(channel: channel, bank: bank, program: program)
            if !ok { problems.append("channel \(channel + 1): no preset at bank \(bank) program \(program)") }
        }
        return problems
    }
}
