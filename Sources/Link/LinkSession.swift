import CLink
import Glibc

/// A failed Link call: which shim function, and what Link (or the argument check) said.
public struct LinkError: Error, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// A tempo outside 20…999 bpm, a quantum ≤ 0, a beat or time that is not finite.
        case invalidArgument
        /// Link threw: a system error (sockets, threads), out of memory.
        case exception
    }
    public let kind: Kind
    public let function: String
    public let message: String

    public var description: String { "\(function): \(message)" }
}

/// Link's session as read at one time for one quantum.
public struct LinkSessionState: Sendable, Equatable {
    /// The session's tempo (bpm).
    public var beatsPerMinute: Double
    /// The beat at `time`: its magnitude is this instance's, its phase in the quantum the session's.
    public var beat: Double
    /// The session's phase at `time`, in 0..<quantum.
    public var phase: Double
    /// Start/stop (shared only with peers that enable start/stop sync).
    public var isPlaying: Bool
    /// Link's clock (µs) of the last start or stop.
    public var timeForIsPlaying: Int64
    /// When (Link's clock, µs) and for which quantum this was read.
    public var time: Int64
    public var quantum: Double

    init(_ s: clink_session_state) {
        beatsPerMinute = s.tempo; beat = s.beat; phase = s.phase; isPlaying = s.is_playing
        timeForIsPlaying = s.time_for_is_playing; time = s.time; quantum = s.quantum
    }
}

/// An Ableton Link peer (`ableton::Link` through the `CLink` shim). It joins
/// the session on the local network with `enable(true)`; from then on its
/// tempo and beat phase are the session's, and what it changes is shared.
///
/// Times are Link's clock: microseconds of `CLOCK_MONOTONIC_RAW` (`now`,
/// `linkMicros(monotonicNanos:)` from Carillon's `CLOCK_MONOTONIC`).
///
/// Threads: every method may be called from any thread but a real-time one,
/// except `audioState`, Link's realtime-safe capture, which only one real-time
/// thread may call. `peers`, `isEnabled` and `now` are realtime-safe too.
public final class LinkSession: @unchecked Sendable {
    /// Link's tempo range (bpm).
    public static let tempoRange = CLINK_MIN_TEMPO...CLINK_MAX_TEMPO

    private let link: OpaquePointer

    /// A peer at `beatsPerMinute`, not yet in any session.
    public init(beatsPerMinute: Double) throws(LinkError) {
        var error = clink_error()
        guard let link = clink_create(beatsPerMinute, &error) else { throw Self.error(error.status, error, "clink_create") }
        self.link = link
    }

    /// Leaves the session and stops Link's thread.
    deinit { clink_destroy(link) }

    /// Joins (true) or leaves (false) the session.
    public func enable(_ on: Bool) throws(LinkError) {
        try check { clink_enable(link, on, &$0) }
    }

    public var isEnabled: Bool { clink_is_enabled(link) }

    /// Shares start/stop with the peers that enable it too.
    public func enableStartStopSync(_ on: Bool) throws(LinkError) {
        try check { clink_enable_start_stop_sync(link, on, &$0) }
    }

    /// Peers in the session besides this one.
    public var peers: Int { Int(clink_num_peers(link)) }

    /// Link's clock now (µs).
    public var now: Int64 { clink_clock_micros(link) }

    /// The session at `time` (default: now) for `quantum` beats.
    public func state(at time: Int64? = nil, quantum: Double) throws(LinkError) -> LinkSessionState {
        var s = clink_session_state(), t = time ?? now
        try check { clink_capture(link, t, quantum, &s, &$0) }
        return LinkSessionState(s)
    }

    /// The time (Link's clock, µs) of `beat` for `quantum`.
    public func time(atBeat beat: Double, quantum: Double) throws(LinkError) -> Int64 {
        var t: Int64 = 0
        try check { clink_time_at_beat(link, beat, quantum, &t, &$0) }
        return t
    }

    /// Sets the session's tempo from `time` (default: now) and shares it.
    public func setTempo(_ beatsPerMinute: Double, at time: Int64? = nil) throws(LinkError) {
        let t = time ?? now
        try check { clink_set_tempo(link, beatsPerMinute, t, &$0) }
    }

    /// Maps `beat` to `time` for `quantum`: at once when alone in the session, else
    /// at the next time the session's phase is the beat's (Link's quantized launch).
    public func requestBeat(_ beat: Double, at time: Int64, quantum: Double) throws(LinkError) {
        try check { clink_request_beat_at_time(link, beat, time, quantum, &$0) }
    }

    /// Start/stop at `time`, with `beat` requested at that time.
    public func setPlaying(_ playing: Bool, at time: Int64, beat: Double, quantum: Double) throws(LinkError) {
        try check { clink_set_is_playing_and_request_beat_at_time(link, playing, time, beat, quantum, &$0) }
    }

    /// The session at `time`, from the one real-time thread that reads it (Link's
    /// captureAudioSessionState: no lock, no allocation). Nil for a quantum ≤ 0.
    @inline(__always) public func audioState(at time: Int64, quantum: Double) -> LinkSessionState? {
        var s = clink_session_state()
        guard clink_capture_audio(link, time, quantum, &s) == CLINK_OK else { return nil }
        return LinkSessionState(s)
    }

    /// Link's clock (µs) at a time of `CLOCK_MONOTONIC` (Carillon's clock, ns): the two
    /// clocks read side by side now (they drift apart only as NTP slews, parts per million).
    public static func linkMicros(monotonicNanos: UInt64) -> Int64 {
        let (mono, raw) = clockPair()
        return raw + (Int64(bitPattern: monotonicNanos) - mono) / 1000
    }

    /// `CLOCK_MONOTONIC` (ns) at a time of Link's clock (µs).
    public static func monotonicNanos(linkMicros: Int64) -> UInt64 {
        let (mono, raw) = clockPair()
        return UInt64(max(0, mono + (linkMicros - raw) * 1000))
    }

    /// (CLOCK_MONOTONIC ns, CLOCK_MONOTONIC_RAW µs), read with the raw one between two monotonic reads.
    private static func clockPair() -> (Int64, Int64) {
        var a = timespec(), r = timespec(), b = timespec()
        clock_gettime(CLOCK_MONOTONIC, &a)
        clock_gettime(CLOCK_MONOTONIC_RAW, &r)
        clock_gettime(CLOCK_MONOTONIC, &b)
        let ns = { (t: timespec) in Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec) }
        return ((ns(a) + ns(b)) / 2, ns(r) / 1000)
    }

    /// The one way a shim call's status becomes a `LinkError`.
    private func check(_ call: (inout clink_error) -> clink_status) throws(LinkError) {
        var error = clink_error()
        let status = call(&error)
        guard status == CLINK_OK else { throw Self.error(status, error, "clink") }
    }

    private static func error(_ status: clink_status, _ e: clink_error, _ fallback: String) -> LinkError {
        let function = e.function.map { String(cString: $0) } ?? fallback
        let message = withUnsafeBytes(of: e.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return LinkError(kind: status == CLINK_INVALID_ARGUMENT ? .invalidArgument : .exception, function: function, message: message)
    }
}
