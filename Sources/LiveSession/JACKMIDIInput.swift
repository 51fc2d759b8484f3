import Engine
import MIDI
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// JACK MIDI into the same `InputRouter` as the ALSA sequencer's input, so
/// mappings, MIDI learn and `--record-midi` see it. JACK's process thread
/// (real-time: no lock, no allocation) puts `midi_in`'s events into `inbox`,
/// a lock-free queue, at the frame one period after their offset in the
/// cycle; this thread takes them from there every quarter period (at most
/// 1 ms) and gives them to the router, which hands the controls theirs and
/// the rest to the renderer's queue at that frame (`--timing stamped`) or at
/// once (`asap`). So JACK MIDI keeps a constant latency, one period more than
/// JACK's own, and its timing within the period.
///
/// Threads: `inbox` is pushed by JACK's process thread only; `start` and
/// `finish` on the host's thread.
final class JACKMIDIInput: @unchecked Sendable {
    /// Producer: the JACK process thread; consumer: this input's thread.
    let inbox = EventQueue(capacity: 4096, sysExCapacity: 16_384)
    private let stopping = CancellationFlag()
    private var thread: JoinableThread?

    /// Starts the thread that drains `inbox` into `router` every `pollMicroseconds`.
    func start(router: InputRouter, pollMicroseconds: UInt32) throws(ThreadError) {
        guard thread == nil else { return }
        let inbox = self.inbox, stopping = self.stopping
        thread = try JoinableThread(name: "jack-midi-in") {
            router.raisePriority()
            while !stopping.isSet {
                Self.drain(inbox, into: router)
                usleep(pollMicroseconds)
            }
            Self.drain(inbox, into: router)
        }
    }

    /// Ends the thread after it has handed on what is waiting. Idempotent.
    func finish() {
        stopping.set()
        thread?.join()
        thread = nil
    }

    /// Consumer side: every event waiting, in order, to the router.
    static func drain(_ inbox: EventQueue, into router: InputRouter) {
        while let event = inbox.peek() {
            if let bytes = inbox.headSysEx() {
                router.receive(.sysEx(.init(data: Array(bytes))), frame: event.frame)
            } else if let message = MIDIMessage(status: event.message.status, data1: event.message.data1,
                                                data2: event.message.data2) {
                router.receive(message, frame: event.frame)
            }
            inbox.pop()
        }
    }
}
