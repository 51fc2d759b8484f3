// Decoding a message from its status and data bytes, the inverse of `encode(into:)`.

extension MIDIMessage {
    /// The message a status byte and its data bytes make, or nil when the
    /// status byte is not one of a fixed-length message (a data byte, SysEx
    /// F0/F7, undefined F4/F5/F9/FD). Data bytes are masked to 7 bits; unused
    /// ones are ignored.
    public init?(status: UInt8, data1: UInt8 = 0, data2: UInt8 = 0) {
        guard status >= 0x80 else { return nil }
        if status < 0xF0 {
            self = MIDIMessage.channelMessage(status: status, data1: data1, data2: data2)
            return
        }
        switch status {
        case 0xF1: self = .timecodeQuarterFrame(UInt7(unchecked: data1 & 0x7F))
        case 0xF2: self = .songPosition(UInt14(msb: UInt7(unchecked: data2 & 0x7F), lsb: UInt7(unchecked: data1 & 0x7F)))
        case 0xF3: self = .songSelect(UInt7(unchecked: data1 & 0x7F))
        case 0xF6: self = .tuneRequest
        case 0xF8: self = .timingClock
        case 0xFA: self = .start
        case 0xFB: self = .continue
        case 0xFC: self = .stop
        case 0xFE: self = .activeSensing
        case 0xFF: self = .systemReset
        default: return nil
        }
    }

    /// A channel voice message from a status byte in 0x80...0xEF (not checked) and its data bytes.
    @inline(__always)
    static func channelMessage(status: UInt8, data1: UInt8, data2: UInt8) -> MIDIMessage {
        let channel = UInt4(unchecked: status & 0x0F)
        let d1 = UInt7(unchecked: data1 & 0x7F)
        let d2 = UInt7(unchecked: data2 & 0x7F)
        switch status >> 4 {
        case 0x8: return .noteOff(NoteOff(channel: channel, note: d1, velocity: d2))
        case 0x9: return .noteOn(NoteOn(channel: channel, note: d1, velocity: d2))
        case 0xA: return .polyPressure(PolyPressure(channel: channel, note: d1, pressure: d2))
        case 0xB: return .controlChange(ControlChange(channel: channel, controller: d1, value: d2))
        case 0xC: return .programChange(ProgramChange(channel: channel, program: d1))
        case 0xD: return .channelPressure(ChannelPressure(channel: channel, pressure: d1))
        default: return .pitchBend(PitchBend(channel: channel, value: UInt14(msb: d2, lsb: d1)))
        }
    }
}
