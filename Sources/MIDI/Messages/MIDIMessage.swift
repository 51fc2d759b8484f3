/// One MIDI 1.0 message: channel voice, system common, system real-time or
/// system exclusive. Channel mode messages (CC 120–127) are control changes
/// with the mode helpers on `ControlChange`.
///
/// A note-on with velocity 0 is kept as it was sent (`noteOn` with velocity 0);
/// `isNoteOff` answers the musical question.
public enum MIDIMessage: Hashable, Sendable {
    // Channel voice
    case noteOff(NoteOff)
    case noteOn(NoteOn)
    case polyPressure(PolyPressure)
    case controlChange(ControlChange)
    case programChange(ProgramChange)
    case channelPressure(ChannelPressure)
    case pitchBend(PitchBend)
    // System exclusive: the bytes between F0 and F7, both excluded.
    case sysEx(SysEx)
    // System common
    case timecodeQuarterFrame(UInt7)
    case songPosition(UInt14)
    case songSelect(UInt7)
    case tuneRequest
    // System real-time
    case timingClock
    case start
    case `continue`
    case stop
    case activeSensing
    case systemReset
}

extension MIDIMessage {
    public struct NoteOff: Hashable, Sendable {
        public var channel: Channel
        public var note: UInt7
        public var velocity: UInt7
        public init(channel: Channel, note: UInt7, velocity: UInt7) {
            self.channel = channel; self.note = note; self.velocity = velocity
        }
    }

    public struct NoteOn: Hashable, Sendable {
        public var channel: Channel
        public var note: UInt7
        public var velocity: UInt7
        public init(channel: Channel, note: UInt7, velocity: UInt7) {
            self.channel = channel; self.note = note; self.velocity = velocity
        }
    }

    public struct PolyPressure: Hashable, Sendable {
        public var channel: Channel
        public var note: UInt7
        public var pressure: UInt7
        public init(channel: Channel, note: UInt7, pressure: UInt7) {
            self.channel = channel; self.note = note; self.pressure = pressure
        }
    }

    public struct ControlChange: Hashable, Sendable {
        public var channel: Channel
        public var controller: UInt7
        public var value: UInt7
        public init(channel: Channel, controller: UInt7, value: UInt7) {
            self.channel = channel; self.controller = controller; self.value = value
        }
        /// CC 120–127 are channel mode messages (all sound off, reset, local, all notes off, omni, mono, poly).
        public var isChannelMode: Bool { controller.value >= 120 }
    }

    public struct ProgramChange: Hashable, Sendable {
        public var channel: Channel
        public var program: UInt7
        public init(channel: Channel, program: UInt7) {
            self.channel = channel; self.program = program
        }
    }

    public struct ChannelPressure: Hashable, Sendable {
        public var channel: Channel
        public var pressure: UInt7
        public init(channel: Channel, pressure: UInt7) {
            self.channel = channel; self.pressure = pressure
        }
    }

    public struct PitchBend: Hashable, Sendable {
        public var channel: Channel
        /// 0...16383, 8192 is centre.
        public var value: UInt14
        public init(channel: Channel, value: UInt14) {
            self.channel = channel; self.value = value
        }
        /// -8192...8191, as ALSA and many APIs express it.
        public var signedValue: Int { Int(value.value) - 8192 }
    }

    public struct SysEx: Hashable, Sendable {
        /// The bytes between F0 and F7 (both excluded); each is 0...127 in a complete message.
        public var data: [UInt8]
        public init(data: [UInt8]) { self.data = data }
    }
}

// MARK: - Readable constructors

extension MIDIMessage {
    public static func noteOn(_ note: UInt7, velocity: UInt7, channel: Channel) -> MIDIMessage {
        .noteOn(NoteOn(channel: channel, note: note, velocity: velocity))
    }
    public static func noteOff(_ note: UInt7, velocity: UInt7 = 0, channel: Channel) -> MIDIMessage {
        .noteOff(NoteOff(channel: channel, note: note, velocity: velocity))
    }
    public static func polyPressure(_ note: UInt7, pressure: UInt7, channel: Channel) -> MIDIMessage {
        .polyPressure(PolyPressure(channel: channel, note: note, pressure: pressure))
    }
    public static func cc(_ controller: UInt7, value: UInt7, channel: Channel) -> MIDIMessage {
        .controlChange(ControlChange(channel: channel, controller: controller, value: value))
    }
    public static func programChange(_ program: UInt7, channel: Channel) -> MIDIMessage {
        .programChange(ProgramChange(channel: channel, program: program))
    }
    public static func channelPressure(_ pressure: UInt7, channel: Channel) -> MIDIMessage {
        .channelPressure(ChannelPressure(channel: channel, pressure: pressure))
    }
    public static func pitchBend(_ value: UInt14, channel: Channel) -> MIDIMessage {
        .pitchBend(PitchBend(channel: channel, value: value))
    }
    public static func sysEx(_ data: [UInt8]) -> MIDIMessage {
        .sysEx(SysEx(data: data))
    }
}

// MARK: - Queries

extension MIDIMessage {
    /// The channel of a channel voice message, nil for system messages.
    public var channel: Channel? {
        switch self {
        case .noteOff(let m): m.channel
        case .noteOn(let m): m.channel
        case .polyPressure(let m): m.channel
        case .controlChange(let m): m.channel
        case .programChange(let m): m.channel
        case .channelPressure(let m): m.channel
        case .pitchBend(let m): m.channel
        default: nil
        }
    }

    /// True for a note-off, and for a note-on with velocity 0 (MIDI 1.0's running-status idiom).
    public var isNoteOff: Bool {
        switch self {
        case .noteOff: true
        case .noteOn(let m): m.velocity.value == 0
        default: false
        }
    }

    /// System real-time messages (F8–FF) may appear anywhere in a byte stream, even inside SysEx.
    public var isRealTime: Bool {
        switch self {
        case .timingClock, .start, .continue, .stop, .activeSensing, .systemReset: true
        default: false
        }
    }
}

// MARK: - Wire encoding

extension MIDIMessage {
    /// The status byte this message is sent with (F0 for SysEx).
    public var statusByte: UInt8 {
        switch self {
        case .noteOff(let m): 0x80 | m.channel.value
        case .noteOn(let m): 0x90 | m.channel.value
        case .polyPressure(let m): 0xA0 | m.channel.value
        case .controlChange(let m): 0xB0 | m.channel.value
        case .programChange(let m): 0xC0 | m.channel.value
        case .channelPressure(let m): 0xD0 | m.channel.value
        case .pitchBend(let m): 0xE0 | m.channel.value
        case .sysEx: 0xF0
        case .timecodeQuarterFrame: 0xF1
        case .songPosition: 0xF2
        case .songSelect: 0xF3
        case .tuneRequest: 0xF6
        case .timingClock: 0xF8
        case .start: 0xFA
        case .continue: 0xFB
        case .stop: 0xFC
        case .activeSensing: 0xFE
        case .systemReset: 0xFF
        }
    }

    /// Appends the message's complete wire form (status byte first, SysEx framed by F0 … F7).
    public func encode(into bytes: inout [UInt8]) {
        if case .sysEx(let m) = self {
            bytes.append(0xF0); bytes.append(contentsOf: m.data); bytes.append(0xF7)
        } else if let short = shortWireForm {
            for k in 0..<short.count { bytes.append(UInt8(truncatingIfNeeded: short.packed >> (8 * k))) }
        }
    }

    /// The wire form of a message of three bytes or fewer (all but SysEx), without
    /// allocating: for writers on a real-time thread. Nil for SysEx.
    public var shortWireForm: ShortMIDIBytes? {
        switch self {
        case .noteOff(let m): ShortMIDIBytes(statusByte, m.note.value, m.velocity.value)
        case .noteOn(let m): ShortMIDIBytes(statusByte, m.note.value, m.velocity.value)
        case .polyPressure(let m): ShortMIDIBytes(statusByte, m.note.value, m.pressure.value)
        case .controlChange(let m): ShortMIDIBytes(statusByte, m.controller.value, m.value.value)
        case .programChange(let m): ShortMIDIBytes(statusByte, m.program.value)
        case .channelPressure(let m): ShortMIDIBytes(statusByte, m.pressure.value)
        case .pitchBend(let m): ShortMIDIBytes(statusByte, m.value.lsb.value, m.value.msb.value)
        case .sysEx: nil
        case .timecodeQuarterFrame(let v), .songSelect(let v): ShortMIDIBytes(statusByte, v.value)
        case .songPosition(let v): ShortMIDIBytes(statusByte, v.lsb.value, v.msb.value)
        case .tuneRequest, .timingClock, .start, .continue, .stop, .activeSensing, .systemReset: ShortMIDIBytes(statusByte)
        }
    }

    /// The complete wire form of the message.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    /// How many data bytes follow a status byte, or nil for SysEx (variable)
    /// and for undefined status bytes (F4, F5, F9, FD) and data bytes.
    public static func dataLength(forStatus status: UInt8) -> Int? {
        switch status {
        case 0x80...0xBF, 0xE0...0xEF: 2
        case 0xC0...0xDF: 1
        case 0xF1, 0xF3: 1
        case 0xF2: 2
        case 0xF6, 0xF8, 0xFA, 0xFB, 0xFC, 0xFE, 0xFF: 0
        default: nil
        }
    }
}

/// One MIDI message of one to three bytes, by value (no allocation), packed in
/// one word (no tuple: a tuple's type metadata is made at run time, under a lock).
public struct ShortMIDIBytes: Equatable, Sendable, BitwiseCopyable {
    /// The bytes, the first in the lowest 8 bits.
    public var packed: UInt32
    public var count: Int

    public init(_ b0: UInt8) { packed = UInt32(b0); count = 1 }
    public init(_ b0: UInt8, _ b1: UInt8) { packed = UInt32(b0) | UInt32(b1) << 8; count = 2 }
    public init(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8) { packed = UInt32(b0) | UInt32(b1) << 8 | UInt32(b2) << 16; count = 3 }

    /// The bytes, for the length of `body` (a pointer into a copy on the stack).
    @inline(__always)
    public func withBytes(_ body: (UnsafeBufferPointer<UInt8>) -> Bool) -> Bool {
        withUnsafeBytes(of: packed.littleEndian) { raw in
            body(UnsafeBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count))
        }
    }
}
