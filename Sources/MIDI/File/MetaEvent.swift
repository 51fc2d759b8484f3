/// A meta event (`FF type length data`) of a Standard MIDI File.
/// An event whose length does not fit its type is kept as `.unknown`, byte for byte.
public enum MetaEvent: Hashable, Sendable {
    /// FF 00 02.
    case sequenceNumber(UInt16)
    /// FF 01…09: text of the given kind, as stored (usually ASCII or Latin-1; see `string(from:)`).
    case text(TextKind, [UInt8])
    /// FF 20 01: channel (0-based) for the following meta and SysEx events.
    case channelPrefix(UInt8)
    /// FF 21 01: output port (cable) for the track.
    case port(UInt8)
    /// FF 2F 00.
    case endOfTrack
    /// FF 51 03: microseconds per quarter note.
    case tempo(microsecondsPerQuarterNote: UInt32)
    /// FF 54 05.
    case smpteOffset(SMPTEOffset)
    /// FF 58 04.
    case timeSignature(TimeSignature)
    /// FF 59 02.
    case keySignature(KeySignature)
    /// FF 7F: manufacturer-specific data.
    case sequencerSpecific([UInt8])
    /// Any other type, or a known type with a length that does not fit.
    case unknown(type: UInt8, data: [UInt8])

    public enum TextKind: UInt8, Hashable, Sendable, CaseIterable {
        case text = 0x01, copyright = 0x02, trackName = 0x03, instrumentName = 0x04
        case lyric = 0x05, marker = 0x06, cuePoint = 0x07, programName = 0x08, deviceName = 0x09
    }

    public struct SMPTEOffset: Hashable, Sendable {
        /// The hour byte as stored (bits 5–6 carry the frame rate).
        public var hours: UInt8, minutes: UInt8, seconds: UInt8, frames: UInt8, fractionalFrames: UInt8
        public init(hours: UInt8, minutes: UInt8, seconds: UInt8, frames: UInt8, fractionalFrames: UInt8) {
            self.hours = hours; self.minutes = minutes; self.seconds = seconds
            self.frames = frames; self.fractionalFrames = fractionalFrames
        }
    }

    public struct TimeSignature: Hashable, Sendable {
        public var numerator: UInt8
        /// The denominator as a power of two (2 means a quarter note).
        public var denominatorPower: UInt8
        /// MIDI clocks per metronome click.
        public var clocksPerClick: UInt8
        /// Notated 32nd notes per MIDI quarter note (24 clocks), usually 8.
        public var thirtySecondsPerQuarter: UInt8
        public init(numerator: UInt8, denominatorPower: UInt8, clocksPerClick: UInt8 = 24, thirtySecondsPerQuarter: UInt8 = 8) {
            self.numerator = numerator; self.denominatorPower = denominatorPower
            self.clocksPerClick = clocksPerClick; self.thirtySecondsPerQuarter = thirtySecondsPerQuarter
        }
        /// The notated denominator (4 for x/4), or nil when the stored power is too large to be one.
        public var denominator: Int? { denominatorPower < 31 ? 1 << Int(denominatorPower) : nil }
    }

    public struct KeySignature: Hashable, Sendable {
        /// Flats (negative) or sharps (positive), -7…7 in a sane file.
        public var sharpsOrFlats: Int8
        public var isMinor: Bool
        public init(sharpsOrFlats: Int8, isMinor: Bool) { self.sharpsOrFlats = sharpsOrFlats; self.isMinor = isMinor }
    }
}

extension MetaEvent {
    /// The meta type byte (the byte after FF).
    public var type: UInt8 {
        switch self {
        case .sequenceNumber: 0x00
        case .text(let kind, _): kind.rawValue
        case .channelPrefix: 0x20
        case .port: 0x21
        case .endOfTrack: 0x2F
        case .tempo: 0x51
        case .smpteOffset: 0x54
        case .timeSignature: 0x58
        case .keySignature: 0x59
        case .sequencerSpecific: 0x7F
        case .unknown(let type, _): type
        }
    }

    /// The data bytes after the length.
    public var data: [UInt8] {
        switch self {
        case .sequenceNumber(let n): [UInt8(n >> 8), UInt8(n & 0xFF)]
        case .text(_, let bytes): bytes
        case .channelPrefix(let c): [c]
        case .port(let p): [p]
        case .endOfTrack: []
        case .tempo(let t): [UInt8((t >> 16) & 0xFF), UInt8((t >> 8) & 0xFF), UInt8(t & 0xFF)]
        case .smpteOffset(let o): [o.hours, o.minutes, o.seconds, o.frames, o.fractionalFrames]
        case .timeSignature(let t): [t.numerator, t.denominatorPower, t.clocksPerClick, t.thirtySecondsPerQuarter]
        case .keySignature(let k): [UInt8(bitPattern: k.sharpsOrFlats), k.isMinor ? 1 : 0]
        case .sequencerSpecific(let d): d
        case .unknown(_, let d): d
        }
    }

    /// Builds the event from its type and data; lengths that do not fit the type give `.unknown`.
    public init(type: UInt8, data: [UInt8]) {
        let n = data.count
        switch type {
        case 0x00 where n == 2: self = .sequenceNumber(UInt16(data[0]) << 8 | UInt16(data[1]))
        case 0x01...0x09: self = .text(TextKind(rawValue: type)!, data)
        case 0x20 where n == 1: self = .channelPrefix(data[0])
        case 0x21 where n == 1: self = .port(data[0])
        case 0x2F where n == 0: self = .endOfTrack
        case 0x51 where n == 3:
            self = .tempo(microsecondsPerQuarterNote: UInt32(data[0]) << 16 | UInt32(data[1]) << 8 | UInt32(data[2]))
        case 0x54 where n == 5:
            self = .smpteOffset(SMPTEOffset(hours: data[0], minutes: data[1], seconds: data[2],
                                            frames: data[3], fractionalFrames: data[4]))
        case 0x58 where n == 4:
            self = .timeSignature(TimeSignature(numerator: data[0], denominatorPower: data[1],
                                                clocksPerClick: data[2], thirtySecondsPerQuarter: data[3]))
        case 0x59 where n == 2 && data[1] <= 1:
            self = .keySignature(KeySignature(sharpsOrFlats: Int8(bitPattern: data[0]), isMinor: data[1] == 1))
        case 0x7F: self = .sequencerSpecific(data)
        default: self = .unknown(type: type, data: data)
        }
    }

    /// Text bytes as a Swift string: UTF-8 when valid, otherwise Latin-1 (what most old files use).
    public static func string(from bytes: [UInt8]) -> String {
        var ascii = true
        for b in bytes where b >= 0x80 { ascii = false; break }
        if ascii { return String(decoding: bytes, as: UTF8.self) }
        if let s = String(validating: bytes, as: UTF8.self) { return s }
        var s = String.UnicodeScalarView()
        for b in bytes { s.append(Unicode.Scalar(b)) }
        return String(s)
    }
}
