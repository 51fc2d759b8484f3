import Controls
import LV2
import MappingFiles
import Sampling
import Threads

/// The first steps every session and job takes, in the one order that works:
/// the assembly read from the mapping, the plugins (their controls become
/// parameters), then the hub that starts every parameter at its default.
/// `live` and `play` (`LiveHost`) and `render` (`RenderJob`) build their start through here.
public struct HostStart {
    public let assembly: HostAssembly
    /// Nil without any instrument, insert or `midi-fx` plugin, or when none were asked for.
    public let plugins: PluginHost?
    public let hub: ControlHub

    /// `withPlugins` false (`--no-audio`): no plugin is read, the hub has the table's parameters only.
    public init(options: HostOptions, mapping: ControlMapping?, withPlugins: Bool = true) throws(LV2Error) {
        assembly = try HostAssembly(options: options, mapping: mapping)
        plugins = withPlugins ? try assembly.makePluginHost() : nil
        hub = assembly.makeHub(mapping: mapping, plugins: plugins)
    }
}

extension HostAssembly {
    /// The assembly for `mapping` (nil: none): its channels, its inserts, its zones' `midi-fx` chains.
    public init(options: HostOptions, mapping: ControlMapping?) throws(LV2Error) {
        let effects = try mapping.map { m throws(LV2Error) in try MIDIEffectSpec.all(in: m) } ?? []
        self.init(options: options, channels: mapping?.channels ?? [], inserts: mapping?.inserts ?? [], midiEffects: effects)
        sceneChannels = mapping?.scenes.flatMap(\.channels) ?? []
    }

    /// The sampler of a session that plays whatever comes (live, play): the
    /// `soundFont` and the mapping's channel fonts loaded, each channel's
    /// preset selected. `problems`: a channel's preset that does not exist, for the log.
    /// `onDemand` (live): only the presets the rig names (the channels', the
    /// scenes') have their samples loaded, the others load as they are selected
    /// (`presets`, its loader not started yet); else (play) the whole font.
    /// On demand, the main font and the channel fonts load as live needs them
    /// (`Sampler.init(onDemandSession:)`: their samples as the files have them, not as
    /// FluidSynth 2.3 reads them on demand).
    public func makeSessionSampler(soundFont path: String, sampleRate: Int, onDemand: Bool = false,
                                   log: HostLog? = nil) throws(Sampler.Failure) -> (sampler: Sampler, presets: OnDemandPresets?, problems: [String]) {
        var samplerOptions = options.sampler
        samplerOptions.loadsSamplesOnDemand = onDemand
        var problems: [String] = []
        let sampler = onDemand
            ? try Sampler(onDemandSession: path, sampleRate: Double(sampleRate), options: samplerOptions, channels: channels,
                          problems: &problems)
            : try Sampler(soundFont: path, sampleRate: Double(sampleRate), options: samplerOptions, channels: channels)
        problems += sampler.apply(channels)
        let presets = onDemand ? try sampler.presetsOnDemand(rig: channels + sceneChannels, log: log) : nil
        return (sampler, presets, problems)
    }
}
