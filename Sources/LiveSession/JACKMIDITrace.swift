#if DEBUG
#if canImport(Glibc)
import Glibc
#endif

/// Debug builds only: what each call of the process callback read from
/// `midi_in`, for finding where a JACK MIDI event went under xruns
/// (`CARILLON_JACK_MIDI_TRACE=FILE`, written when the session ends). One line a
/// call: `read T CYCLE ENDCYCLE FRAMES COUNT DROPPED EVENTS…`, T the monotonic
/// clock (ns) when the buffer was read, CYCLE and ENDCYCLE `jack_last_frame_time`
/// at the call's start and end, DROPPED 1 when `JACKMIDIRereads` took the buffer
/// for one read before, EVENTS the first eight as `offset:hex bytes`.
///
/// Process thread: `begin`, `add`, `decided`, `end` (fixed storage, no allocation); `write` after it stopped.
final class JACKMIDITrace {
    struct Call {
        var nanos: UInt64 = 0
        var cycle: UInt32 = 0, endCycle: UInt32 = 0
        var frames = 0, count = 0
        var dropped = false
        var events: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    }
    static let capacity = 1 << 17
    let path: String
    private let calls = UnsafeMutableBufferPointer<Call>.allocate(capacity: capacity)
    private var used = 0

    /// Nil unless `CARILLON_JACK_MIDI_TRACE` names a file.
    static func fromEnvironment() -> JACKMIDITrace? {
        guard let value = getenv("CARILLON_JACK_MIDI_TRACE"), value.pointee != 0 else { return nil }
        return JACKMIDITrace(path: String(cString: value))
    }

    private init(path: String) {
        self.path = path
        calls.initialize(repeating: Call())
    }

    deinit { calls.deallocate() }

    func begin(cycle: UInt32, frames: Int) {
        guard used < Self.capacity else { return }
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        calls[used] = Call(nanos: UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec), cycle: cycle, frames: frames)
    }

    func add(offset: Int, bytes: UnsafeBufferPointer<UInt8>) {
        guard used < Self.capacity else { return }
        let i = calls[used].count
        calls[used].count += 1
        guard i < 8 else { return }
        // offset in the top 16 bits, then the length and up to 3 bytes.
        var packed = UInt64(offset & 0xFFFF) << 48 | UInt64(min(bytes.count, 255)) << 24
        for k in 0..<min(bytes.count, 3) { packed |= UInt64(bytes[k]) << (16 - 8 * k) }
        withUnsafeMutableBytes(of: &calls[used].events) { $0.storeBytes(of: packed, toByteOffset: 8 * i, as: UInt64.self) }
    }

    func decided(dropped: Bool) {
        guard used < Self.capacity else { return }
        calls[used].dropped = dropped
    }

    /// The call ends (after its rendering).
    func end(cycle: UInt32) {
        guard used < Self.capacity else { return }
        calls[used].endCycle = cycle
        used += 1
    }

    /// Writes the trace; after the process callback has stopped for good.
    func write() {
        guard let file = fopen(path, "w") else { return }
        defer { fclose(file) }
        for call in calls[0..<used] {
            var line = "read \(call.nanos) \(call.cycle) \(call.endCycle) \(call.frames) \(call.count) \(call.dropped ? 1 : 0)"
            withUnsafeBytes(of: call.events) { raw in
                for i in 0..<min(call.count, 8) {
                    let packed = raw.load(fromByteOffset: 8 * i, as: UInt64.self)
                    let length = Int(packed >> 24 & 0xFF)
                    let bytes = (0..<min(length, 3)).map { String(packed >> (16 - 8 * $0) & 0xFF, radix: 16) }
                    line += " \(packed >> 48):" + bytes.joined(separator: ":")
                }
            }
            fputs(line + "\n", file)
        }
    }
}
#endif
