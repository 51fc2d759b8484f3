/// A Standard MIDI File (SMF, `.mid`, or RIFF-wrapped `.rmi`) held in memory:
/// its header and its tracks of events at absolute ticks.
///
/// Reading never crashes and never loops: a file that makes sense as far as it
/// goes is salvaged and the problems are listed in `warnings`; a file that
/// cannot be read at all throws an `SMFError` naming the byte offset.
public struct StandardMIDIFile: Hashable, Sendable {
    public enum Format: UInt16, Hashable, Sendable {
        /// One track with all channels.
        case singleTrack = 0
        /// Tracks played together (track 0 usually holds the tempo map).
        case multiTrack = 1
        /// Independent patterns, played one after another.
        case sequentialTracks = 2
    }

    /// What a tick means: a fraction of a quarter note (tempo-dependent) or of an SMPTE frame.
    public enum Division: Hashable, Sendable {
        case ticksPerQuarterNote(UInt16)
        /// `framesPerSecond` is 24, 25, 29 (30 drop-frame, i.e. 29.97) or 30.
        case smpte(framesPerSecond: Int, ticksPerFrame: Int)
    }

    public var format: Format
    public var division: Division
    public var tracks: [Track]
    /// Problems the reader worked around, in file order.
    public var warnings: [SMFWarning]

    public init(format: Format = .multiTrack, division: Division = .ticksPerQuarterNote(480),
                tracks: [Track] = [], warnings: [SMFWarning] = []) {
        self.format = format
        self.division = division
        self.tracks = tracks
        self.warnings = warnings
    }
}

/// One track chunk (`MTrk`): events in file order, at absolute ticks.
public struct Track: Hashable, Sendable {
    public var events: [TrackEvent]
    public init(events: [TrackEvent] = []) { self.events = events }

    /// The tick of the last event (usually the end-of-track), 0 for an empty track.
    public var endTick: UInt64 { events.last?.tick ?? 0 }

    /// The first track-name meta event's text, if any.
    public var name: String? {
        for e in events {
            if case .meta(.text(.trackName, let bytes)) = e.event { return MetaEvent.string(from: bytes) }
        }
        return nil
    }
}

/// An event at an absolute tick in its track.
public struct TrackEvent: Hashable, Sendable {
    public var tick: UInt64
    public var event: FileEvent
    public init(tick: UInt64, event: FileEvent) { self.tick = tick; self.event = event }
}

/// What a track can hold.
public enum FileEvent: Hashable, Sendable {
    /// A channel message, or a complete SysEx (`F0` event ending in `F7`).
    case midi(MIDIMessage)
    case meta(MetaEvent)
    /// An `F0` event whose data does not end in `F7`: the first packet of a
    /// SysEx divided across events (the rest follows as `sysExEscape`). Holds
    /// the bytes after F0.
    case sysExStart([UInt8])
    /// An `F7` "escape" event: a SysEx continuation packet or any bytes to send as they are.
    case sysExEscape([UInt8])
}

/// An event placed in time: what a sequencer plays.
public struct TimedEvent: Hashable, Sendable {
    public var seconds: Double
    /// The tick on the whole file's axis (for format 2, tracks follow one another).
    public var tick: UInt64
    /// Index of the track the event comes from.
    public var track: Int
    public var event: FileEvent
    public init(seconds: Double, tick: UInt64, track: Int, event: FileEvent) {
        self.seconds = seconds; self.tick = tick; self.track = track; self.event = event
    }
}

/// A problem the reader worked around.
public struct SMFWarning: Hashable, Sendable, CustomStringConvertible {
    /// Byte offset in the file (in the SMF inside a RIFF wrapper, offsets count from the RIFF start).
    public var offset: Int
    /// Index of the track chunk, nil for the header and other chunks.
    public var track: Int?
    public var message: String
    public init(offset: Int, track: Int?, message: String) {
        self.offset = offset; self.track = track; self.message = message
    }
    public var description: String {
        if let track { return "track \(track): \(message) at byte \(offset)" }
        return "\(message) at byte \(offset)"
    }
}

/// Why a file could not be read at all.
public struct SMFError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        case empty
        /// Neither `MThd` nor a RIFF `RMID` wrapper at the start.
        case notAMIDIFile
        /// RIFF `RMID` without a `data` chunk.
        case riffWithoutData
        case truncatedHeader
        /// The header chunk's length is below 6.
        case headerTooShort(UInt32)
        case unsupportedFormat(UInt16)
        /// Ticks per quarter note of 0, or an SMPTE rate other than 24, 25, 29, 30, or 0 ticks per frame.
        case invalidDivision(UInt16)
    }

    public var reason: Reason
    public var offset: Int
    public init(_ reason: Reason, at offset: Int) { self.reason = reason; self.offset = offset }

    public var message: String {
        switch reason {
        case .empty: "empty file"
        case .notAMIDIFile: "not a MIDI file (no MThd or RIFF RMID header)"
        case .riffWithoutData: "RIFF RMID file without a data chunk"
        case .truncatedHeader: "header chunk truncated"
        case .headerTooShort(let n): "header chunk length \(n) is below 6"
        case .unsupportedFormat(let f): "unsupported SMF format \(f)"
        case .invalidDivision(let d): "invalid time division 0x\(String(d, radix: 16, uppercase: true))"
        }
    }

    public var description: String { "\(message) at byte \(offset)" }
}
