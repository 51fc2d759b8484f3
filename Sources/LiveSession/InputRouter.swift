import ALSA
import Controls
import Engine
import Hosting
import MIDI
import Sampling
import Synchronization
import Threads

/// The MIDI input's one consumer, on the input thread: counts messages per
/// source, logs connections, gives each message to the controls first and
/// passes what they do not use (notes, other CCs, SysEx) to the render
/// thread's queue. A note-off always reaches the sampler.
final class InputRouter: Sendable {
    private let hub: ControlHub
    private let events: EventQueueProducer?
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
    init(hub: ControlHub, events: EventQueueProducer?, log: HostLog, midiRecorder: MIDIRecorder? = nil, priority: Int32? = nil) {
        self.hub = hub
        self.events = events
        self.log = log
        self.midiRecorder = midiRecorder
        self.priority = priority
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
            midiRecorder?.record(message, at: arrival)
            counts.withLock { $0[source, default: 0] += 1 }
            route(message, at: .arrival(arrival))
        case .subscribed(let a):
            connected.withLock { _ = $0.insert(a) }
            log.append("connected \(a)")
        case .unsubscribed(let a):
            connected.withLock { _ = $0.remove(a) }
            log.append("disconnected \(a) (its notes released)")
        case .autoconnected(let p):
            connected.withLock { _ = $0.insert(p.address) }
            log.append("autoconnected \(p)")
        case .autoconnectFailed(let p, let e):
            log.append("could not connect \(p): \(e)")
        case .inputOverrun:
            log.append("MIDI input overrun: events lost")
        case .portAppeared:
            break  // autoconnect answers it (the sequencer client's own job)
        }
    }

    /// A message from JACK MIDI (`JACKMIDIInput`), to play at `frame` of the
    /// sample clock: recorded, counted, and routed like a sequencer event.
    func receive(_ message: MIDIMessage, frame: UInt64) {
        midiRecorder?.record(message)
        jackMessages.add(1, ordering: .relaxed)
        route(message, at: .frame(frame))
    }

    /// Messages JACK MIDI brought (`receive`).
    var jackMessageCount: Int { jackMessages.load(ordering: .relaxed) }
    private let jackMessages = Atomic<Int>(0)

    private func route(_ message: MIDIMessage, at placement: EventQueueProducer.Placement) {
        if case .sysEx(let sysEx) = message {
            // GM/GS/XG resets, drum parts, tuning: through the queue's byte ring.
            events?.pushSysEx(sysEx.data, at: placement)
            return
        }
        var used = false
        if message.channel != nil {
            used = hub.receive(message)
            if message.isNoteOff { used = false }
        }
        if !used, let events, let channelMessage = ChannelMessage(message) { events.push(channelMessage, at: placement) }
    }
}
