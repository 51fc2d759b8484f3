import ALSA
import Controls
import Hosting
import MIDI
import Synchronization
import Threads

/// The input side of a live session: the ALSA sequencer client (keyboards,
/// controllers, `aplaymidi`) and JACK MIDI (`-a jack`), both into one
/// `InputRouter` that counts, records (`--record-midi`) and hands each message
/// to the keyboard's way in (`KeyboardRouting`: controls, zones, queue); the
/// zones' external ports; the controllers' feedback port.
///
/// Threads: `open`, `start`, `stop` and `finishRecording` from the host's owner
/// thread; `receive` and the counts from any. Its mutable state is in `state` (a `Mutex`).
final class LiveInput: Sendable {
    /// Nil when the sequencer cannot be opened and input is optional (or JACK MIDI is the input).
    let client: SequencerClient?
    /// Controls, zones, queue: the keyboard's way in, shared by every input.
    let keyboard: KeyboardRouting
    let router: InputRouter
    /// The zones' external ports: ALSA sequencer ports (nil without the sequencer), or JACK MIDI outputs with `-a jack`.
    let zoneOutput: ALSAZoneOutput?
    let jackZoneOutput: JACKZoneOutput?
    /// `-a jack`: JACK MIDI's thread into the router (its inbox is filled by the output's process callback).
    private let jackMIDI: JACKMIDIInput?
    private let midiRecorder: MIDIRecorder?
    private let hub: ControlHub
    private let log: HostLog
    private let connect: [String], autoconnect: Bool, feedbackTo: [String]

    private struct State {
        var feedback: ControllerFeedback?
        var keyboardStarted = false
        var recordingFinished = false
    }
    private let state = Mutex(State())

    /// The sequencer client, or nil (logged) where the session may go on without it:
    /// `--no-audio`, a player's optional input, JACK MIDI as the input.
    static func openSequencer(options: LiveHost.Options, log: HostLog) throws(LiveHost.Failure) -> SequencerClient? {
        let client: SequencerClient
        do { client = try SequencerClient(name: options.clientName) } catch {
            guard !options.audio || options.inputOptional || options.backend == .jack else { throw .alsa(error) }
            log.append(options.backend == .jack && options.audio ? "no ALSA MIDI input (JACK MIDI only): \(error)" : "no MIDI input: \(error)")
            return nil
        }
        if let problem = client.arrivalStampingError {
            log.append("MIDI input not stamped on arrival (\(problem)): events are timed when the input thread reads them")
        }
        return client
    }

    /// The router over `audio`'s queue (nil without audio) and the zones' ports (JACK's with `-a jack`).
    init(client: SequencerClient?, hub: ControlHub, audio: LiveAudio?, midiEffects: [MIDIEffectSpec],
         options: LiveHost.Options, log: HostLog) {
        self.client = client; self.hub = hub; self.log = log
        connect = options.connect; autoconnect = options.autoconnect; feedbackTo = options.feedback
        jackMIDI = audio?.jackMIDI
        let recorder = options.recordMIDI.map { MIDIRecorder(path: $0, sampleRate: audio?.output.sampleRate, applied: audio?.takeStamps) }
        midiRecorder = recorder
        let jackZones = (audio?.output as? JACKOutput).map { JACKZoneOutput(outputs: $0.midiOutputs, log: log) }
        let alsaZones = jackZones == nil ? client.map { ALSAZoneOutput(client: $0, log: log) } : nil
        zoneOutput = alsaZones
        jackZoneOutput = jackZones
        keyboard = KeyboardRouting(hub: hub, events: audio?.events, external: jackZones ?? alsaZones,
                                   effects: midiEffects, effectSlots: audio?.pluginSlots.midiEffectSlots ?? 0)
        // The input thread above the output thread (requestFIFO's default, 70): pushes within the latency.
        router = InputRouter(keyboard: keyboard, zoneOutput: alsaZones,
                             sourceName: { [weak client] a in (try? client?.ports())?.first { $0.address == a }?.searchableName },
                             log: log, midiRecorder: recorder, priority: options.realtime && audio?.clock != nil ? 75 : nil)
    }

    /// Connects the sources asked for (`--connect`, `--autoconnect`, else the
    /// mapping's `port:`), the feedback port, and starts the MIDI recording's clock.
    /// Returns the sources connected now.
    func open() throws(LiveHost.Failure) -> [PortInfo] {
        var connected: [PortInfo] = []
        if let client { do {
            for spec in connect { connected += try client.connect(source: spec) }
            if autoconnect {
                connected += try client.setAutoconnect(.allSources)
            } else if let pattern = hub.mapping?.port {
                connected += try client.setAutoconnect(.named(pattern))
            }
            if state.withLock({ $0.feedback == nil }), hub.mapping != nil {
                let feedback = try ControllerFeedback(client: client, hub: hub, explicit: feedbackTo, mappingPort: hub.mapping?.port, log: log)
                state.withLock { $0.feedback = feedback }
            }
        } catch { throw .alsa(error) } }
        midiRecorder?.begin()
        return connected
    }

    /// Starts the zones' router, the sequencer's input thread (a clock message
    /// `clockFollowing` takes goes no further) and JACK MIDI's thread, polling
    /// every `jackPollMicroseconds`.
    func start(clockFollowing: ClockFollowing?, jackPollMicroseconds: UInt32) throws(LiveHost.Failure) {
        if state.withLock({ s in defer { s.keyboardStarted = true }; return !s.keyboardStarted }) { keyboard.start() }
        let router = self.router
        do { try client?.start { event in if clockFollowing?.take(event) != true { router.handle(event) } } } catch { throw .alsa(error) }
        if let jackMIDI {
            do { try jackMIDI.start(router: router, pollMicroseconds: jackPollMicroseconds) } catch { throw .thread(error) }
        }
    }

    /// Feeds one message as if it came from the sequencer. Any thread but the output thread.
    func receive(_ message: MIDIMessage, from source: SeqAddress) {
        router.handle(.message(message, source: source))
    }

    /// Input stopped (the sources' held notes no longer matter), then note-offs for
    /// what the zones hold (external synths above all), while the ports are open.
    func stop() {
        client?.stop()
        jackMIDI?.finish()
        keyboard.stop()
        keyboard.releaseEverything()
    }

    /// What the zones' external ports sent, for the log.
    var summary: String? { zoneOutput?.summary ?? jackZoneOutput?.summary }

    /// Writes `--record-midi` (once) and logs where it went or why not.
    func finishRecording() {
        guard let midiRecorder, state.withLock({ s in defer { s.recordingFinished = true }; return !s.recordingFinished }) else { return }
        do throws(MIDIRecorder.Failure) {
            try midiRecorder.finish()
            log.append("recorded MIDI \(midiRecorder.path): \(midiRecorder.count) messages")
            let lost = midiRecorder.lostStamps
            if lost > 0 { log.append("MIDI recording: \(lost) message\(lost == 1 ? "" : "s") that waited for a preset kept where they came (the stamps' ring was full)") }
        } catch { log.append("MIDI recording failed: \(error)") }
    }

    /// The session never ran: nothing to write.
    func discardRecording() { state.withLock { $0.recordingFinished = true } }
}
