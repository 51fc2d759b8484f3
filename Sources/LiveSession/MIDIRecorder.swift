import Hosting
import MIDI
import Synchronization
import Glibc
#if canImport(Glibc)
#endif

/// Records the MIDI that comes in as a Standard MIDI File (format 0) with its
/// real timing: each message is stamped with the monotonic clock on arrival
/// (not numbered in arrival order), and `finish` turns the stamps into ticks
/// at a fixed tempo, 120 bpm and 480 ticks per quarter note (960 ticks a
/// second, about 1 ms), then writes the file (temporary file, renamed).
///
/// `record` from the input thread (it appends under a lock: not for the
/// render thread); `finish` from the owner's, once.
public final class MIDIRecorder: Sendable {
    public static let ticksPerQuarterNote: UInt16 = 480
    public static let microsecondsPerQuarterNote: UInt32 = 500_000   // 120 bpm

    public let path: String
    private let startNanos: Atomic<UInt64>
    private let events = Mutex<[(nanos: UInt64, message: MIDIMessage)]>([])

    /// Time zero is now: the session's start, so the file lines up with an audio recording.
    public init(path: String) {
        self.path = path
        startNanos = Atomic(OutputClock.now())
    }

    /// Moves time zero to now (the host's start, after the slow loading).
    public func begin() { startNanos.store(OutputClock.now(), ordering: .relaxed) }

    /// Stores `message`, stamped `nanos` (the monotonic clock on its arrival).
    public func record(_ message: MIDIMessage, at nanos: UInt64 = OutputClock.now()) {
        events.withLock { $0.append((nanos, message)) }
    }

    public var count: Int { events.withLock { $0.count } }

    /// The recording as a file: a tempo event, then each message at its tick.
    public func file() -> StandardMIDIFile {
        let recorded = events.withLock { $0 }.sorted { $0.nanos < $1.nanos }   // stable: equal stamps keep arrival order
        let ticksPerSecond = Double(Self.ticksPerQuarterNote) * 1e6 / Double(Self.microsecondsPerQuarterNote)
        let start = startNanos.load(ordering: .relaxed)
        var track = Track(events: [TrackEvent(tick: 0, event: .meta(.tempo(microsecondsPerQuarterNote: Self.microsecondsPerQuarterNote)))])
        for (nanos, message) in recorded {
            let seconds = Double(nanos - min(nanos, start)) / 1e9
            track.events.append(TrackEvent(tick: UInt64((seconds * ticksPerSecond).rounded()), event: .midi(message)))
        }
        return StandardMIDIFile(format: .singleTrack, division: .ticksPerQuarterNote(Self.ticksPerQuarterNote), tracks: [track])
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
