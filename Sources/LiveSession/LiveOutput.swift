import Engine
import Hosting
import LV2
import MIDI
import SoundFile
import Synchronization
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// The output side of a live session: `LiveAudio` (the device or JACK client,
/// the sampler, the renderer the `HostAssembly` built, `--record`, the tracks,
/// the spectrum), the piece it plays under its transport, and the
/// `AudioSupervisor` that reopens the output when it fails. Started once and
/// finished once; the recording and the plugins' states are written at the finish.
///
/// Threads: `load`, `start` and `finish` from the host's owner thread; the rest from any.
/// `@unchecked Sendable`: its own mutable state is in `state` (a `Mutex`); `LiveAudio`'s
/// sampler, plugin host and slots (not `Sendable`) are touched only by the owner thread
/// before `start` and after `finish`, and by the render thread between; what other
/// threads read of them (counters, meters) are atomics of theirs.
final class LiveOutput: @unchecked Sendable {
    let audio: LiveAudio
    /// Written by the output's threads, read by the control loop and the status.
    let shared: OutputState
    private let log: HostLog
    /// `--clock-out` given: the piece starts once the output's clock is known.
    private let sendsClock: Bool
    private let giveUpAfter: Double?
    private let verbose: Bool

    /// The piece scheduled on the renderer (`load`), nil before one is.
    struct LoadedPiece {
        /// Its first tempo (bpm): `transport.tempo` is relative to it.
        var tempo: Double
        /// Where it starts (seconds): where `--link` starts it.
        var start: Double
        /// A file's (`play`), not the empty one the session runs its transport on (`live`).
        var isFile: Bool
    }

    private struct State {
        var piece: LoadedPiece?
        var supervisor: AudioSupervisor?
        var finished = false
    }
    private let state = Mutex(State())

    init(audio: LiveAudio, shared: OutputState, options: LiveHost.Options, log: HostLog) {
        self.audio = audio; self.shared = shared; self.log = log
        sendsClock = !options.clockOut.isEmpty
        giveUpAfter = options.giveUpAfter
        verbose = options.logParameterChanges
    }

    var transport: Transport { audio.renderer.transport }
    var piece: LoadedPiece? { state.withLock { $0.piece } }

    /// Schedules a piece to play from the start of the output (before `start`):
    /// `tempo` scales its speed, `start` seeks (seconds), `loop` repeats it. Held
    /// notes are released at its end.
    func load(_ score: Score, tempo: Double = 1, start: Double = 0, loop: Bool = false, pieceTempo: Double = 120, isFile: Bool = true) {
        let renderer = audio.renderer, output = audio.output
        var score = score
        // The piece lasts until its longest track ends.
        score.duration = max(score.duration, audio.tracks.map(\.duration).max() ?? 0)
        state.withLock { $0.piece = LoadedPiece(tempo: pieceTempo > 0 ? pieceTempo : 120, start: start, isFile: isFile) }
        renderer.releasesNotesAtEnd = true
        renderer.transport.setTempoScale(tempo)
        renderer.transport.setLoop(loop)
        // With --clock-out the piece starts once the output's clock is known (after its prefill
        // and one period), so its first clocks are not due before they can be timed. JACK makes
        // a connection a few cycles after the client asks (after activation): a quarter of a
        // second more, so the Start and the first clocks reach the followers.
        let jackConnecting = output is JACKOutput ? output.sampleRate / 4 : 0
        renderer.schedule(score, startingAt: sendsClock ? UInt64(output.prefillFrames + 2 * output.maxFrames + jackConnecting) : 0)
        if start > 0 { renderer.transport.seek(to: start) }
    }

    /// Live with tracks and no piece: an empty piece as long as the longest track carries them (the transport moves it).
    func loadTrackPiece() {
        if piece == nil, !audio.tracks.isEmpty { load(Score(events: []), isFile: false) }
    }

    /// Without a piece (live): an empty one a day long, for the transport (`transport.tempo`)
    /// to run the clock out, the JACK transport and the Link session on.
    func loadTransportPiece() {
        if piece == nil { load(Score(events: [], duration: 24 * 3600), isFile: false) }
    }

    /// Starts the output's render loop (`clockOut` and `link` fed after each
    /// block), then the supervisor that reopens it after a fault.
    func start(keyboard: KeyboardRouting, clockOut: ClockOutTap?, link: LinkFollowing?) throws(LiveHost.Failure) {
        guard !audio.started else { return }
        try audio.start(shared, clockOut: clockOut, link: link)
        let parts = AudioSupervisor.Parts(output: audio.output, shared: shared, renderer: audio.renderer, clock: audio.clock,
                                          keyboard: keyboard, jackMIDIInbox: audio.jackMIDI?.inbox,
                                          transport: piece != nil ? transport : nil, log: log, verbose: verbose)
        let recovery = AudioRecovery(giveUpAfter: giveUpAfter)
        try state.withLock { s throws(LiveHost.Failure) in
            do throws(ThreadError) { s.supervisor = try AudioSupervisor(parts, recovery: recovery) } catch { throw .thread(error) }
        }
    }

    /// No reopen from here on: the output is finished as it is (playing, or gone).
    func stopSupervisor() {
        let supervisor = state.withLock { s in defer { s.supervisor = nil }; return s.supervisor }
        supervisor?.stop()
    }

    /// Waits until the output has rendered `n` more blocks (at most `timeout` seconds; not at all before it started).
    func waitForBlocks(_ n: Int, timeout: Double = 0.3) {
        guard audio.started else { return }
        let first = shared.blocks.load(ordering: .relaxed)
        var waited = 0.0
        while shared.blocks.load(ordering: .relaxed) &- first < n && waited < timeout {
            usleep(1_000)
            waited += 0.001
        }
    }

    /// After `shared.stop` is set: the output's last block and end, then the
    /// recording written and the plugins' states saved (`--plugin-state`). Once.
    func finish() {
        let first = state.withLock { s in defer { s.finished = true }; return !s.finished }
        audio.finish()
        audio.pluginSlots.collectRetired()
        guard first else { return }
        finishRecording()
        savePluginStates()
    }

    /// The session never ran: no half-written recording is left behind.
    func discard() {
        audio.recorder?.discard()
        state.withLock { $0.finished = true }
    }

    /// Writes the recording and logs where it went or why not.
    private func finishRecording() {
        guard let recorder = audio.recorder else { return }
        do throws(SoundFileError) {
            try recorder.finish()
            let dropped = recorder.droppedBlocks
            log.append("recorded \(recorder.path): \(recorder.writtenBlocks) blocks"
                + (dropped > 0 ? ", \(dropped) blocks DROPPED (the disk did not keep up)" : ", none dropped"))
        } catch { log.append("recording failed: \(error)") }
    }

    /// `--plugin-state DIR`: each plugin's state written there, after the output stopped.
    private func savePluginStates() {
        guard let plugins = audio.plugins, plugins.stateDirectory != nil else { return }
        do throws(LV2Error) {
            let files = try plugins.saveStates()
            if !files.isEmpty { log.append("plugin state saved: \(files.joined(separator: ", "))") }
        } catch { log.append("plugin state not saved: \(error)") }
    }

    /// The output's part of the view's status: device, load, meters, counters. Any thread.
    func report(into status: inout LiveHost.Status) {
        let renderer = audio.renderer, output = audio.output
        status.device = output.summary
        status.xruns = output.xruns
        status.budget = output.periodDuration
        status.queueOverflows = renderer.events.overflowCount + (audio.jackMIDI?.inbox.overflowCount ?? 0)
        status.refusedSynthCalls = audio.sampler.instrument.refusedCount
        status.refusedParameters = renderer.parameters.refusedCount
        status.droppedMessages = renderer.droppedMessages
        status.recordDroppedBlocks = audio.recorder?.droppedBlocks ?? 0
        status.trackUnderruns = audio.tracks.reduce(0) { $0 + $1.underruns }
        status.spectrum = audio.spectrum.levels
        status.voices = audio.sampler.instrument.activeVoices
        status.peak = renderer.meters.peak
        status.rms = renderer.meters.rms
        status.stripPeaks = (0..<renderer.meters.stripCount).map { renderer.meters.stripPeak($0) }
        status.stripNames = renderer.meters.names
        status.stripKeys = renderer.meters.strips.map(\.key)
        status.timing = audio.events.timing
    }
}
