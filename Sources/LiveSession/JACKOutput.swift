import Engine
import JACK
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `-a jack`: what the JACK client connects on request.
public struct JACKOptions: Sendable {
    /// `--jack-connect` (fluidsynth's `-j`): the outputs to the first two physical playback ports (`system:playback_*`).
    public var connectOutputs = false
    /// `--jack-midi-connect`: JACK MIDI sources to connect to `midi_in`, by full name or part of one.
    public var midiSources: [String] = []
    public init() {}
}

/// Live audio through a JACK server (jackd, or PipeWire's JACK: the same
/// calls): two audio outputs `out_1`, `out_2` and a MIDI input `midi_in`;
/// MIDI outputs on demand (`clock` for `--clock-out`, one per zone
/// destination: `JACKMIDIOutputs`), written in the cycle their audio is.
/// JACK's process callback is the render thread (the real-time rules hold
/// there); the server's sample rate is the renderer's, and its period is
/// followed as it changes.
///
/// JACK MIDI: each cycle, the events of `midi_in` go into `midiInbox` at
/// their offset in the cycle one period on (the frame where the next cycle
/// plays that offset): `JACKMIDIInput` takes them from there to the same
/// router as the ALSA sequencer's input (controls, learn, `--record-midi`),
/// which places them in the renderer's queue at that frame. JACK already
/// delivers events a period after they came, at their offsets, so their
/// timing stays exact up to FluidSynth's 64-frame grid.
///
/// When the server goes (killed, restarted, `jack_on_shutdown`), the fault goes
/// to `shared.fault`; `reopen` then opens a client of the same name on the
/// server that came back, registers the same ports, and goes on with the same
/// cycle. The client and its ports change only while no process callback runs
/// (the old server's is gone, the new client not yet active).
final class JACKOutput: AudioOutput, JACKClientDelegate, @unchecked Sendable {
    /// The client on the server now; read by the views while `reopen` may replace it.
    private let clientBox: Mutex<JACKClient>
    var client: JACKClient { clientBox.withLock { $0 } }
    private var left: JACKPort, right: JACKPort, midiIn: JACKPort
    private let clientName: String
    private let options: JACKOptions
    let sampleRate: Int
    /// The period at activation: the renderer's block. A larger period later is rendered in pieces of this size.
    let maxFrames: Int
    private let period: Atomic<Int>
    private let xrunCount = Atomic<Int>(0)
    /// Set when the server went away (not when only its rate changed): its client is abandoned, not closed.
    private let serverGone = Atomic<Bool>(false)
    /// Set by the notification thread when the server's rate changes: the process callback outputs silence from then on.
    private let rateRefused = Atomic<Bool>(false)
    /// The last block after `stop` is rendered (the process thread's answer to `finish`).
    private let ended = Atomic<Bool>(false)
    /// Set in `start` before `activate`, read only by the process thread after it.
    private var cycle: OutputCycle? {
        didSet { processCycle = cycle.map { Unmanaged.passUnretained($0) } }
    }
    /// `cycle` as the process thread reads it: unretained (a strong load of the stored
    /// reference was a swift_retain and a swift_release every cycle); `cycle` keeps it alive.
    private var processCycle: Unmanaged<OutputCycle>?
    private let buffer: UnsafeMutableBufferPointer<Float>
    /// `midi_in`'s events, for `JACKMIDIInput` (this is its one producer).
    private let midiInbox: EventQueue
    /// Process thread: tells a `midi_in` buffer read already (after an xrun) from a new one.
    private var midiRereads = JACKMIDIRereads()
    #if DEBUG
    /// `CARILLON_JACK_MIDI_TRACE`: each call's `midi_in` (debug builds only).
    private let midiTrace = JACKMIDITrace.fromEnvironment()
    #endif
    /// The client as the process thread sees it (no lock there, unretained: `clientBox` holds
    /// it): set where `clientBox` is, while no callback runs.
    private var cycleClient: Unmanaged<JACKClient>
    /// The MIDI outputs (`--clock-out`'s `clock`, the zones' ports), written each cycle.
    let midiOutputs: JACKMIDIOutputs

    /// Opens a client on the running server and registers its ports. Nothing plays until `start`.
    init(clientName: String, options: JACKOptions, midiInbox: EventQueue) throws(LiveHost.Failure) {
        let client: JACKClient
        do {
            client = try JACKClient(name: clientName)
            left = try client.register("out_1", .audio, .output)
            right = try client.register("out_2", .audio, .output)
            midiIn = try client.register("midi_in", .midi, .input)
        } catch { throw .jack(error) }
        clientBox = Mutex(client)
        cycleClient = .passUnretained(client)
        self.options = options
        self.clientName = clientName
        self.midiInbox = midiInbox
        midiOutputs = JACKMIDIOutputs(client: client)
        sampleRate = client.sampleRate
        maxFrames = client.bufferSize
        period = Atomic(maxFrames)
        buffer = .allocate(capacity: 2 * maxFrames)
        buffer.initialize(repeating: 0)
    }

    deinit {
        client.deactivate()
        buffer.deallocate()
    }

    var summary: String {
        "JACK \(client.name):out_1, out_2, MIDI in \(client.name):midi_in (server '\(client.serverName)'), "
            + "\(sampleRate) Hz, \(period.load(ordering: .relaxed)) frames per period"
    }
    var periodDuration: Double { Double(period.load(ordering: .relaxed)) / Double(sampleRate) }
    var xruns: Int { xrunCount.load(ordering: .relaxed) }
    /// JACK calls the process callback when it wants each block.
    var prefillFrames: Int { 0 }

    func start(_ cycle: OutputCycle) throws(LiveHost.Failure) {
        guard self.cycle == nil else { return }
        self.cycle = cycle
        try activate(cycle, connections: .required)
    }

    /// At the start a connection asked for that cannot be made is a mistake to
    /// report; after a server restart the other clients come back in their own
    /// time, so what is missing is retried (`maintain`).
    private enum Connections { case required, whenTheyAppear }
    /// `--jack-midi-connect` sources to connect once they appear again after a restart.
    private let missingSources = Mutex<[String]>([])

    private func activate(_ cycle: OutputCycle, connections: Connections) throws(LiveHost.Failure) {
        let client = self.client
        cycle.shared.realtime.withLock {
            $0 = client.isRealtime ? "JACK's process thread (real-time)" : "JACK's process thread (the server runs without real-time: jackd -R)"
        }
        do throws(JACKError) {
            try client.activate(self)
            if options.connectOutputs {
                let playback = client.ports(.audio, .input, physical: true)
                guard !playback.isEmpty else {
                    throw JACKError(kind: .noMatchingPort(spec: "system:playback_*", candidates: client.ports(.audio, .input)),
                                    function: "jack_get_ports", code: 0)
                }
                // Stereo to the first two; a mono device gets both.
                try client.connect(left.fullName, to: playback[0])
                try client.connect(right.fullName, to: playback[min(1, playback.count - 1)])
            }
            for spec in options.midiSources {
                do throws(JACKError) {
                    for source in try client.sources(matching: spec, .midi) { try client.connect(source, to: midiIn.fullName) }
                } catch {
                    guard connections == .whenTheyAppear else { throw error }
                    missingSources.withLock { $0.append(spec) }
                }
            }
            try midiOutputs.connectDeferred()
        } catch { throw .jack(error) }
    }

    func halt() {
        // The server is gone: its process thread with it. Deactivating waits for one still running (it returns at once when none does).
        client.deactivate()
        // Never closed, even at the end (`JACKClient.abandon`: libjack crashes closing a client of a dead server).
        if serverGone.load(ordering: .acquiring) { client.abandon() }
    }

    func reopen() throws(LiveHost.Failure) {
        guard let cycle, !client.isActive else { return }
        let fresh: JACKClient, ports: (JACKPort, JACKPort, JACKPort)
        do {
            fresh = try JACKClient(name: clientName)
            ports = (try fresh.register("out_1", .audio, .output), try fresh.register("out_2", .audio, .output),
                     try fresh.register("midi_in", .midi, .input))
        } catch { throw .jack(error) }
        // The renderer keeps its rate and block: a server that comes back otherwise is refused (and tried again).
        guard fresh.sampleRate == sampleRate else {
            throw .deviceChanged("the JACK server came back at \(fresh.sampleRate) Hz; this session plays \(sampleRate) Hz")
        }
        do { try midiOutputs.rebind(to: fresh) } catch { throw .jack(error) }
        // The old client goes: abandoned by `halt` if its server went away, closed if the server lives (its rate changed).
        serverGone.store(false, ordering: .releasing)
        clientBox.withLock { $0 = fresh }
        cycleClient = .passUnretained(fresh)
        midiRereads = JACKMIDIRereads()   // the new server's cycles owe nothing to the old one's
        (left, right, midiIn) = ports
        period.store(fresh.bufferSize, ordering: .relaxed)
        rateRefused.store(false, ordering: .relaxed)
        ended.store(false, ordering: .relaxed)
        do { try activate(cycle, connections: .whenTheyAppear) } catch {
            fresh.deactivate()   // tried again from the start, on another new client
            throw error
        }
    }

    func maintain() {
        midiOutputs.reconnectAfterRestart()
        let specs = missingSources.withLock { $0 }
        guard !specs.isEmpty, client.isActive else { return }
        for spec in specs {
            guard let sources = try? client.sources(matching: spec, .midi) else { continue }
            for source in sources { try? client.connect(source, to: midiIn.fullName) }
            missingSources.withLock { $0.removeAll { $0 == spec } }
        }
    }

    func finish() {
        guard let cycle, client.isActive else { return }
        // The process thread renders the last block (all sound off) once it sees `stop`; wait up to 0.5 s for it.
        for _ in 0..<100 where !ended.load(ordering: .acquiring) && cycle.shared.fault.withLock({ $0 }) == nil { usleep(5_000) }
        client.deactivate()
        #if DEBUG
        midiTrace?.write()
        #endif
    }

    // MARK: JACK's threads

    func process(frames: Int) {
        let outLeft = left.audioBuffer(frames: frames), outRight = right.audioBuffer(frames: frames)
        guard let processCycle, !rateRefused.load(ordering: .relaxed), !ended.load(ordering: .relaxed) else {
            outLeft.update(repeating: 0, count: frames); outRight.update(repeating: 0, count: frames)
            midiOutputs.writeCycle(start: 0, frames: frames)
            return
        }
        processCycle._withUnsafeGuaranteedRef { process(frames: frames, cycle: $0, into: outLeft, outRight) }
    }

    /// One cycle of the session's `cycle`, guaranteed (not retained) by the caller.
    private func process(frames: Int, cycle: OutputCycle, into outLeft: UnsafeMutablePointer<Float>,
                         _ outRight: UnsafeMutablePointer<Float>) {
        let cycleStartFrame = cycleClient._withUnsafeGuaranteedRef { $0.cycleStartFrame }
        let renderer = cycle.renderer
        let cycleStart = renderer.sampleTime
        if cycle.shared.stop.load(ordering: .acquiring) {
            let n = min(frames, maxFrames)
            cycle.renderLast(frames: n, into: buffer)
            midiOutputs.writeCycle(start: cycleStart, frames: frames)
            deinterleave(n, into: outLeft, outRight, at: 0)
            (outLeft + n).update(repeating: 0, count: frames - n); (outRight + n).update(repeating: 0, count: frames - n)
            ended.store(true, ordering: .releasing)
            return
        }
        let input = midiIn.midiEvents(frames: frames)
        let next = renderer.sampleTime &+ UInt64(frames)
        // A buffer read already (the sender has not run since: an xrun) is not read again.
        midiRereads.begin(cycle: cycleStartFrame, frames: frames)
        #if DEBUG
        midiTrace?.begin(cycle: cycleStartFrame, frames: frames)
        #endif
        for i in 0..<input.count {
            if let event = input.event(i) {
                midiRereads.add(offset: event.offset, bytes: event.bytes)
                #if DEBUG
                midiTrace?.add(offset: event.offset, bytes: event.bytes)
                #endif
            }
        }
        let reread = midiRereads.isRepeat()
        #if DEBUG
        midiTrace?.decided(dropped: reread)
        #endif
        // The events as judged (a copy), not the buffer read again: the sender may be writing it now.
        let inbox = midiInbox
        if !reread, !midiRereads.forEachKept({ _ = inbox.push(midiBytes: $1, frame: next &+ UInt64($0)) }) {
            for i in 0..<input.count {   // more than JACKMIDIRereads keeps: from the buffer
                if let event = input.event(i) { inbox.push(midiBytes: event.bytes, frame: next &+ UInt64(event.offset)) }
            }
        }
        // A period longer than the one prepared for: in pieces (the events above land in theirs).
        var done = 0
        while done < frames {
            let n = min(frames - done, maxFrames)
            cycle.render(frames: n, into: buffer)
            deinterleave(n, into: outLeft, outRight, at: done)
            done += n
        }
        // MIDI out in the same cycle as the audio it goes with: the clock at its frames, the zones' at the start.
        // Unretained: the cycle holds its tap (binding it to a local was a retain and a release each cycle).
        if let tap = cycle.clockOut.map(Unmanaged.passUnretained) { tap._withUnsafeGuaranteedRef { midiOutputs.takeClock(from: $0) } }
        midiOutputs.writeCycle(start: cycleStart, frames: frames)
        midiRereads.end(cycle: cycleStartFrame)
        #if DEBUG
        midiTrace?.end(cycle: cycleStartFrame)
        #endif
    }

    @inline(__always)
    private func deinterleave(_ frames: Int, into outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>, at offset: Int) {
        for i in 0..<frames {
            outLeft[offset + i] = buffer[2 * i]
            outRight[offset + i] = buffer[2 * i + 1]
        }
    }

    func bufferSizeDidChange(to frames: Int) { period.store(frames, ordering: .relaxed) }

    func sampleRateDidChange(to rate: Int) {
        guard rate != sampleRate else { return }   // the call at activation, with the current rate
        rateRefused.store(true, ordering: .relaxed)
        let error = JACKError(kind: .sampleRateChanged(from: sampleRate, to: rate), function: "jack_set_sample_rate_callback", code: 0)
        cycle?.shared.fault.withLock { $0 = "\(error)" }
    }

    func xrun() { xrunCount.add(1, ordering: .relaxed) }

    func serverDidShutDown(reason: String) {
        serverGone.store(true, ordering: .releasing)
        cycle?.shared.fault.withLock { $0 = "the JACK server stopped or dropped carillon (\(reason))" }
    }
}
