/// Tells the process callback when `midi_in`'s buffer holds events it has
/// already read, so an xrun never doubles a note.
///
/// Why: a JACK MIDI input buffer is the sending client's output buffer of the
/// moment (jack2 passes it without a copy), rewritten each time that client
/// runs; nothing in it says which run wrote it. jack2 wakes a client through a
/// binary futex (wake-ups while it runs late collapse into one), so under
/// xruns the order of the two clients' runs slips: Carillon can run twice
/// before the sender runs again (a double: the same buffer read twice), and
/// the sender can run twice before Carillon does (a loss: the first buffer is
/// gone; nothing on this side can bring it back: DESIGN.md, "JACK MIDI
/// through the router"). A sender that is itself late (stopped, or starved of
/// the CPU) leaves its buffer as it was while Carillon runs on, cycle after
/// cycle in the server's order: the same buffer read in consecutive cycles.
///
/// The rule: a call whose events are exactly (offsets and bytes) those of the
/// call before is a re-read. The one exception: events that are all system
/// real-time messages (a clock master whose clocks fall at the same offset
/// every period) in the server cycle right after that call's, which ended
/// within its own (`jack_last_frame_time` at the call's start and end): in
/// steady running such a buffer is new every time. A note, controller or
/// SysEx repeated exactly, at the same offset one period later, is never
/// music: the sender has not run since. (`scripts/test-jack`'s xrun step:
/// Carillon and the sender each stopped and continued, its record checked
/// against the sender's per-call trace.)
///
/// Process thread only; fixed storage, no allocation after `init`.
struct JACKMIDIRereads: ~Copyable {
    static let maxEvents = 256, maxBytes = 4096

    /// The last call's events (`last*`) and this call's as they are compared (`next*`), swapped at the end.
    private var lastOffsets: UnsafeMutableBufferPointer<Int>, nextOffsets: UnsafeMutableBufferPointer<Int>
    private var lastEnds: UnsafeMutableBufferPointer<Int>, nextEnds: UnsafeMutableBufferPointer<Int>
    private var lastBytes: UnsafeMutableBufferPointer<UInt8>, nextBytes: UnsafeMutableBufferPointer<UInt8>
    private var lastCount = 0, nextCount = 0, nextByteCount = 0
    /// The last call's events were too many to keep: never a repeat of them.
    private var lastKept = true, nextKept = true
    private var lastCycle: UInt32?, lastFrames = 0
    /// The last call was still running when the server's next cycle began.
    private var lastOverran = false
    private var consecutive = true, same = true
    /// This call's events so far are all system real-time messages (0xF8–0xFF).
    private var realtimeOnly = true

    init() {
        lastOffsets = .allocate(capacity: Self.maxEvents); nextOffsets = .allocate(capacity: Self.maxEvents)
        lastEnds = .allocate(capacity: Self.maxEvents); nextEnds = .allocate(capacity: Self.maxEvents)
        lastBytes = .allocate(capacity: Self.maxBytes); nextBytes = .allocate(capacity: Self.maxBytes)
    }

    deinit {
        for p in [lastOffsets, nextOffsets, lastEnds, nextEnds] { p.deallocate() }
        lastBytes.deallocate(); nextBytes.deallocate()
    }

    /// A call of the process callback begins: the server's cycle (`jack_last_frame_time`) and its frames.
    mutating func begin(cycle: UInt32, frames: Int) {
        consecutive = !lastOverran && (lastCycle.map { cycle &- $0 == UInt32(truncatingIfNeeded: lastFrames) } ?? true)
        lastCycle = cycle; lastFrames = frames
        nextCount = 0; nextByteCount = 0; nextKept = true; same = true; realtimeOnly = true
    }

    /// One event of this call, in the buffer's order.
    mutating func add(offset: Int, bytes: UnsafeBufferPointer<UInt8>) {
        let i = nextCount
        nextCount += 1
        if bytes.isEmpty || bytes[0] < 0xF8 { realtimeOnly = false }
        guard nextKept, i < Self.maxEvents, nextByteCount + bytes.count <= Self.maxBytes else {
            nextKept = false; same = false
            return
        }
        let start = nextByteCount
        for k in 0..<bytes.count { nextBytes[start + k] = bytes[k] }
        nextByteCount += bytes.count
        nextOffsets[i] = offset; nextEnds[i] = nextByteCount
        if same {
            let lastStart = i == 0 ? 0 : lastEnds[i - 1]
            same = i < lastCount && lastOffsets[i] == offset && lastEnds[i] - lastStart == bytes.count
            var k = 0
            while same && k < bytes.count { same = lastBytes[lastStart + k] == bytes[k]; k += 1 }
        }
    }

    /// The call ends (after its rendering): the server's cycle now. A call that overran into the
    /// next cycle finished after the sender's wake-up there, so the two may run in either order.
    mutating func end(cycle: UInt32) { lastOverran = cycle != lastCycle }

    /// The call's events are all added: true when they are the last call's read again (drop them).
    mutating func isRepeat() -> Bool {
        let repeated = (!consecutive || !realtimeOnly) && lastKept && nextKept && same && nextCount > 0 && nextCount == lastCount
        swap(&lastOffsets, &nextOffsets); swap(&lastEnds, &nextEnds); swap(&lastBytes, &nextBytes)
        lastCount = nextCount; lastKept = nextKept
        return repeated
    }

    /// After `isRepeat`: this call's events as `add` copied them, in order, to `body`; false
    /// (and nothing given) when they were too many to keep. The callback passes these on, not
    /// the buffer read again: jack2 can run the sender on the other core while Carillon's
    /// catch-up call reads (a torn read: twice in thirteen traced runs), so what was judged new is what goes on.
    func forEachKept(_ body: (_ offset: Int, _ bytes: UnsafeBufferPointer<UInt8>) -> Void) -> Bool {
        guard lastKept else { return false }
        for i in 0..<lastCount {
            let start = i == 0 ? 0 : lastEnds[i - 1]
            body(lastOffsets[i], UnsafeBufferPointer(rebasing: lastBytes[start..<lastEnds[i]]))
        }
        return true
    }
}
