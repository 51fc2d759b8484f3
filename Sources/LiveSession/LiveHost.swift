import ALSA
import Analysis
import Controls
import Engine
import FluidSynth
import Hosting
import JACK
import Link
import LV2
import MIDI
import MappingFiles
import Parameters
import Sampling
import SoundFile
import Sync
import Synchronization
import Threads

/// Live playing: ALSA sequencer sources (keyboards, controllers, `aplaymidi`)
/// and JACK MIDI in, the FluidSynth sampler through the engine's render loop,
/// an ALSA PCM device or a JACK client out — with a mapping file's controls
/// alive at the same time.
///
/// Its one job is running the session: it owns a few parts, starts them in
/// order, stops them in the reverse order, and reports their `status()`:
/// - the `ControlHub` (the controls and the parameter values, one truth for
///   the view and the engine) and the **control thread** (`ControlLoop`: ticks
///   the hub once per rendered block, every 10 ms without audio, feeds the
///   transport back to the controls, sends the controllers their feedback);
/// - the **input** (`LiveInput`: the sequencer's input thread and JACK MIDI's
///   into one `InputRouter`, `--record-midi`, the zones' external ports, the
///   feedback port); events are placed by their arrival time (`--timing stamped`);
/// - the **transport sync** (`TransportSync`: `--clock-out`, `--sync clock`,
///   `--sync jack`, `--transport-master`, `--link`);
/// - the **output** (`LiveOutput`: `LiveAudio` — the device or JACK client,
///   the sampler and the renderer the `HostAssembly` builds as it builds the
///   render's, `--record`, tracks, spectrum — the piece it plays, and the
///   `AudioSupervisor` that reopens it after a fault). The render thread
///   allocates, locks and logs nothing.
/// The hub, the assembly and the plugins come from `HostStart`, as the render's do.
/// The caller (`carillon live`'s main thread) starts, reads `status()` and
/// `controlStates()` for the view, and stops: `load`, `start` and `stop` from
/// that one thread; `status`, `controlStates`, `receive` and the hub from any.
///
/// With `audio = false` (`--no-audio`) there is no device and no output
/// thread: the controls and the view still run, as `MidiWidgetsManager` does.
///
/// Playing a file (`carillon play`): `load` a `Score` before `start`; the
/// renderer's sequencer plays it on the same output thread, under the
/// `transport`, which the mapping's `transport.*` controls drive as well.
public final class LiveHost: Sendable {
    /// What the view shows; read from any thread.
    public struct Status: Sendable {
        public var device: String?
        public var realtime: String
        public var xruns: Int
        public var blocks: Int
        /// Time the render call of one block took: mean and worst, in seconds.
        public var renderMean: Double
        public var renderWorst: Double
        /// The period's duration: the budget of one block.
        public var budget: Double
        /// Messages lost because the render thread's queue was full.
        public var queueOverflows: Int
        /// Calls the sampler refused (no preset on a channel, a failed render call).
        public var refusedSynthCalls: Int
        /// Parameter values refused (NaN, infinity) before they reached the engine.
        public var refusedParameters: Int
        /// Sequencer events dropped (more held notes or chased events than its tables hold).
        public var droppedMessages: Int
        /// Blocks of `--record` lost: the writer thread did not keep up (or the file failed).
        public var recordDroppedBlocks: Int
        /// Blocks in which a `--track` had no decoded audio ready (all tracks).
        public var trackUnderruns: Int = 0
        /// The master output's spectrum: dB per third-octave band (`spectrum.bands`); empty without audio.
        public var spectrum: [Float] = []
        /// Voices the sampler is playing.
        public var voices: Int
        public var peak: Float
        public var rms: Float
        /// Each strip's last block peak (linear): the MIDI channels, then the
        /// oscillator, the tone, the shared effect returns, the tracks (as
        /// `stripNames` names them); empty without audio.
        public var stripPeaks: [Float]
        /// The strips' short names (`1`…`16`, `osc`, `tone`, `reverb`, `chorus`, the tracks').
        public var stripNames: [String] = []
        /// The strips' stable keys (`ParameterAddress.StripID.key`), in the same order.
        public var stripKeys: [String] = []
        public var messagesBySource: [SeqAddress: Int]
        public var sources: Set<SeqAddress>
        /// Why the session must end (`--give-up-after` passed without audio); nil while it may go on.
        public var failure: String?
        /// "no audio: REASON, retrying" while the output is gone and being reopened; nil while it plays.
        public var outage: String? = nil
        /// How live input is placed (`--timing`); nil without audio.
        public var timing: EventTiming? = nil
        /// What the transport is in time with (`syncDescription`); nil when it keeps its own time.
        public var sync: String? = nil
        /// Mean render time over the budget (DSP load, 0…1+).
        public var load: Double { budget > 0 ? renderMean / budget : 0 }
    }

    public enum Failure: Error, CustomStringConvertible {
        case alsa(ALSAError)
        case thread(ThreadError)
        case jack(JACKError)
        case sampler(Sampler.Failure)
        case watch(MappingWatcher.Failure)
        case recording(SoundFileError)
        case track(FileTrackError)
        case spectrum(SpectrumError)
        case plugin(LV2Error)
        case link(LinkError)
        /// The device or server came back otherwise than the session was built for (another rate, a larger period).
        case deviceChanged(String)

        public var description: String {
            switch self {
            case .deviceChanged(let text): text
            case .plugin(let e): "\(e)"
            case .track(let e): "\(e)"
            case .spectrum(let e): "\(e)"
            case .recording(let e): "cannot record: \(e)"
            case .alsa(let e): "\(e)"
            case .thread(let e): "\(e)"
            case .jack(let e): "\(e)"
            case .sampler(let e): "\(e)"
            case .watch(let e): "\(e)"
            case .link(let e): "Ableton Link: \(e)"
            }
        }
    }

    public let options: Options
    /// The controls and parameter values.
    public let hub: ControlHub
    public let log = HostLog()
    private let assembly: HostAssembly
    private let input: LiveInput
    /// Nil without audio (`--no-audio`).
    private let output: LiveOutput?
    private let sync: TransportSync
    /// The output's counters and the stop flag the control loop ends on (with or without audio).
    private let shared = OutputState()

    /// What runs once started, besides the parts: the owner thread's, under a lock for `status` and `deinit`.
    private struct Running {
        var subscribed = false
        var control: ControlLoop?
        var watcher: MappingWatcher?
    }
    private let running = Mutex(Running())

    /// Nil only with `audio = false` on a machine without a sequencer: the controls still show.
    public var client: SequencerClient? { input.client }
    /// Controls, zones, queue: the keyboard's way in, shared by every input.
    public var keyboard: KeyboardRouting { input.keyboard }

    /// Opens the sequencer, and unless `options.audio` is false, the output
    /// and the sampler (loading `soundFont` and the mapping's channel fonts).
    /// Nothing runs until `start`.
    public init(soundFont path: String?, mapping: ControlMapping?, options: Options) throws(Failure) {
        self.options = options
        // The assembly, the plugins (their parameters exist before the hub starts them at their defaults), the hub.
        let start: HostStart
        do { start = try HostStart(options: options.host, mapping: mapping, withPlugins: options.audio) } catch { throw .plugin(error) }
        assembly = start.assembly
        hub = start.hub
        for note in start.plugins?.notes ?? [] { log.append(note) }
        let client = try LiveInput.openSequencer(options: options, log: log)
        let audio: LiveAudio?
        if options.audio, let path {
            audio = try LiveAudio(soundFont: path, assembly: assembly, plugins: start.plugins, options: options, log: log)
        } else {
            audio = nil
        }
        if let audio { output = LiveOutput(audio: audio, shared: shared, options: options, log: log) } else { output = nil }
        input = LiveInput(client: client, hub: hub, audio: audio, midiEffects: start.plugins?.midiEffects ?? [], options: options, log: log)
        sync = TransportSync(options: options, log: log)
    }

    deinit { stop() }

    /// The sequencer's transport, with audio. Any thread.
    public var transport: Transport? { output?.transport }

    /// "no audio: REASON, retrying" while the output is gone and being reopened; nil while it plays. Any thread, cheap.
    public var audioOutage: String? { shared.outage.withLock { $0 } }

    /// The output's sample rate (nil without audio): what `--record` is written at.
    public var outputSampleRate: Int? { output?.audio.output.sampleRate }

    /// Blocks `--record` dropped (its writer fell behind), 0 without a recording.
    public var droppedRecordingBlocks: Int { output?.audio.recorder?.droppedBlocks ?? 0 }

    /// `play --sync clock`: what follows the master (nil otherwise).
    public var clockFollowing: ClockFollowing? { sync.clockFollowing }

    /// What the transport is in time with ("leading the JACK transport at 120.0 BPM"), for the status lines; nil when it keeps its own time.
    public var syncDescription: String? { sync.description(transport: transport) }

    /// Schedules a piece to play from the start of the output (with audio;
    /// before `start`): `tempo` scales its speed, `start` seeks (seconds),
    /// `loop` repeats it. Held notes are released at its end.
    public func load(_ score: Score, tempo: Double = 1, start: Double = 0, loop: Bool = false, pieceTempo: Double = 120) {
        output?.load(score, tempo: tempo, start: start, loop: loop, pieceTempo: pieceTempo)
    }

    /// The piece's tempo map: MIDI clock out counts its beats, clock in
    /// turns the master's beats into its seconds; its time signatures give
    /// the JACK transport's bars (`--transport-master`). Before `start`.
    public func useTempoMap(_ map: TempoMap, timeSignatures: [TimeSignatureChange] = []) {
        sync.useTempoMap(BeatMap(tempoMap: map, timeSignatures: timeSignatures))
    }

    /// Starts the parts in order: the input's sources and feedback port, the
    /// hub's values handed to the engine, the transport's sync, the output
    /// (render thread, supervisor), the control thread, the mapping's watch, then
    /// the input threads and the sync's. Returns the sources connected now.
    @discardableResult
    public func start() throws(Failure) -> [PortInfo] {
        do { return try startParts() } catch {
            // No half-written recording is left behind when the session never ran.
            output?.discard()
            input.discardRecording()
            throw error
        }
    }

    private func startParts() throws(Failure) -> [PortInfo] {
        let connected = try input.open()
        subscribeOnce()
        if let output, !output.audio.started {
            output.loadTrackPiece()
            let taps = try sync.prepare(output, client: input.client)
            try output.start(keyboard: input.keyboard, clockOut: taps.clockOut, link: taps.link)
        }
        try startControlLoop()
        try watchMapping()
        let period = output?.audio.output.periodDuration ?? 0.004
        // JACK MIDI polled every quarter period, 0.25…1 ms: handed on well within the period of latency it has.
        try input.start(clockFollowing: sync.clockFollowing, jackPollMicroseconds: UInt32(min(max(period * 250_000, 250), 1_000)))
        try sync.start()
        return connected
    }

    /// The hub's values to the renderer (through the `HostAssembly`, as the render's), the `-v` log and MIDI learn's log. Once.
    private func subscribeOnce() {
        guard running.withLock({ r in defer { r.subscribed = true }; return !r.subscribed }) else { return }
        if let output {
            let audio = output.audio
            assembly.connect(hub, to: audio.renderer, events: audio.events, transport: audio.renderer.transport,
                             pieceTempo: output.piece?.tempo ?? 120)
        }
        let log = self.log
        if options.logParameterChanges { hub.subscribe { log.append("parameter \($0)") } }
        // MIDI learn's events (armed, bound, failed) go to the log the view shows.
        hub.observeLearn { log.append("\($0)") }
    }

    /// With a mapping, even one without controls yet (a reload may bring some), or
    /// with audio (the sampler's presets followed): the control thread.
    private func startControlLoop() throws(Failure) {
        guard hub.mapping != nil || output != nil, running.withLock({ $0.control == nil }) else { return }
        // The control loop's other chores: what the chains queued for ports, JACK ports that appeared,
        // the presets the sampler's channels play told to the hub.
        let keyboard = input.keyboard, effectPorts = output?.audio.plugins?.effectPorts, jackZones = input.jackZoneOutput
        let presets = output.map { ChannelSelectionsFollower($0.audio.renderer.selections, hub: self.hub) }
        let poll: @Sendable () -> Void = {
            if let effectPorts { keyboard.sendEffectPortMessages(from: effectPorts) }
            jackZones?.connectWaiting()
            presets?.poll()
        }
        let device = output?.audio.output
        var blockFrames: (@Sendable () -> UInt64)?
        if let device { blockFrames = { UInt64((device.periodDuration * Double(device.sampleRate)).rounded()) } }
        let piece = output?.piece
        let hub = self.hub, shared = self.shared, transport = piece != nil ? output?.transport : nil
        try running.withLock { r throws(Failure) in
            do throws(ThreadError) {
                r.control = try ControlLoop(hub: hub, shared: shared, periodDuration: device?.periodDuration, blockFrames: blockFrames,
                                            transport: transport, pieceTempo: piece?.tempo ?? 120,
                                            poll: effectPorts == nil && jackZones == nil && presets == nil ? nil : poll)
            } catch { throw .thread(error) }
        }
    }

    /// `--watch-mapping`: a changed mapping loaded again and swapped in (plugins and all).
    private func watchMapping() throws(Failure) {
        guard let path = options.watchMapping, running.withLock({ $0.watcher == nil }) else { return }
        let hub = self.hub, log = self.log, keyboard = input.keyboard, assembly = self.assembly
        let plugins = output.flatMap { output in
            output.audio.plugins.map { LivePlugins(host: $0, slots: output.audio.pluginSlots, assembly: assembly, keyboard: keyboard) }
        }
        try running.withLock { r throws(Failure) in
            do throws(MappingWatcher.Failure) { r.watcher = try MappingWatcher(path: path) { hub.reload(from: path, log: log, plugins: plugins) } } catch { throw .watch(error) }
        }
        // A learned binding or a saved scene comes back through the watcher's reload (plugins and chains too), once.
        hub.reloadsFromItsWatcher()
    }

    /// Feeds one message as if it came from the sequencer (tests, other inputs).
    /// Any thread but the output thread.
    public func receive(_ message: MIDIMessage, from source: SeqAddress = SeqAddress(client: 0, port: 0)) {
        input.receive(message, from: source)
    }

    /// Log lines since the last call (connections, releases, failures). Any thread.
    public func takeLog() -> [String] { log.take() }

    /// The controls' current states, for the view. Any thread.
    public func controlStates() -> [ControlState] { hub.controlStates }

    /// What the view shows. Any thread.
    public func status() -> Status {
        let blocks = shared.blocks.load(ordering: .relaxed)
        let total = Double(shared.renderNanosTotal.load(ordering: .relaxed)) / 1e9
        var status = Status(
            device: nil, realtime: shared.realtime.withLock { $0 }, xruns: 0,
            blocks: blocks, renderMean: blocks > 0 ? total / Double(blocks) : 0,
            renderWorst: Double(shared.renderNanosWorst.load(ordering: .relaxed)) / 1e9, budget: 0,
            queueOverflows: 0, refusedSynthCalls: 0, refusedParameters: 0, droppedMessages: 0, recordDroppedBlocks: 0,
            voices: 0, peak: 0, rms: 0, stripPeaks: [],
            messagesBySource: input.router.messagesBySource, sources: input.router.sources,
            failure: shared.failure.withLock { $0 }, outage: shared.outage.withLock { $0 }, sync: syncDescription)
        output?.report(into: &status)
        return status
    }

    /// Ends cleanly, the parts in the reverse order: no reopen, no reload, the
    /// input stopped and what the zones hold released, the sync's threads, the
    /// control thread, all sound off and the device drained, the recordings
    /// written. Idempotent.
    public func stop() {
        output?.stopSupervisor()
        let watcher = running.withLock { r in defer { r.watcher = nil }; return r.watcher }
        watcher?.cancel()
        input.stop()
        // What the MIDI effect chains end on external ports: rendered, then sent by the control loop.
        let effectPorts = input.keyboard.sendsEffectsToPorts ? output?.audio.plugins?.effectPorts : nil
        if effectPorts != nil { output?.waitForBlocks(3) }
        sync.stop()
        if let z = input.summary { log.append(z) }
        if let j = (output?.audio.output as? JACKOutput)?.midiOutputs.summary { log.append(j) }
        shared.stop.store(true, ordering: .releasing)
        let control = running.withLock { r in defer { r.control = nil }; return r.control }
        control?.join()
        if let effectPorts {
            input.keyboard.sendEffectPortMessages(from: effectPorts)   // the control loop has stopped: the one sender now
            output?.waitForBlocks(2)                                    // JACK writes them in its next cycle
        }
        output?.finish()
        input.finishRecording()
    }
}
