import Engine
import FluidSynth
import Hosting
import Parameters
import Sampling
import Threads

/// The synths, pool and renderer one piece plays on, all new for it, so a
/// file's audio depends only on the file, the font and the options: not on
/// what was rendered before it (FluidSynth's reset leaves a voice slot's last
/// gain, which the next voice there ramps from, and the chorus's phase where
/// they were). Built from the piece's sample plan and the job's
/// `HostAssembly` (`RenderJob.rig(for:threads:plan:)` picks the plan); played
/// by a `BlockLoop`.
struct PieceRig {
    let samplers: [Sampler]
    let pool: SamplerPool?
    let renderer: Renderer
    /// Frames per block of the loop that plays it (one synth's or a pool's).
    let blockFrames: Int

    /// What a rig is built from that outlives the piece: the job's font,
    /// options, assembly and the parts it made once.
    struct Parts {
        let soundFontPath: String
        let options: RenderJob.Options
        let assembly: HostAssembly
        let selection: SampleSelection
        let tracks: [FileTrack]
        let plugins: PluginHost?
        /// The values the rig starts at: the plugins' state, the mapping's
        /// defaults and first scene, `--set` (`RenderJob.startValues`).
        let startValues: [ParameterChange]
    }

    /// `threads` new synths loading what `samples` needs of the font, pooled
    /// when more than one, under a renderer with the assembly's strips,
    /// inserts and plugins, at the start values.
    init(samples: SampleSelection.Plan, threads: Int, parts: Parts) throws(RenderJob.Failure) {
        let options = parts.options
        var samplers: [Sampler] = []
        do throws(Sampler.Failure) {
            for _ in 0..<max(1, threads) {
                samplers.append(try parts.selection.makeSampler(for: samples, path: parts.soundFontPath,
                                                                sampleRate: Double(options.sampleRate),
                                                                options: options.samplerOptions))
            }
        } catch { throw .sampler(error) }
        var pool: SamplerPool? = nil
        if samplers.count > 1 {
            do throws(ThreadError) {
                // New synths: nothing to reset, only the channels that play whole to set.
                pool = try SamplerPool(members: samplers.map(\.instrument), keepingAlive: samplers,
                                       blocksInFlight: options.blocksInFlight,
                                       wholeChannels: parts.selection.wholeChannels(samples.selection,
                                                                                    extraFonts: samples.extras.map(\.scoutID)))
            } catch { throw .threads("\(error)") }
        }
        let blockFrames = options.blockFrames(threads: samplers.count)
        let renderer: Renderer
        do {
            renderer = try parts.assembly.makeRenderer(instrument: pool ?? samplers[0].instrument, tracks: parts.tracks,
                                                       sampleRate: options.sampleRate, maxFrames: blockFrames,
                                                       capturesStems: options.stems, plugins: parts.plugins, offline: true)
        } catch { throw .plugin(error) }
        // The same values live starts at, applied the way live applies them;
        // nothing moves them during a render.
        let routing = ParameterRouting(parameters: renderer.parameters, events: EventQueueProducer(renderer.events),
                                       transport: renderer.transport)
        for change in parts.startValues { routing.apply(change) }
        self.samplers = samplers
        self.pool = pool
        self.renderer = renderer
        self.blockFrames = blockFrames
    }

    /// The grid the rig's synths apply events on (the labels place notes on it).
    var eventGranularity: Int { pool?.eventGranularity ?? samplers[0].instrument.eventGranularity }

    /// Calls the rig's sampler refused (no preset on a channel, …).
    var refusedCount: Int { pool?.refusedCount ?? samplers[0].instrument.refusedCount }

    /// The pool has held more voices at once than one synth may (see `BlockLoop`).
    var voiceBudgetExceeded: Bool { pool?.voiceBudgetExceeded == true }
}

extension RenderJob.Options {
    /// The sampler's options for this job's synths.
    var samplerOptions: SamplerOptions {
        var samplerOptions = host.sampler
        samplerOptions.loadsSamplesOnDemand = loadsSamplesOnDemand
        if stems { samplerOptions.effectsPerChannel = true }
        return samplerOptions
    }
}
