import MIDI

/// A MIDI channel voice message in its three wire bytes: the fixed-size,
/// trivially copyable form in which messages reach the render thread.
/// One-data-byte messages (program change, channel pressure) leave `data2` 0.
public struct ChannelMessage: Hashable, Sendable, BitwiseCopyable, CustomStringConvertible {
    public var status: UInt8
    public var data1: UInt8
    public var data2: UInt8

    public init(status: UInt8, data1: UInt8, data2: UInt8 = 0) {
        precondition(status & 0xF0 >= 0x80 && status < 0xF0, "not a channel voice status byte")
        self.status = status; self.data1 = data1 & 0x7F; self.data2 = data2 & 0x7F
    }

    /// The channel voice message as three bytes; nil for system messages (SysEx, clock, …).
    public init?(_ message: MIDIMessage) {
        switch message {
        case .noteOff(let m): self.init(status: 0x80 | m.channel.value, data1: m.note.value, data2: m.velocity.value)
        case .noteOn(let m): self.init(status: 0x90 | m.channel.value, data1: m.note.value, data2: m.velocity.value)
        case .polyPressure(let m): self.init(status: 0xA0 | m.channel.value, data1: m.note.value, data2: m.pressure.value)
        case .controlChange(let m): self.init(status: 0xB0 | m.channel.value, data1: m.controller.value, data2: m.value.value)
        case .programChange(let m): self.init(status: 0xC0 | m.channel.value, data1: m.program.value)
        case .channelPressure(let m): self.init(status: 0xD0 | m.channel.value, data1: m.pressure.value)
        case .pitchBend(let m): self.init(status: 0xE0 | m.channel.value, data1: m.value.lsb.value, data2: m.value.msb.value)
        default: return nil
        }
    }

    private init(unchecked status: UInt8, data1: UInt8, data2: UInt8) {
        self.status = status; self.data1 = data1; self.data2 = data2
    }

    /// Where a System Exclusive message stands in a stream of channel
    /// messages (status F0): its bytes travel beside the stream, and `number`
    /// (0...16383, in the two data bytes) finds them — the index in a
    /// `Score`'s `sysExMessages`, or the length of the bytes waiting in an
    /// `EventQueue`'s byte ring. Instruments never receive it: the renderer
    /// hands them the bytes (`Instrument.receiveSysEx`).
    public static func sysExPlaceholder(_ number: Int) -> ChannelMessage {
        precondition((0...maxSysExNumber).contains(number))
        return ChannelMessage(unchecked: 0xF0, data1: UInt8(number & 0x7F), data2: UInt8(number >> 7))
    }
    public static let maxSysExNumber = 16_383
    /// A SysEx placeholder (status F0), not a channel voice message.
    @inline(__always) public var isSysEx: Bool { status == 0xF0 }
    /// The placeholder's number (see `sysExPlaceholder`).
    @inline(__always) public var sysExNumber: Int { Int(data1) | Int(data2) << 7 }

    /// 0...15.
    public var channel: Int { Int(status & 0x0F) }
    /// The status nibble: 0x80 note-off … 0xE0 pitch bend.
    public var kind: UInt8 { status & 0xF0 }
    public var isNoteOn: Bool { kind == 0x90 && data2 > 0 }

    public static func noteOn(_ note: UInt8, velocity: UInt8, channel: Int) -> ChannelMessage {
        ChannelMessage(status: 0x90 | UInt8(channel & 0x0F), data1: note, data2: velocity)
    }
    public static func noteOff(_ note: UInt8, channel: Int) -> ChannelMessage {
        ChannelMessage(status: 0x80 | UInt8(channel & 0x0F), data1: note, data2: 0)
    }
    public static func controlChange(_ controller: UInt8, value: UInt8, channel: Int) -> ChannelMessage {
        ChannelMessage(status: 0xB0 | UInt8(channel & 0x0F), data1: controller, data2: value)
    }
    public static func programChange(_ program: UInt8, channel: Int) -> ChannelMessage {
        ChannelMessage(status: 0xC0 | UInt8(channel & 0x0F), data1: program)
    }

    public var description: String {
        let hex = { (b: UInt8) in (b < 16 ? "0" : "") + String(b, radix: 16, uppercase: true) }
        return "\(hex(status)) \(hex(data1)) \(hex(data2))"
    }
}

/// A channel message to apply at a frame of the renderer's sample clock.
/// A `frame` already past applies at the start of the next block.
public struct TimedMessage: Hashable, Sendable, BitwiseCopyable {
    public var frame: UInt64
    public var message: ChannelMessage
    /// The live take's number of the input message this came from (`--record-midi`,
    /// `MIDIRecorder.record`), 0 for none: an instrument that applies it later than
    /// `frame` reports where (`TakeStamps`), so the take stamps it where it played.
    /// In the padding after `message`: the event stays 16 bytes.
    public var take: UInt32

    public init(frame: UInt64, message: ChannelMessage, take: UInt32 = 0) {
        self.frame = frame; self.message = message; self.take = take
    }

    /// "As soon as possible": applied at the start of the next block.
    public static func now(_ message: ChannelMessage) -> TimedMessage {
        TimedMessage(frame: 0, message: message)
    }
}
