import Analysis
import Controls
import Engine
import Hosting
import LV2
import Sampling
import SoundFile
import Threads

/// The audio side of a live session: the output (an ALSA device or a JACK
/// client, `LiveHost.Options.backend`), the sampler on it, the renderer the
/// `HostAssembly` builds over the sampler, the `--record` recorder, the
/// `--track` files and the spectrum tap. Built before anything runs; started
/// once, finished once, from the host's owner thread.
final class LiveAudio {
    let output: any AudioOutput
    let sampler: Sampler
    /// `live`: the loader of the presets the rig did not name (nil: the whole font loaded).
    let presets: OnDemandPresets?
    /// Where the render thread applied what waited for a preset (nil: the whole font loaded,
    /// nothing waits), for `--record-midi` to stamp it there.
    let takeStamps: TakeStamps?
    let renderer: Renderer
    /// The render thread's queue as the input thread and the hub push to it.
    let events: EventQueueProducer
    /// The output's sample clock against the monotonic clock (`--timing stamped`).
    let clock: OutputClock?
    let recorder: Recorder?
    let tracks: [FileTrack]
    let spectrum: SpectrumTap
    /// `-a jack`: JACK MIDI's way to the router.
    let jackMIDI: JACKMIDIInput?
    /// The instruments' and inserts' plugins (nil without any): kept as long as the renderer runs them.
    let plugins: PluginHost?
    /// The renderer's plugins in slots a mapping reload swaps new ones into.
    let pluginSlots = PluginSlots()
    /// Owner thread only (`start`, `finish`).
    private(set) var started = false

    /// Opens the output, loads the sampler (`soundFont` and the mapping's
    /// channel fonts, each channel's preset selected), opens the recording
    /// and the tracks. A mapping's preset that does not exist is logged.
    init(soundFont path: String, assembly: HostAssembly, plugins: PluginHost?, options: LiveHost.Options,
         log: HostLog) throws(LiveHost.Failure) {
        self.plugins = plugins
        switch options.backend {
        case .alsa:
            output = try ALSAOutput(device: options.device, sampleRate: options.sampleRate,
                                    periodFrames: options.periodFrames, periods: options.periods, realtime: options.realtime)
            jackMIDI = nil
        case .jack:
            let input = JACKMIDIInput()
            output = try JACKOutput(clientName: options.clientName, options: options.jack, midiInbox: input.inbox)
            jackMIDI = input
        }
        let rate = output.sampleRate, blockFrames = output.maxFrames
        let made: (sampler: Sampler, presets: OnDemandPresets?, problems: [String])
        do {
            made = try assembly.makeSessionSampler(soundFont: path, sampleRate: rate, onDemand: options.presetsOnDemand, log: log)
        } catch { throw .sampler(error) }
        sampler = made.sampler
        presets = made.presets
        for problem in made.problems { log.append(problem) }
        do throws(SoundFileError) {
            recorder = try options.record.map { target throws(SoundFileError) in
                try Recorder(path: target.path, format: target.format, encoding: target.encoding,
                             sampleRate: rate, blockFrames: blockFrames)
            }
        } catch { throw .recording(error) }
        do { tracks = try assembly.options.openTracks(sampleRate: rate, offline: false) } catch { throw .track(error) }
        do { spectrum = try SpectrumTap(sampleRate: rate) } catch { throw .spectrum(error) }
        do {
            let base = made.sampler.instrument
            let onDemand = made.presets.map { OnDemandInstrument(base: base, presets: $0) }
            takeStamps = onDemand?.takeStamps
            let instrument: any Instrument = onDemand ?? base
            renderer = try assembly.makeRenderer(instrument: instrument, tracks: tracks, sampleRate: rate,
                                                 maxFrames: blockFrames, eventCapacity: 4096, plugins: plugins, slots: pluginSlots)
        } catch { throw .plugin(error) }
        clock = options.timing == .stamped || !options.clockOut.isEmpty || options.link || options.syncClock != nil
            ? OutputClock(sampleRate: Double(rate), periodFrames: blockFrames, settleFrames: output.prefillFrames) : nil
        events = EventQueueProducer(renderer.events, effects: renderer.midiEffectQueues, clock: options.timing == .stamped ? clock : nil)
    }

    /// Starts the recording's writer, the spectrum and the output's render loop;
    /// after each block the render thread hands the frames to `clockOut`
    /// (`--clock-out`) and tells `link` (`--link`) where the piece is.
    func start(_ shared: OutputState, clockOut: ClockOutTap?, link: LinkFollowing?) throws(LiveHost.Failure) {
        guard !started else { return }
        do { try recorder?.start(); try spectrum.start(); try presets?.start() } catch { throw .thread(error) }
        try output.start(OutputCycle(renderer: renderer, shared: shared, recorder: recorder, clock: clock, spectrum: spectrum,
                                       clockOut: clockOut, link: link))
        started = true
    }

    /// After `shared.stop` is set: the output's last block and end, the
    /// spectrum's thread, the tracks' decoders. The recording is the host's
    /// to finish (it reports where it went). Idempotent.
    func finish() {
        jackMIDI?.finish()  // the host stops it first, before the output; idempotent
        if started { output.finish() }
        presets?.stop()
        spectrum.stop()
        for track in tracks { track.close() }
    }
}
