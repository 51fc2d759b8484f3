import ALSA
import Controls
import Engine
import Hosting
import Rig
import MIDI
import Synchronization
import Threads

/// The MIDI input's one consumer, on the input thread: counts messages per
/// source, logs connections, records `--record-midi`, and hands each message
/// to the keyboard's way to the instruments (`KeyboardRouting`: the controls,
/// then the zones, then the render thread's queue). A note-off always
/// reaches where its note-on went; a source that disconnects has its notes
/// released there.
final class InputRouter: Sendable {
    private let keyboard: KeyboardRouting
    /// The zones' external ports (nil without a sequencer).
    private let zoneOutput: ALSAZoneOutput?
    /// A source's name as the sequencer lists it (zones may name the source they take).
    private let sourceName: @Sendable (SeqAddress) -> String?
    private let log: HostLog
    private let midiRecorder: MIDIRecorder?
    private let counts = Mutex<[SeqAddress: Int]>([:])
    private let connected = Mutex<Set<SeqAddress>>([])
    /// SCHED_FIFO priority the input thread asks for on its first event; nil: none.
    private let priority: Int32?
    private let prioritized = Atomic<Bool>(false)

    /// `priority`: with `--timing stamped` and real-time scheduling, one above the
    /// output thread's. The kernel stamps the arrival, but the event must still be
    /// pushed within the latency (a period): on one CPU, when renders take half a
    /// period and the output thread renders blocks back to back to refill its
    /// buffer, an input thread below it waited longer than that and its notes
    /// came a period late. The router's work per event is short.
    init(keyboard: KeyboardRouting, zoneOutput: ALSAZoneOutput? = nil, sourceName: @escaping @Sendable (SeqAddress) -> String? = { _ in nil },
         log: HostLog, midiRecorder: MIDIRecorder? = nil, priority: Int32? = nil) {
        self.keyboard = keyboard
        self.zoneOutput = zoneOutput
        self.sourceName = sourceName
        self.log = log
        self.midiRecorder = midiRecorder
        self.priority = priority
    }

    /// A router with no zones' output port: `events` gets what the controls and the zones leave.
    convenience init(hub: ControlHub, events: EventQueueProducer?, log: HostLog, midiRecorder: MIDIRecorder? = nil) {
        let keyboard = KeyboardRouting(hub: hub, events: events)
        keyboard.start()
        self.init(keyboard: keyboard, log: log, midiRecorder: midiRecorder)
    }

    var messagesBySource: [SeqAddress: Int] { counts.withLock { $0 } }
    var sources: Set<SeqAddress> { connected.withLock { $0 } }

    /// The calling input thread asks for its real-time priority (once per router).
    func raisePriority() {
        if let priority, !prioritized.exchange(true, ordering: .relaxed),
           let refusal = RealtimeScheduling.requestFIFO(priority: priority) {
            log.append("input thread: real-time scheduling refused (\(refusal)); events are placed at normal priority")
        }
    }

    func handle(_ event: SequencerEvent) {
        raisePriority()
        switch event {
        case .message(let message, let source, _), .release(let message, let source):
            // The kernel's arrival stamp; else (a message fed in directly, a release
            // made up here) the clock now, before any routing work: the recording
            // and the render thread (`--timing stamped`) keep the real timing.
            let arrival = event.arrival ?? OutputClock.now()
            // `--timing stamped`: the frame it plays at, fixed once, so the take records it.
            let frame = keyboard.frame(pinning: .arrival(arrival))
            let take = midiRecorder?.record(message, at: arrival, frame: frame)
            counts.withLock { $0[source, default: 0] += 1 }
            keyboard.route(message, from: Self.sourceID(source), at: frame.map { Self.placement($0, take) } ?? .arrival(arrival))
        case .subscribed(let a):
            connected.withLock { _ = $0.insert(a) }
            keyboard.registerSource(Self.sourceID(a), name: sourceName(a) ?? "\(a)")
            log.append("connected \(a)")
        case .unsubscribed(let a):
            connected.withLock { _ = $0.remove(a) }
            // The sequencer client released the notes it saw (`.release`, routed above); the zones'
            // ledger ends whatever is left of this source's, wherever it went.
            keyboard.releaseAll(source: Self.sourceID(a), at: .arrival(OutputClock.now()))
            log.append("disconnected \(a) (its notes released)")
        case .autoconnected(let p):
            connected.withLock { _ = $0.insert(p.address) }
            keyboard.registerSource(Self.sourceID(p.address), name: p.searchableName)
            log.append("autoconnected \(p)")
        case .autoconnectFailed(let p, let e):
            log.append("could not connect \(p): \(e)")
        case .inputOverrun:
            log.append("MIDI input overrun: events lost")
        case .portAppeared(let p):
            zoneOutput?.portAppeared(p)  // autoconnect answers it for sources (the sequencer client's own job)
        }
    }

    /// A message from JACK MIDI (`JACKMIDIInput`), to play at `frame` of the
    /// sample clock: recorded, counted, and routed like a sequencer event.
    func receive(_ message: MIDIMessage, frame: UInt64) {
        let played = keyboard.frame(pinning: .frame(frame))
        let take = midiRecorder?.record(message, frame: played)
        jackMessages.add(1, ordering: .relaxed)
        keyboard.route(message, from: Self.jackSource, at: Self.placement(played ?? frame, take))
    }

    /// At `frame`, with the take's number of the message when it was recorded:
    /// what it routes carries it, so a wait on the render thread moves it in the take.
    private static func placement(_ frame: UInt64, _ take: UInt32?) -> EventQueueProducer.Placement {
        take.map { .recorded(frame: frame, take: $0) } ?? .frame(frame)
    }

    /// Messages JACK MIDI brought (`receive`).
    var jackMessageCount: Int { jackMessages.load(ordering: .relaxed) }
    private let jackMessages = Atomic<Int>(0)

    /// The zones' number for a sequencer source; JACK MIDI's is `jackSource`.
    static func sourceID(_ address: SeqAddress) -> SourceID { SourceID(address.client) << 8 | SourceID(address.port & 0xFF) }
    static let jackSource: SourceID = 0xFFFF_0000
}
