import ALSA
import Controls
import Engine
import FluidSynth
import MIDI
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Live playing: ALSA sequencer sources (keyboards, controllers, `aplaymidi`)
/// in, the FluidSynth sampler through the engine's render loop, an ALSA PCM
/// device out — with a mapping file's controls alive at the same time.
///
/// Threads:
/// - the **input thread** (`SequencerClient`'s) turns sequencer events into
///   `MIDIMessage`s, feeds the `ControlSurface` (which owns CCs a control
///   uses) and pushes everything else, as `ChannelMessage`s, into the
///   renderer's lock-free `EventQueue`; it is that queue's only producer.
///   Parameter changes of the surface go to the `ParameterStore` (atomics) or,
///   for synth CCs/program/bend, into the same queue.
/// - the **output thread** asks for SCHED_FIFO, then loops: render one period,
///   write it to the device. No allocation, lock or log in that loop.
/// - the **caller** (`carillon live`'s main thread) starts, reads `status()`
///   and `controlStates()` for the view, and stops.
///
/// - the **control thread** calls the surface's `tick()` once per rendered
///   block (every 10 ms without audio), so momentary controls fall back to 0.
///   The surface and the queue's producer side are shared by the input and
///   control threads under one lock (never taken by the output thread).
///
/// With `audio = false` (`--no-audio`) there is no device and no output
/// thread: the controls and the view still run, as `MidiWidgetsManager` does.
///
/// Playing a file (`carillon play`): `load` a `Score` before `start`; the
/// renderer's sequencer plays it on the same output thread, under the
/// `transport` (play, stop, seek, loop, tempo) — which the mapping's
/// `transport.*` controls drive as well.
public final class LiveHost: @unchecked Sendable {
    public struct Options: Sendable {
        public var clientName = "carillon"
        /// `--connect`: `client:port` or name substrings.
        public var connect: [String] = []
        /// `--autoconnect`: every source now and every one that appears later.
        public var autoconnect = false
        public var audio = true
        public var device = "default"
        public var sampleRate = 48_000
        public var periodFrames = 256
        public var periods = 2
        /// FluidSynth's `synth.gain`.
        public var gain = 0.2
        public var reverb = true
        public var chorus = true
        public var realtime = true
        /// Log every parameter change a control makes (plain, non-terminal output).
        public var logParameterChanges = false
        /// Play on without MIDI input when the sequencer cannot be opened
        /// (a player: the file is the point). Without audio it always is optional.
        public var inputOptional = false
        public init() {}
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
        public var queueOverflows: Int
        public var peak: Float
        public var rms: Float
        public var messagesBySource: [SeqAddress: Int]
        public var sources: Set<SeqAddress>
        public var failure: String?
        /// Mean render time over the budget (DSP load, 0…1+).
        public var load: Double { budget > 0 ? renderMean / budget : 0 }
    }

    public let options: Options
    /// Nil only with `audio = false` on a machine without a sequencer: the controls still show.
    public let client: SequencerClient?
    public let surface: ControlSurface?
    public let mapping: ControlMapping?
    private let renderer: Renderer?
    private let pcm: PCMPlayback?
    private let instrument: FluidSynthInstrument?
    private let soundFont: SoundFont?
    /// The mapping's per-channel SoundFonts, by channel (0...15).
    private let channelFonts: [Int: SoundFont]
    private var output: OutputThread?
    private var control: ControlThread?
    /// The loaded piece's first tempo (bpm): `transport.tempo` divides by it.
    private var pieceTempo = 120.0
    /// A piece is loaded: the control thread feeds its transport back to the controls.
    private var hasPiece = false
    private let shared = Shared()
    /// Serializes access to the (not thread-safe) control surface: the input thread feeds it, the view reads it.
    private let surfaceLock = Mutex<Void>(())

    /// State the input thread writes and the view reads.
    fileprivate final class Shared: Sendable {
        let counts = Mutex<[SeqAddress: Int]>([:])
        let sources = Mutex<Set<SeqAddress>>([])
        let log = Mutex<[String]>([])
        let stop = Atomic<Bool>(false)
        let blocks = Atomic<Int>(0)
        let renderNanosTotal = Atomic<Int>(0)
        let renderNanosWorst = Atomic<Int>(0)
        let failure = Mutex<String?>(nil)
        let realtime = Mutex<String>("not requested")
    }

    public enum Failure: Error, CustomStringConvertible {
        case alsa(ALSAError)
        case synth(FluidSynthError)
        case soundFont(FluidSynthError)
        case channelSoundFont(channel: Int, String)

        public var description: String {
            switch self {
            case .alsa(let e): "\(e)"
            case .synth(let e): "\(e)"
            case .soundFont(let e): "\(e)"
            case .channelSoundFont(let c, let e): "the mapping's SoundFont for channel \(c + 1): \(e)"
            }
        }
    }

    /// Opens the sequencer, and unless `options.audio` is false, the sampler
    /// (loading `soundFont`) and the PCM device. Nothing runs until `start`.
    public init(soundFont path: String?, mapping: ControlMapping?, options: Options) throws(Failure) {
        self.options = options
        self.mapping = mapping
        do {
            client = try SequencerClient(name: options.clientName)
        } catch {
            guard !options.audio || options.inputOptional else { throw .alsa(error) }
            client = nil
            shared.log.withLock { $0.append("no MIDI input: \(error)") }
        }
        surface = mapping.map { ControlSurface(mapping: $0) }
        guard options.audio, let path else {
            renderer = nil; pcm = nil; instrument = nil; soundFont = nil; channelFonts = [:]
            return
        }
        let playback: PCMPlayback
        do {
            playback = try PCMPlayback(.init(device: options.device, sampleRate: options.sampleRate,
                periodFrames: options.periodFrames, periods: options.periods))
        } catch { throw .alsa(error) }
        let instrument: FluidSynthInstrument
        do throws(FluidSynthError) {
            let settings = try Settings.forRendering(sampleRate: Double(playback.sampleRate), gain: options.gain)
            let synth = try Synth(settings: settings)
            try synth.setReverb(on: options.reverb)
            try synth.setChorus(on: options.chorus)
            instrument = FluidSynthInstrument(synth: synth)
        } catch { throw .synth(error) }
        // The mapping's per-channel fonts first, so that the main font, loaded
        // last, answers every program change that does not name a font.
        var fonts: [Int: SoundFont] = [:], byPath: [String: SoundFont] = [:]
        for setup in mapping?.channels ?? [] {
            guard let name = setup.soundFont else { continue }
            let channel = setup.channel.intValue
            do {
                let located = try SoundFontLocator(explicitPath: name).locate()
                if byPath[located] == nil { byPath[located] = try instrument.synth.loadExtraSoundFont(at: located) }
                fonts[channel] = byPath[located]
            } catch { throw .channelSoundFont(channel: channel, "\(error)") }
        }
        channelFonts = fonts
        do throws(FluidSynthError) { soundFont = try instrument.synth.loadSoundFont(at: path) } catch {
            throw .soundFont(error)
        }
        self.instrument = instrument
        self.pcm = playback
        let renderer = Renderer(instrument: instrument, eventCapacity: 4096)
        renderer.prepare(sampleRate: Double(playback.sampleRate), maxFrames: playback.periodFrames)
        self.renderer = renderer
    }

    deinit { stop() }

    /// The sequencer's transport, with audio. Any thread.
    public var transport: Transport? { renderer?.transport }

    /// Schedules a piece to play from the start of the output (with audio;
    /// before `start`): `tempo` scales its speed, `start` seeks (seconds),
    /// `loop` repeats it. Held notes are released at its end.
    public func load(_ score: Score, tempo: Double = 1, start: Double = 0, loop: Bool = false, pieceTempo: Double = 120) {
        guard let renderer else { return }
        self.pieceTempo = pieceTempo > 0 ? pieceTempo : 120
        hasPiece = true
        renderer.releasesNotesAtEnd = true
        renderer.transport.setTempoScale(tempo)
        renderer.transport.setLoop(loop)
        renderer.schedule(score, startingAt: 0)
        if start > 0 { renderer.transport.seek(to: start) }
    }

    /// Connects the sources asked for, starts the output thread (audio) and
    /// the input thread. Returns the sources connected now.
    @discardableResult
    public func start() throws(Failure) -> [PortInfo] {
        var connected: [PortInfo] = []
        if let client { do {
            for spec in options.connect { connected += try client.connect(source: spec) }
            if options.autoconnect {
                connected += try client.setAutoconnect(.allSources)
            } else if let pattern = mapping?.port {
                connected += try client.setAutoconnect(.named(pattern))
            }
        } catch { throw .alsa(error) } }

        if let surface, let renderer {
            let parameters = renderer.parameters, events = renderer.events, transport = renderer.transport
            let pieceTempo = self.pieceTempo
            surface.subscribe { change in
                if case .transport = change.address {
                    TransportRouting.apply(change, to: transport, pieceTempo: pieceTempo)
                } else {
                    ParameterRouting.apply(change, parameters: parameters, events: events)
                }
            }
        }
        if let instrument, output == nil {
            // The mapping's channel set-up, before the output thread owns the synth:
            // FluidSynth's bank numbers (128 = percussion) need its bank-select call.
            for setup in mapping?.channels ?? [] where setup.bank != nil || setup.program != nil || setup.soundFont != nil {
                let channel = setup.channel.intValue, bank = setup.bank ?? 0, program = Int(setup.program?.value ?? 0)
                let ok = channelFonts[channel].map {
                    instrument.synth.select(channel: channel, soundFont: $0, bank: bank, program: program)
                } ?? instrument.synth.select(channel: channel, bank: bank, program: program)
                if !ok { note("channel \(channel + 1): no preset at bank \(bank) program \(program)") }
            }
        }
        if let surface, options.logParameterChanges {
            let shared = self.shared
            surface.subscribe { change in shared.log.withLock { $0.append("parameter \(change)") } }
        }
        if let renderer, let pcm {
            do {
                output = try OutputThread(renderer: renderer, pcm: pcm, shared: shared, realtime: options.realtime)
            } catch { throw .alsa(error) }
        }
        startControlThread()
        let events = renderer?.events
        do {
            try client?.start { [weak self] event in self?.handle(event, events: events) }
        } catch { throw .alsa(error) }
        return connected
    }

    /// The control thread: `tick()` the surface once per rendered block (polled
    /// every half period), or every 10 ms without audio.
    private func startControlThread() {
        guard surface != nil, control == nil else { return }
        let withAudio = output != nil
        let transport = hasPiece ? renderer?.transport : nil, pieceTempo = self.pieceTempo
        // Poll at half a period (1…10 ms): each block is seen, without waking a
        // thousand times a second for long periods.
        let interval = withAudio ? UInt32(min(max((pcm?.periodDuration ?? 0.002) * 500_000, 1_000), 10_000)) : 10_000
        let feedbackEvery = max(1, 100_000 / Int(interval))
        var lastBlocks = -1, calls = 0
        control = ControlThread(intervalMicroseconds: interval) { [weak self] in
            guard let self, let surface = self.surface else { return }
            calls &+= 1
            // Every ~100 ms: the transport's state back to the controls (the
            // view, soft takeover), without publishing anything.
            if let transport, calls % feedbackEvery == 0 {
                let duration = transport.duration
                self.surfaceLock.withLock { _ in
                    surface.parameterDidChange(.transport(.position), value: duration > 0 ? 100 * transport.position / duration : 0)
                    surface.parameterDidChange(.transport(.tempo), value: transport.tempoScale * pieceTempo)
                    surface.parameterDidChange(.transport(.loop), value: transport.isLooping ? 1 : 0)
                }
            }
            if withAudio {
                let blocks = self.shared.blocks.load(ordering: .relaxed)
                guard blocks != lastBlocks else { return }
                lastBlocks = blocks
            }
            self.surfaceLock.withLock { _ in surface.tick() }
        }
    }

    /// Feeds one message as if it came from the sequencer (tests, other inputs).
    /// Any thread but the output thread.
    public func receive(_ message: MIDIMessage, from source: SeqAddress = SeqAddress(client: 0, port: 0)) {
        handle(.message(message, source: source), events: renderer?.events)
    }

    /// Input thread: one sequencer event.
    private func handle(_ event: SequencerEvent, events: EventQueue?) {
        switch event {
        case .message(let message, let source), .release(let message, let source):
            shared.counts.withLock { $0[source, default: 0] += 1 }
            // One lock for the surface and the queue's producer side: the
            // control thread's `tick()` may publish (and push) too.
            surfaceLock.withLock { _ in
                var used = false
                if let surface, case .controlChange = message {
                    used = surface.receive(message)
                } else if let surface, message.channel != nil {
                    used = surface.receive(message)
                    if message.isNoteOff { used = false }  // a note-off always reaches the sampler
                }
                if !used, let events, let channelMessage = ChannelMessage(message) {
                    events.push(.now(channelMessage))
                } else if let events, case .sysEx(let sysEx) = message {
                    // GM/GS/XG resets, drum parts, tuning: through the queue's byte ring.
                    sysEx.data.withUnsafeBufferPointer { _ = events.pushSysEx($0) }
                }
            }
        case .subscribed(let a):
            shared.sources.withLock { _ = $0.insert(a) }
            note("connected \(a)")
        case .unsubscribed(let a):
            shared.sources.withLock { _ = $0.remove(a) }
            note("disconnected \(a) (its notes released)")
        case .autoconnected(let p):
            shared.sources.withLock { _ = $0.insert(p.address) }
            note("autoconnected \(p)")
        case .portAppeared, .autoconnectFailed, .inputOverrun:
            if case .autoconnectFailed(let p, let e) = event { note("could not connect \(p): \(e)") }
            if case .inputOverrun = event { note("MIDI input overrun: events lost") }
        }
    }

    private func note(_ line: String) { shared.log.withLock { $0.append(line) } }

    /// Log lines since the last call (connections, releases, failures). Any thread.
    public func takeLog() -> [String] { shared.log.withLock { let l = $0; $0.removeAll(); return l } }

    /// The controls' current states, for the view. Any thread.
    public func controlStates() -> [ControlState] {
        guard let surface else { return [] }
        return surfaceLock.withLock { _ in surface.states }
    }

    public func status() -> Status {
        let blocks = shared.blocks.load(ordering: .relaxed)
        let total = Double(shared.renderNanosTotal.load(ordering: .relaxed)) / 1e9
        return Status(
            device: pcm?.summary, realtime: shared.realtime.withLock { $0 }, xruns: pcm?.xruns ?? 0, blocks: blocks,
            renderMean: blocks > 0 ? total / Double(blocks) : 0,
            renderWorst: Double(shared.renderNanosWorst.load(ordering: .relaxed)) / 1e9,
            budget: pcm?.periodDuration ?? 0, queueOverflows: renderer?.events.overflowCount ?? 0,
            peak: renderer?.meters.peak ?? 0, rms: renderer?.meters.rms ?? 0,
            messagesBySource: shared.counts.withLock { $0 }, sources: shared.sources.withLock { $0 },
            failure: shared.failure.withLock { $0 })
    }

    /// Ends cleanly: input stopped (sources' held notes no longer matter),
    /// all sound off, the device drained, the ports closed. Idempotent.
    public func stop() {
        client?.stop()
        control?.stop()
        control = nil
        shared.stop.store(true, ordering: .releasing)
        output?.join()
        output = nil
    }
}

/// The output thread: render a period, write it, until asked to stop.
private final class OutputThread {
    private var thread: pthread_t = 0

    init(renderer: Renderer, pcm: PCMPlayback, shared: LiveHost.Shared, realtime: Bool) throws(ALSAError) {
        let body = Body(renderer: renderer, pcm: pcm, shared: shared, realtime: realtime)
        let box = Unmanaged.passRetained(body).toOpaque()
        let rc = pthread_create(&thread, nil, { arg in
            Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }, box)
        if rc != 0 {
            Unmanaged<Body>.fromOpaque(box).release()
            throw ALSAError(function: "pthread_create", code: -rc, context: "output thread")
        }
    }

    func join() { pthread_join(thread, nil) }

    private final class Body {
        let renderer: Renderer, pcm: PCMPlayback, shared: LiveHost.Shared, realtime: Bool
        init(renderer: Renderer, pcm: PCMPlayback, shared: LiveHost.Shared, realtime: Bool) {
            self.renderer = renderer; self.pcm = pcm; self.shared = shared; self.realtime = realtime
        }

        func run() {
            if realtime {
                let refusal = RealtimeScheduling.requestFIFO()
                shared.setRealtime(refusal.map { "refused (\($0)); running at normal priority" } ?? "SCHED_FIFO granted")
            }
            let frames = pcm.periodFrames
            let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * frames)
            buffer.initialize(repeating: 0)
            defer { buffer.deallocate() }
            var t0 = timespec(), t1 = timespec()
            // The block loop: no allocation, lock, log or throw.
            while !shared.stopRequested {
                clock_gettime(CLOCK_MONOTONIC, &t0)
                renderer.render(frames: frames, into: buffer)
                clock_gettime(CLOCK_MONOTONIC, &t1)
                shared.recordBlock(nanos: (t1.tv_sec - t0.tv_sec) * 1_000_000_000 + (t1.tv_nsec - t0.tv_nsec))
                if let error = pcm.write(UnsafeBufferPointer(buffer)) {
                    shared.setFailure("\(error)")
                    return
                }
            }
            // Shutdown: all sound off, one more block so the release is heard, drain.
            renderer.silence()
            renderer.render(frames: frames, into: buffer)
            _ = pcm.write(UnsafeBufferPointer(buffer))
            try? pcm.drain()
        }
    }
}

extension LiveHost.Shared {
    // What the output thread touches: atomics only in the block loop.
    var stopRequested: Bool { stop.load(ordering: .acquiring) }
    func recordBlock(nanos: Int) {
        blocks.add(1, ordering: .relaxed)
        renderNanosTotal.add(nanos, ordering: .relaxed)
        if nanos > renderNanosWorst.load(ordering: .relaxed) { renderNanosWorst.store(nanos, ordering: .relaxed) }
    }
    func setFailure(_ text: String) { failure.withLock { $0 = text } }
    func setRealtime(_ text: String) { realtime.withLock { $0 = text } }
}

/// A thread that calls `body` every `intervalMicroseconds` until stopped:
/// the host's control thread. Not real-time.
private final class ControlThread {
    private var thread: pthread_t = 0
    private let body: Body

    init(intervalMicroseconds: UInt32, _ work: @escaping () -> Void) {
        body = Body(interval: intervalMicroseconds, work: work)
        let box = Unmanaged.passRetained(body).toOpaque()
        if pthread_create(&thread, nil, { arg in
            Unmanaged<Body>.fromOpaque(arg!).takeRetainedValue().run()
            return nil
        }, box) != 0 {
            Unmanaged<Body>.fromOpaque(box).release()
            thread = 0
        }
    }

    func stop() {
        body.stop.store(true, ordering: .releasing)
        if thread != 0 { pthread_join(thread, nil); thread = 0 }
    }

    private final class Body: @unchecked Sendable {
        let interval: UInt32
        let work: () -> Void
        let stop = Atomic<Bool>(false)
        init(interval: UInt32, work: @escaping () -> Void) { self.interval = interval; self.work = work }
        func run() {
            while !stop.load(ordering: .acquiring) {
                work()
                usleep(interval)
            }
        }
    }
}
