import Controls
import Engine
import LV2
import MappingFiles
import Parameters
import Rig
import Sampling

/// The one assembly of `live`, `play` and `render`: the hub holding the
/// session's values, the renderer over an instrument (one synth or a pool)
/// with the session's channel routes and tuning, and the way the values reach
/// it. Each path builds its instrument its own way (live loads the
/// presets the rig names and the others as they are selected,
/// play the whole font, render only what a piece needs) and its own output; everything
/// between instrument and output is built here, so the paths cannot drift.
public struct HostAssembly: Sendable {
    public var options: HostOptions
    /// A mapping's `channels:`: an `instrument:` routes the channel (its
    /// fonts and presets are the `Sampler`'s). Empty without a mapping.
    public var channels: [ChannelSetup]
    /// A mapping's `inserts:`. Empty without a mapping.
    public var mappingInserts: [InsertSpec]
    /// A mapping's zones with `midi-fx` (`MIDIEffectSpec.all(in:)`). Empty without a mapping.
    public var midiEffects: [MIDIEffectSpec]
    /// The channels a mapping's scenes select presets on (`live` loads their samples at start).
    public var sceneChannels: [ChannelSetup] = []

    public init(options: HostOptions, channels: [ChannelSetup] = [], inserts: [MappingInsert] = [],
                midiEffects: [MIDIEffectSpec] = []) {
        self.options = options
        self.channels = channels
        mappingInserts = inserts.compactMap(InsertSpec.init)
        self.midiEffects = midiEffects
    }

    /// The LV2 instruments: `--instrument`'s, then a mapping's `lv2:` channels.
    public var instruments: [InstrumentSpec] {
        options.instruments + channels.compactMap { setup in setup.lv2.map { InstrumentSpec(channel: setup.channel.intValue, uri: $0) } }
    }

    /// The LV2 inserts: a mapping's `inserts:`, then `--insert`'s (so a
    /// mapping's targets name its own inserts whatever the flags add).
    public var inserts: [InsertSpec] { mappingInserts + options.inserts }

    /// The hub of a session: `mapping`'s controls over the table's defaults,
    /// the start values (`--reverb-level`, `--a4`, …) and the controls' `default:`s.
    /// The plugins' saved control values (`--plugin-state`) come before the command line's.
    /// A mapping with `scenes:` starts in its first (its presets, values and
    /// zones), as a patch-based rig (FluidPatcher, Zynthian's ZS3) starts in its first patch.
    public func makeHub(mapping: ControlMapping?, plugins: PluginHost? = nil) -> ControlHub {
        let hub = ControlHub(mapping: mapping, startValues: (plugins?.stateValues ?? []) + options.startValues)
        if mapping?.scenes.isEmpty == false {
            hub.set(.sceneSelect, to: 0)
            // `--set` still has the last word.
            for change in options.settings { hub.set(change.address, to: Double(change.value)) }
        }
        return hub
    }

    /// The plugins' source for the instruments and inserts asked for (nil
    /// without any), each checked (installed, usable where it goes, no feature
    /// Carillon lacks) and its controls registered as parameters. Once per
    /// job or session, before its hub is made (the hub starts every parameter
    /// at its default): it reads every installed plugin's data.
    public func makePluginHost() throws(LV2Error) -> PluginHost? {
        let instruments = instruments, inserts = inserts
        guard !inserts.isEmpty || !instruments.isEmpty || !midiEffects.isEmpty else { return nil }
        var taken = Set(options.oscillatorChannels + channels.filter { $0.instrument == .oscillator }.map(\.channel.intValue))
        for spec in instruments where !taken.insert(spec.channel).inserted {
            throw LV2Error(kind: .unsuitable(plugin: spec.uri, reason: "MIDI channel \(spec.channel + 1) is given another instrument too"
                + " (--instrument, --oscillator-channel and the mapping's channels: each give a channel one)"), function: "HostAssembly")
        }
        for spec in inserts {
            if case .strip(.track(let n)) = spec.strip, n >= options.tracks.count {
                let given = options.tracks.count
                throw LV2Error(kind: .unsuitable(plugin: spec.uri, reason: "--insert track\(n + 1)=…: there is no track \(n + 1)"
                    + " (\(given) track\(given == 1 ? "" : "s") given)"), function: "HostAssembly")
            }
        }
        return try PluginHost(instruments: instruments, inserts: inserts, midiEffects: midiEffects, stateDirectory: options.pluginState)
    }

    /// The renderer over `instrument`: each channel routed to the instrument
    /// that plays it (`--oscillator-channel`, a mapping's `instrument:`,
    /// `--instrument`'s plugins), the oscillator tuned to `--a4`, the master's
    /// and the strips' inserts, sized for blocks of `maxFrames`. Plugins are new instances
    /// from `plugins`, reading their controls from the renderer's parameters;
    /// `offline` tells them they free-wheel. `slots`: each plugin in a slot that
    /// takes a replacement while it plays (live: a mapping reload), kept there.
    public func makeRenderer(
        instrument: any Instrument, tracks: [any TrackSource], sampleRate: Int, maxFrames: Int,
        eventCapacity: Int = 1024, capturesStems: Bool = false, plugins: PluginHost? = nil, offline: Bool = false,
        slots: PluginSlots? = nil
    ) throws(LV2Error) -> Renderer {
        precondition(plugins != nil || (inserts.isEmpty && instruments.isEmpty && midiEffects.isEmpty),
                     "plugins need the PluginHost of makePluginHost")
        let parameters = ParameterStore()
        slots?.prepare(sampleRate: sampleRate, maxFrames: maxFrames, parameters: parameters)
        var master: [any AudioInsert] = [], strips: [ParameterAddress.StripID: [any AudioInsert]] = [:]
        for (k, spec) in plugins?.inserts.enumerated() ?? [].enumerated() {
            if case .strip(let id) = spec.strip {
                if case .channel = id, instrument.stripCount != 16 {
                    throw LV2Error(kind: .unsuitable(plugin: spec.uri, reason: "--insert \(id.key)=…: the instrument has no channel strips"),
                                   function: "HostAssembly")
                }
            }
            var insert = try plugins!.makeInsert(k, sampleRate: sampleRate, maxFrames: maxFrames, offline: offline,
                                                 parameters: parameters)
            if let slots { insert = slots.hold(insert) }
            switch spec.strip {
            case .master: master.append(insert)
            case .strip(let id): strips[id, default: []].append(insert)
            }
        }
        let renderer = Renderer(instrument: instrument, tracks: tracks, eventCapacity: eventCapacity,
                                parameters: parameters, masterInserts: master, stripInserts: strips)
        renderer.capturesStems = capturesStems
        for channel in options.oscillatorChannels { renderer.route(channel: channel, to: .oscillator) }
        for setup in channels {
            if let instrument = setup.instrument { renderer.route(channel: setup.channel.intValue, to: instrument) }
        }
        for spec in plugins?.instruments ?? [] {
            var plugin = try plugins!.makeInstrument(spec, sampleRate: sampleRate, maxFrames: maxFrames, offline: offline,
                                                     parameters: parameters)
            if let slots { plugin = slots.hold(plugin, channel: spec.channel) }
            renderer.attach(plugin, toChannel: spec.channel)
        }
        // The zones' MIDI effects run on the render thread live; offline, the take's pass runs them (`TakeRouting`).
        // With slots (a session a reload may change), every chain number a mapping may use has a
        // slot, the start's chains in the first ones.
        if !offline, let plugins {
            for k in 0..<(slots == nil ? plugins.midiEffects.count : ZoneRouter.maxEffects) {
                let chain = k < plugins.midiEffects.count
                    ? try plugins.makeMIDIEffect(plugins.midiEffects[k], sampleRate: sampleRate, maxFrames: maxFrames, offline: false,
                                                 parameters: parameters) : nil
                if let slots {
                    _ = renderer.attach(slots.holdMIDIEffect(chain))
                } else if let chain {
                    _ = renderer.attach(chain)
                }
            }
        }
        renderer.oscillator.a4 = options.a4
        renderer.prepare(sampleRate: Double(sampleRate), maxFrames: maxFrames)
        return renderer
    }

    /// Hands `hub`'s values to `renderer`: every value that differs from the
    /// table's default at once (the start values, the controls' defaults),
    /// then every change, through one `ParameterRouting`. Before the render
    /// thread runs, so the first block already has them. What the engine
    /// reported itself (`fromEngine`) it plays already: not sent again.
    @discardableResult
    public func connect(_ hub: ControlHub, to renderer: Renderer, events: (any ChannelOutput)?,
                        transport: Transport?, pieceTempo: Double = 120) -> SubscriptionToken {
        let routing = ParameterRouting(parameters: renderer.parameters, events: events,
                                       transport: transport, pieceTempo: pieceTempo)
        return hub.subscribeTimed { if !$0.fromEngine { routing.apply($0.change, at: $0.frame) } }
    }
}
