/// Tells the process callback when `midi_in`'s buffer holds events it has
/// already read, so an xrun never doubles a note.
///
/// Why: a JACK MIDI input buffer is the sending client's output buffer of the
/// moment, rewritten each time that client runs; nothing in it says which run
/// wrote it. jack2 wakes a client through a binary futex (wake-ups while it
/// runs late collapse into one), so under xruns the order of the two
/// clients' runs slips: Carillon can run twice before the sender runs again
/// (a double: the same buffer read twice), and the sender can run twice
/// before Carillon does (a loss: the first buffer is gone; nothing on this
/// side can bring it back). `scripts/test-jack`'s xrun step (a sender that
/// runs after Carillon; Carillon stopped 10 ms and continued, 100 times):
/// 5–6 of 800 events doubled and 4–6 lost without this, none doubled and 4–5
/// lost with it.
///
/// The rule: a call whose events are exactly (offsets and bytes) those of the
/// call before is a re-read unless it runs in the server cycle right after
/// that call's, which ended within its own cycle (`jack_last_frame_time` at
/// the call's start and end). In steady running every call is such a call, so
/// nothing is ever dropped there — not even a clock master whose clocks fall
/// at the same offset every period; under xruns an identical buffer is
/// dropped (a repeated identical message there is lost, never doubled).
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
        nextCount = 0; nextByteCount = 0; nextKept = true; same = true
    }

    /// One event of this call, in the buffer's order.
    mutating func add(offset: Int, bytes: UnsafeBufferPointer<UInt8>) {
        let i = nextCount
        nextCount += 1
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
        let repeated = !consecutive && lastKept && nextKept && same && nextCount > 0 && nextCount == lastCount
        swap(&lastOffsets, &nextOffsets); swap(&lastEnds, &nextEnds); swap(&lastBytes, &nextBytes)
        lastCount = nextCount; lastKept = nextKept
        return repeated
    }
}
