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
import Glibc
#if canImport(Glibc)
#endif

/// Live playing: ALSA sequencer sources (keyboards, controllers, `aplaymidi`)
/// in, the FluidSynth sampler through the engine's render loop, an ALSA PCM
/// device out — with a mapping file's controls alive at the same time.
///
/// Its one job is running the session: it puts the parts together, starts
/// and stops them, and reports their status. The parts: the `ControlHub` (the
/// controls and the parameter values, one truth for the view and the engine),
/// an `InputRouter` (sequencer and JACK MIDI events → hub or the render
/// thread's queue), `LiveAudio` (output, sampler and the renderer the
/// `HostAssembly` builds, as it builds `RenderJob`'s), and three threads:
/// - the **input thread** (`SequencerClient`'s) runs the router, which places
///   each event by its arrival time — the kernel's stamp, taken as it reached
///   our port (`--timing stamped`: `OutputClock` places it);
/// - the **render thread** (an `AudioOutput`): with ALSA an output thread
///   that asks for SCHED_FIFO, then loops: render one period, write it to the
///   device; with JACK (`backend = .jack`) JACK's process callback, which
///   also reads JACK MIDI. Each block start is published to the `OutputClock`.
///   No allocation, lock or log there;
/// - the **control thread** (`ControlLoop`) ticks the hub once per rendered block (every
///   10 ms without audio), so momentary controls fall back to 0, feeds
///   the transport's state back to the controls, and sends the controls'
///   changed states to the controllers (`ControllerFeedback`, `carillon:1`).
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
public final class LiveHost: @unchecked Sendable {
    public struct Options: Sendable {
        public var clientName = "carillon"
        /// `--connect`: `client:port` or name substrings.
        public var connect: [String] = []
        /// `--autoconnect`: every source now and every one that appears later.
        public var autoconnect = false
        /// `--feedback`: destinations (`client:port` or name substrings) the
        /// feedback port sends the controls' state to; empty: the mapping's `port:`.
        public var feedback: [String] = []
        public var audio = true
        /// `-a`: the ALSA PCM device (`device`, `sampleRate`, `periodFrames`, `periods`) or a
        /// JACK client (the server's rate and period; `jack` says what to connect).
        public var backend = AudioBackend.alsa
        public var jack = JACKOptions()
        public var device = "default"
        public var sampleRate = 48_000
        public var periodFrames = HostOptions.defaultPeriodFrames
        public var periods = 2
        public var host = HostOptions()
        public var realtime = true
        /// `--timing`: events stamped on arrival and played a period later, or at once.
        public var timing = EventTiming.stamped
        /// The mapping file to watch: when it changes it is loaded again and, if
        /// it has no mistakes, swapped in (`ControlHub.replace`); if it has, the
        /// running mapping stays and every mistake goes to the log. Nil: no watch.
        public var watchMapping: String?
        /// Log every parameter change a control makes (plain, non-terminal output).
        public var logParameterChanges = false
        /// Play on without MIDI input when the sequencer cannot be opened
        /// (a player: the file is the point). Without audio it always is optional.
        public var inputOptional = false
        /// `--record`: what the output plays, written to this file (with audio).
        public var record: RecordTarget?
        /// `--record-midi`: the MIDI that comes in, as a Standard MIDI File written on stop.
        public var recordMIDI: String?
        /// `--clock-out`: destinations MIDI clock goes to (`client:port` or names, as `--connect`).
        public var clockOut: [String] = []
        /// `play --sync clock[=PORT]`: follow MIDI clock from PORT ("": from any source connected).
        public var syncClock: String?
        /// `play --sync jack` (with `-a jack`): follow the JACK transport.
        public var syncJACK = false
        /// `play --transport-master` (with `-a jack`): lead the JACK transport.
        public var transportMaster = false
        /// `--link`: a peer in the Ableton Link session (tempo shared, the piece on its bars).
        public var link = false
        /// `--give-up-after`: seconds without audio (the device or server gone and not
        /// back) before the session ends with `Status.failure`; nil: it retries for ever.
        public var giveUpAfter: Double?
        public init() {}
    }

    /// An audio file to record into.
    public struct RecordTarget: Sendable {
        public var path: String
        public var format: AudioFileFormat
        public var encoding: SampleEncoding?
        public init(path: String, format: AudioFileFormat, encoding: SampleEncoding? = nil) {
            self.path = path; self.format = format; self.encoding = encoding
        }
    }

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
    /// Nil only with `audio = false` on a machine without a sequencer: the controls still show.
    public let client: SequencerClient?
    /// The controls and parameter values.
    public let hub: ControlHub
    public let log = HostLog()
    private let assembly: HostAssembly
    private let router: InputRouter
    /// The zones' external ports: ALSA sequencer ports (nil without the sequencer), or JACK MIDI outputs with `-a jack`.
    private let zoneOutput: ALSAZoneOutput?
    private let jackZoneOutput: JACKZoneOutput?
    /// Controls, zones, queue: the keyboard's way in, shared by every input.
    public let keyboard: KeyboardRouting
    /// The output, sampler, renderer, recording, tracks and spectrum; nil without audio.
    private let audio: LiveAudio?
    private let midiRecorder: MIDIRecorder?
    private var control: ControlLoop?
    /// Reopens the output when it fails for good (with audio, once started).
    private var supervisor: AudioSupervisor?
    private var watcher: MappingWatcher?
    private var feedback: ControllerFeedback?
    /// The loaded piece's first tempo (bpm): `transport.tempo` is relative to it.
    private var pieceTempo = 120.0
    /// A piece is loaded: the control thread feeds its transport back to the controls.
    var hasPiece = false
    private var subscribed = false
    private var keyboardStarted = false
    private let shared = OutputState()
    private var recordingsFinished = false
    private var pluginStatesSaved = false
    /// The piece's beats (`useTempoMap`), for MIDI clock out and in.
    var beats = BeatMap(beatsPerMinute: 120)
    var clockSender: ClockSender?
    /// `play --sync clock`: what follows the master (nil otherwise).
    public internal(set) var clockFollowing: ClockFollowing?
    var jackFollowing: JACKTransportFollowing?
    var jackLeading: JACKTransportLeading?
    /// `--link`: the peer in the Link session (nil otherwise).
    public internal(set) var linkFollowing: LinkFollowing?
    /// Where `load` put the piece (seconds): where `--link` starts it.
    var startSeconds = 0.0

    /// Opens the sequencer, and unless `options.audio` is false, the output
    /// and the sampler (loading `soundFont` and the mapping's channel fonts).
    /// Nothing runs until `start`.
    public init(soundFont path: String?, mapping: ControlMapping?, options: Options) throws(Failure) {
        self.options = options
        let effects: [MIDIEffectSpec]
        do { effects = try mapping.map(MIDIEffectSpec.all(in:)) ?? [] } catch { throw .plugin(error) }
        assembly = HostAssembly(options: options.host, channels: mapping?.channels ?? [], inserts: mapping?.inserts ?? [],
                                midiEffects: effects)
        // The plugins' parameters exist before the hub that starts them at their defaults.
        let plugins: PluginHost?
        do { plugins = options.audio ? try assembly.makePluginHost() : nil } catch { throw .plugin(error) }
        for note in plugins?.notes ?? [] { log.append(note) }
        hub = assembly.makeHub(mapping: mapping, plugins: plugins)
        var client: SequencerClient?
        do {
            client = try SequencerClient(name: options.clientName)
        } catch {
            // With JACK, JACK MIDI is an input of its own: the sequencer is for controllers, if there is one.
            guard !options.audio || options.inputOptional || options.backend == .jack else { throw .alsa(error) }
            log.append(options.backend == .jack && options.audio ? "no ALSA MIDI input (JACK MIDI only): \(error)" : "no MIDI input: \(error)")
        }
        self.client = client
        if let problem = client?.arrivalStampingError {
            log.append("MIDI input not stamped on arrival (\(problem)): events are timed when the input thread reads them")
        }
        if options.audio, let path {
            audio = try LiveAudio(soundFont: path, assembly: assembly, plugins: plugins, options: options, log: log)
        } else {
            audio = nil
        }
        let outputRate = audio?.output.sampleRate
        midiRecorder = options.recordMIDI.map { MIDIRecorder(path: $0, sampleRate: outputRate) }
        let log = self.log
        let jackZoneOutput = (audio?.output as? JACKOutput).map { JACKZoneOutput(outputs: $0.midiOutputs, log: log) }
        let zoneOutput = jackZoneOutput == nil ? client.map { ALSAZoneOutput(client: $0, log: log) } : nil
        self.zoneOutput = zoneOutput
        self.jackZoneOutput = jackZoneOutput
        let keyboard = KeyboardRouting(hub: hub, events: audio?.events, external: jackZoneOutput ?? zoneOutput,
                                       effects: plugins?.midiEffects ?? [], effectSlots: audio?.pluginSlots.midiEffectSlots ?? 0)
        self.keyboard = keyboard
        // The input thread above the output thread (requestFIFO's default, 70): pushes within the latency.
        router = InputRouter(keyboard: keyboard, zoneOutput: zoneOutput,
                             sourceName: { [weak client] a in (try? client?.ports())?.first { $0.address == a }?.searchableName },
                             log: log, midiRecorder: midiRecorder, priority: options.realtime && audio?.clock != nil ? 75 : nil)
    }

    deinit { stop() }

    /// The sequencer's transport, with audio. Any thread.
    public var transport: Transport? { audio?.renderer.transport }

    /// "no audio: REASON, retrying" while the output is gone and being reopened; nil while it plays. Any thread, cheap.
    public var audioOutage: String? { shared.outage.withLock { $0 } }

    /// The output's sample rate (nil without audio): what `--record` is written at.
    public var outputSampleRate: Int? { audio?.output.sampleRate }

    /// Blocks `--record` dropped (its writer fell behind), 0 without a recording.
    public var droppedRecordingBlocks: Int { audio?.recorder?.droppedBlocks ?? 0 }

    /// Schedules a piece to play from the start of the output (with audio;
    /// before `start`): `tempo` scales its speed, `start` seeks (seconds),
    /// `loop` repeats it. Held notes are released at its end.
    public func load(_ score: Score, tempo: Double = 1, start: Double = 0, loop: Bool = false, pieceTempo: Double = 120) {
        guard let audio else { return }
        let renderer = audio.renderer
        var score = score
        // The piece lasts until its longest track ends.
        score.duration = max(score.duration, audio.tracks.map(\.duration).max() ?? 0)
        self.pieceTempo = pieceTempo > 0 ? pieceTempo : 120
        hasPiece = true
        renderer.releasesNotesAtEnd = true
        renderer.transport.setTempoScale(tempo)
        renderer.transport.setLoop(loop)
        // With --clock-out the piece starts once the output's clock is known (after its prefill
        // and one period), so its first clocks are not due before they can be timed. JACK makes
        // a connection a few cycles after the client asks (after activation): a quarter of a
        // second more, so the Start and the first clocks reach the followers.
        let jackConnecting = audio.output is JACKOutput ? audio.output.sampleRate / 4 : 0
        renderer.schedule(score, startingAt: options.clockOut.isEmpty ? 0
                          : UInt64(audio.output.prefillFrames + 2 * audio.output.maxFrames + jackConnecting))
        if start > 0 { renderer.transport.seek(to: start) }
        startSeconds = start
    }

    /// Connects the sources asked for, hands the parameter values to the
    /// engine, starts the output thread (audio), the control thread and the
    /// input thread. Returns the sources connected now.
    @discardableResult
    public func start() throws(Failure) -> [PortInfo] {
        do { return try startParts() } catch {
            // No half-written recording is left behind when the session never ran.
            audio?.recorder?.discard()
            recordingsFinished = true
            throw error
        }
    }

    private func startParts() throws(Failure) -> [PortInfo] {
        var connected: [PortInfo] = []
        if let client { do {
            for spec in options.connect { connected += try client.connect(source: spec) }
            if options.autoconnect {
                connected += try client.setAutoconnect(.allSources)
            } else if let pattern = hub.mapping?.port {
                connected += try client.setAutoconnect(.named(pattern))
            }
            if feedback == nil, hub.mapping != nil {
                feedback = try ControllerFeedback(client: client, hub: hub, explicit: options.feedback,
                                                  mappingPort: hub.mapping?.port, log: log)
            }
        } catch { throw .alsa(error) } }

        if !subscribed {
            subscribed = true
            if let audio {
                assembly.connect(hub, to: audio.renderer, events: audio.events, transport: audio.renderer.transport,
                                 pieceTempo: pieceTempo)
            }
            let log = self.log
            if options.logParameterChanges { hub.subscribe { log.append("parameter \($0)") } }
            // MIDI learn's events (armed, bound, failed) go to the log the view shows.
            hub.observeLearn { log.append("\($0)") }
        }
        midiRecorder?.begin()
        if let audio, !audio.started {
            // Live with tracks and no piece: an empty piece as long as the longest track carries them (the transport moves it).
            if !hasPiece, !audio.tracks.isEmpty { load(Score(events: [])) }
            try startSync(audio)
            try audio.start(shared)
            let parts = AudioSupervisor.Parts(output: audio.output, shared: shared, renderer: audio.renderer, clock: audio.clock,
                                              keyboard: keyboard, transport: hasPiece ? audio.renderer.transport : nil,
                                              log: log, verbose: options.logParameterChanges)
            do { supervisor = try AudioSupervisor(parts, recovery: AudioRecovery(giveUpAfter: options.giveUpAfter)) }
            catch { throw .thread(error) }
        }
        // With a mapping, even one without controls yet: a reload may bring some.
        if control == nil, hub.mapping != nil {
            do {
                // The control loop's other chores: what the chains queued for ports, JACK ports that appeared.
                let keyboard = self.keyboard, effectPorts = audio?.plugins?.effectPorts, jackZones = jackZoneOutput
                let poll: @Sendable () -> Void = {
                    if let effectPorts { keyboard.sendEffectPortMessages(from: effectPorts) }
                    jackZones?.connectWaiting()
                }
                let output = audio?.output
                var blockFrames: (@Sendable () -> UInt64)?
                if let output { blockFrames = { UInt64((output.periodDuration * Double(output.sampleRate)).rounded()) } }
                control = try ControlLoop(hub: hub, shared: shared, periodDuration: output?.periodDuration, blockFrames: blockFrames,
                                          transport: hasPiece ? audio?.renderer.transport : nil, pieceTempo: pieceTempo,
                                          poll: effectPorts == nil && jackZones == nil ? nil : poll)
            } catch { throw .thread(error) }
        }
        if let path = options.watchMapping, watcher == nil {
            let hub = self.hub, log = self.log
            let keyboard = self.keyboard
            let plugins = audio.flatMap { audio in
                audio.plugins.map { LivePlugins(host: $0, slots: audio.pluginSlots, assembly: assembly, keyboard: keyboard) }
            }
            do {
                watcher = try MappingWatcher(path: path) { hub.reload(from: path, log: log, plugins: plugins) }
            } catch { throw .watch(error) }
        }
        if !keyboardStarted {
            keyboardStarted = true
            keyboard.start()
        }
        let router = self.router, following = clockFollowing
        do { try client?.start { event in if following?.take(event) != true { router.handle(event) } } } catch { throw .alsa(error) }
        do { try clockSender?.start() } catch { throw .thread(error) }
        do { try linkFollowing?.start() } catch { throw .thread(error) }
        if let audio, let jackMIDI = audio.jackMIDI {
            // A quarter period, 0.25…1 ms: handed on well within the period of latency it has.
            let poll = UInt32(min(max(audio.output.periodDuration * 250_000, 250), 1_000))
            do { try jackMIDI.start(router: router, pollMicroseconds: poll) } catch { throw .thread(error) }
        }
        return connected
    }

    /// Feeds one message as if it came from the sequencer (tests, other inputs).
    /// Any thread but the output thread.
    public func receive(_ message: MIDIMessage, from source: SeqAddress = SeqAddress(client: 0, port: 0)) {
        router.handle(.message(message, source: source))
    }

    /// Log lines since the last call (connections, releases, failures). Any thread.
    public func takeLog() -> [String] { log.take() }

    /// The controls' current states, for the view. Any thread.
    public func controlStates() -> [ControlState] { hub.controlStates }

    public func status() -> Status {
        let blocks = shared.blocks.load(ordering: .relaxed)
        let total = Double(shared.renderNanosTotal.load(ordering: .relaxed)) / 1e9
        let renderer = audio?.renderer
        return Status(
            device: audio?.output.summary, realtime: shared.realtime.withLock { $0 }, xruns: audio?.output.xruns ?? 0,
            blocks: blocks, renderMean: blocks > 0 ? total / Double(blocks) : 0,
            renderWorst: Double(shared.renderNanosWorst.load(ordering: .relaxed)) / 1e9,
            budget: audio?.output.periodDuration ?? 0,
            queueOverflows: (renderer?.events.overflowCount ?? 0) + (audio?.jackMIDI?.inbox.overflowCount ?? 0),
            refusedSynthCalls: audio?.sampler.instrument.refusedCount ?? 0,
            refusedParameters: renderer?.parameters.refusedCount ?? 0,
            droppedMessages: renderer?.droppedMessages ?? 0,
            recordDroppedBlocks: audio?.recorder?.droppedBlocks ?? 0,
            trackUnderruns: audio?.tracks.reduce(0) { $0 + $1.underruns } ?? 0,
            spectrum: audio?.spectrum.levels ?? [],
            voices: audio?.sampler.instrument.activeVoices ?? 0,
            peak: renderer?.meters.peak ?? 0, rms: renderer?.meters.rms ?? 0,
            stripPeaks: renderer.map { r in (0..<r.meters.stripCount).map { r.meters.stripPeak($0) } } ?? [],
            stripNames: renderer.map { $0.meters.names } ?? [],
            stripKeys: renderer.map { $0.meters.strips.map(\.key) } ?? [],
            messagesBySource: router.messagesBySource, sources: router.sources,
            failure: shared.failure.withLock { $0 }, outage: shared.outage.withLock { $0 }, timing: audio?.events.timing, sync: syncDescription)
    }

    /// Ends cleanly: input stopped (sources' held notes no longer matter),
    /// all sound off, the device drained, the ports closed. Idempotent.
    public func stop() {
        // No reopen from here on: the output is finished as it is (playing, or gone).
        supervisor?.stop()
        supervisor = nil
        watcher?.cancel()
        watcher = nil
        client?.stop()
        // Note-offs for what the zones sent on (external synths above all), while the ports are open.
        keyboard.stop()
        keyboard.releaseEverything()
        // What the MIDI effect chains end on external ports: rendered, then sent by the control loop.
        let effectPorts = keyboard.sendsEffectsToPorts ? audio?.plugins?.effectPorts : nil
        if effectPorts != nil { waitForBlocks(3) }
        clockSender?.stop()
        jackFollowing?.stop()
        jackLeading?.stop()
        linkFollowing?.stop()
        if let s = clockSender { log.append(s.summary) }
        if let z = zoneOutput?.summary ?? jackZoneOutput?.summary { log.append(z) }
        if let j = (audio?.output as? JACKOutput)?.midiOutputs.summary { log.append(j) }
        if let l = linkFollowing, l.failedCalls > 0 { log.append("Link: \(l.failedCalls) calls to the session failed") }
        audio?.jackMIDI?.finish()
        shared.stop.store(true, ordering: .releasing)
        control?.join()
        control = nil
        if let effectPorts {
            keyboard.sendEffectPortMessages(from: effectPorts)   // the control loop has stopped: the one sender now
            waitForBlocks(2)                                      // JACK writes them in its next cycle
        }
        audio?.finish()
        audio?.pluginSlots.collectRetired()
        finishRecordings()
        savePluginStates()
    }

    /// Waits until the output has rendered `n` more blocks (at most `timeout` seconds; not at all without a running output).
    private func waitForBlocks(_ n: Int, timeout: Double = 0.3) {
        guard audio?.started == true else { return }
        let first = shared.blocks.load(ordering: .relaxed)
        var waited = 0.0
        while shared.blocks.load(ordering: .relaxed) &- first < n && waited < timeout {
            usleep(1_000)
            waited += 0.001
        }
    }

    /// `--plugin-state DIR`: each plugin's state written there (once), after the output stopped.
    private func savePluginStates() {
        guard let plugins = audio?.plugins, plugins.stateDirectory != nil, !pluginStatesSaved else { return }
        pluginStatesSaved = true
        do throws(LV2Error) {
            let files = try plugins.saveStates()
            if !files.isEmpty { log.append("plugin state saved: \(files.joined(separator: ", "))") }
        } catch { log.append("plugin state not saved: \(error)") }
    }

    /// Writes the recordings (once) and logs where they went or why not.
    private func finishRecordings() {
        if let recorder = audio?.recorder, !recordingsFinished {
            do throws(SoundFileError) {
                try recorder.finish()
                let dropped = recorder.droppedBlocks
                log.append("recorded \(recorder.path): \(recorder.writtenBlocks) blocks"
                    + (dropped > 0 ? ", \(dropped) blocks DROPPED (the disk did not keep up)" : ", none dropped"))
            } catch { log.append("recording failed: \(error)") }
        }
        if let midiRecorder, !recordingsFinished {
            do throws(MIDIRecorder.Failure) {
                try midiRecorder.finish()
                log.append("recorded MIDI \(midiRecorder.path): \(midiRecorder.count) messages")
            } catch { log.append("MIDI recording failed: \(error)") }
        }
        recordingsFinished = true
    }
}
