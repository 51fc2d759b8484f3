import Controls
import Engine
import LV2
import Parameters

/// The one assembly of `live`, `play` and `render`: the hub holding the
/// session's values, the renderer over an instrument (one synth or a pool)
/// with the session's channel routes and tuning, and the way the values reach
/// it. Each path builds its instrument its own way (live loads the whole
/// font, render only what a piece needs) and its own output; everything
/// between instrument and output is built here, so the paths cannot drift.
public struct HostAssembly: Sendable {
    public var sampler: SamplerOptions
    /// A mapping's `channels:`: an `instrument:` routes the channel (its
    /// fonts and presets are the `Sampler`'s). Empty without a mapping.
    public var channels: [ChannelSetup]

    public init(sampler: SamplerOptions, channels: [ChannelSetup] = []) {
        self.sampler = sampler
        self.channels = channels
    }

    /// The hub of a session: `mapping`'s controls over the table's defaults,
    /// the start values (`--reverb-level`, `--a4`, …) and the controls' `default:`s.
    public func makeHub(mapping: ControlMapping?) -> ControlHub {
        ControlHub(mapping: mapping, startValues: sampler.startValues)
    }

    /// The plugins' source for the inserts asked for (nil without any), each
    /// checked: installed, usable as an insert, no feature Carillon lacks.
    /// Once per job or session: it reads every installed plugin's data.
    public func makePluginHost() throws(LV2Error) -> PluginHost? {
        guard !sampler.inserts.isEmpty else { return nil }
        let host = try PluginHost()
        try host.check(sampler.inserts)
        return host
    }

    /// The renderer over `instrument`: each channel routed to the instrument
    /// that plays it (`--oscillator-channel`, a mapping's `instrument:`), the
    /// oscillator tuned to `--a4`, the master's inserts (new instances from
    /// `plugins`; `offline` tells them they free-wheel), sized for blocks of `maxFrames`.
    public func makeRenderer(
        instrument: any Instrument, tracks: [any TrackSource], sampleRate: Int, maxFrames: Int,
        eventCapacity: Int = 1024, capturesStems: Bool = false, plugins: PluginHost? = nil, offline: Bool = false
    ) throws(LV2Error) -> Renderer {
        var inserts: [any AudioInsert] = []
        for insert in sampler.inserts {
            guard let plugins else { preconditionFailure("inserts need the PluginHost of makePluginHost") }
            inserts.append(try plugins.makeInsert(uri: insert.uri, sampleRate: sampleRate, maxFrames: maxFrames, offline: offline))
        }
        let renderer = Renderer(instrument: instrument, tracks: tracks, eventCapacity: eventCapacity, masterInserts: inserts)
        renderer.capturesStems = capturesStems
        for channel in sampler.oscillatorChannels { renderer.route(channel: channel, to: .oscillator) }
        for setup in channels {
            if let instrument = setup.instrument { renderer.route(channel: setup.channel.intValue, to: instrument) }
        }
        renderer.oscillator.a4 = sampler.a4
        renderer.prepare(sampleRate: Double(sampleRate), maxFrames: maxFrames)
        return renderer
    }

    /// Hands `hub`'s values to `renderer`: every value that differs from the
    /// table's default at once (the start values, the controls' defaults),
    /// then every change, through one `ParameterRouting`. Before the render
    /// thread runs, so the first block already has them.
    @discardableResult
    public func connect(_ hub: ControlHub, to renderer: Renderer, events: EventQueueProducer?,
                        transport: Transport?, pieceTempo: Double = 120) -> SubscriptionToken {
        let routing = ParameterRouting(parameters: renderer.parameters, events: events,
                                       transport: transport, pieceTempo: pieceTempo)
        return hub.subscribe { routing.apply($0) }
    }
}
