import Engine
import Hosting
import MIDI
import Synchronization
import Glibc
#if canImport(Glibc)
#endif

/// Records the MIDI that comes in as a Standard MIDI File (format 0) with its
/// real timing, written by `finish` (temporary file, renamed).
///
/// With audio and each message placed on the output's sample clock (`--timing
/// stamped`, JACK MIDI), the file is sample-exact: a tick is a frame of the
/// output from its first block, the frame the message was played at, so
/// `render take.mid --take` feeds the rig the same messages at the same frames
/// and a `--record` of the session lines up with it frame for frame
/// (`frameDivision`: 22050 Hz is 22050 ticks a quarter at 60 bpm, 48 kHz 24000
/// at 120 bpm). Otherwise (no audio, `--timing asap`) each message is stamped
/// with the monotonic clock on arrival, and the stamps become ticks at 120 bpm
/// and 480 ticks per quarter note (960 ticks a second, about 1 ms) from the
/// session's start.
///
/// A message the render thread held back (presets on demand: behind a
/// program change whose preset was loading) is stamped where it was
/// applied: `record` numbers each message, what the router pushes from it
/// carries the number, and the instrument reports the frame it applied it
/// at (`TakeStamps`, drained here at each `record` and at the end), so
/// the take holds what was heard, not when it came.
///
/// `record` from the input thread (it appends under a lock: not for the
/// render thread); `finish` from the owner's, once.
public final class MIDIRecorder: Sendable {
    public static let ticksPerQuarterNote: UInt16 = 480
    public static let microsecondsPerQuarterNote: UInt32 = 500_000   // 120 bpm

    public let path: String
    /// The output's sample rate, when the messages may come with frames.
    public let sampleRate: Int?
    private let startNanos: Atomic<UInt64>
    private let events = Mutex<[(nanos: UInt64, frame: UInt64?, message: MIDIMessage)]>([])
    /// Where the render thread applied the messages it held back (nil: it holds none back).
    public let applied: TakeStamps?

    /// Time zero is now: the session's start, so the file lines up with an audio recording.
    /// `sampleRate`: the output's, when there is audio; `applied`: the instrument's
    /// reports of the messages it applied late (`OnDemandInstrument.takeStamps`).
    public init(path: String, sampleRate: Int? = nil, applied: TakeStamps? = nil) {
        self.path = path
        self.sampleRate = sampleRate
        self.applied = applied
        startNanos = Atomic(OutputClock.now())
    }

    /// Moves time zero to now (the host's start, after the slow loading).
    public func begin() { startNanos.store(OutputClock.now(), ordering: .relaxed) }

    /// Stores `message`, stamped `nanos` (the monotonic clock on its arrival) and,
    /// when known, the `frame` of the output's sample clock it was placed at;
    /// returns its number in the take (from 1), which the messages routed from
    /// it carry (`EventQueueProducer.Placement.recorded`).
    @discardableResult
    public func record(_ message: MIDIMessage, at nanos: UInt64 = OutputClock.now(), frame: UInt64? = nil) -> UInt32 {
        events.withLock { events in
            takeStamps(into: &events)
            events.append((nanos, frame, message))
            return UInt32(truncatingIfNeeded: events.count)
        }
    }

    /// Moves each message the render thread applied late to the frame it was
    /// applied at (the latest, for one routed to several channels). Under the lock.
    private func takeStamps(into events: inout [(nanos: UInt64, frame: UInt64?, message: MIDIMessage)]) {
        applied?.drain { stamp in
            let index = Int(stamp.take) - 1
            guard events.indices.contains(index), let frame = events[index].frame else { return }
            events[index].frame = max(frame, stamp.frame)
        }
    }

    /// Reports of late messages lost to a full ring (those kept the frame they came for).
    public var lostStamps: Int { applied?.lostCount ?? 0 }

    /// A division and tempo at which one tick is one frame at `rate`: the rate
    /// (at 60 bpm), halved with the tempo's period until it fits SMF's 15-bit
    /// division. Nil when none does (an odd rate above 32767).
    public static func frameDivision(sampleRate rate: Int) -> (ticksPerQuarterNote: UInt16, microsecondsPerQuarterNote: UInt32)? {
        guard rate > 0 else { return nil }
        var ticks = rate, microseconds = 1_000_000
        while ticks > 32767 {
            guard ticks % 2 == 0, microseconds % 2 == 0 else { return nil }
            ticks /= 2; microseconds /= 2
        }
        return (UInt16(ticks), UInt32(microseconds))
    }

    public var count: Int { events.withLock { $0.count } }

    /// The recording as a file: a tempo event, then each message at its tick;
    /// in frames when every message has one (and the rate a division), else in
    /// milliseconds from `begin`.
    public func file() -> StandardMIDIFile {
        let recorded = events.withLock { events in
            takeStamps(into: &events)
            return events
        }
        if let rate = sampleRate, let division = Self.frameDivision(sampleRate: rate), !recorded.isEmpty,
           recorded.allSatisfy({ $0.frame != nil }) {
            // Messages at one frame keep the order they came in (a late one's channel
            // applied them so; it waited behind nothing of another channel).
            let timed = recorded.enumerated().sorted { ($0.element.frame!, $0.offset) < ($1.element.frame!, $1.offset) }
            return Self.file(timed.map { ($0.element.frame!, $0.element.message) }, division.ticksPerQuarterNote,
                             division.microsecondsPerQuarterNote)
        }
        let ticksPerSecond = Double(Self.ticksPerQuarterNote) * 1e6 / Double(Self.microsecondsPerQuarterNote)
        let start = startNanos.load(ordering: .relaxed)
        let timed = recorded.enumerated().sorted { ($0.element.nanos, $0.offset) < ($1.element.nanos, $1.offset) }.map { item in
            let nanos = item.element.nanos
            return (UInt64((Double(nanos - min(nanos, start)) / 1e9 * ticksPerSecond).rounded()), item.element.message)
        }
        return Self.file(timed, Self.ticksPerQuarterNote, Self.microsecondsPerQuarterNote)
    }

    private static func file(_ timed: [(UInt64, MIDIMessage)], _ ticksPerQuarterNote: UInt16, _ microsecondsPerQuarterNote: UInt32) -> StandardMIDIFile {
        var track = Track(events: [TrackEvent(tick: 0, event: .meta(.tempo(microsecondsPerQuarterNote: microsecondsPerQuarterNote)))])
        for (tick, message) in timed { track.events.append(TrackEvent(tick: tick, event: .midi(message))) }
        return StandardMIDIFile(format: .singleTrack, division: .ticksPerQuarterNote(ticksPerQuarterNote), tracks: [track])
    }

    public enum Failure: Error, CustomStringConvertible {
        case cannotWrite(path: String, reason: String)
        public var description: String {
            switch self { case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)" }
        }
    }

    /// Writes the file: to a temporary file beside `path`, renamed when complete.
    public func finish() throws(Failure) {
        let bytes = file().serialized()
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = "\(directory).\(name).\(getpid())-\(String(UInt32.random(in: 0...UInt32.max), radix: 16)).tmp"
        let reason = { String(cString: strerror(errno)) }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw .cannotWrite(path: path, reason: reason()) }
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let why = reason()
                close(fd); unlink(temporary)
                throw .cannotWrite(path: path, reason: why)
            }
            done += n
        }
        guard close(fd) == 0 else { let why = reason(); unlink(temporary); throw .cannotWrite(path: path, reason: why) }
        guard rename(temporary, path) == 0 else { let why = reason(); unlink(temporary); throw .cannotWrite(path: path, reason: why) }
    }
}
