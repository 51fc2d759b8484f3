import Testing
@testable import MIDI

@Suite struct MIDIMessageTests {
    static let cases: [(MIDIMessage, [UInt8])] = [
        (.noteOff(60, velocity: 64, channel: 1), [0x81, 60, 64]),
        (.noteOn(60, velocity: 100, channel: 0), [0x90, 60, 100]),
        (.polyPressure(61, pressure: 5, channel: 15), [0xAF, 61, 5]),
        (.cc(7, value: 127, channel: 9), [0xB9, 7, 127]),
        (.programChange(42, channel: 2), [0xC2, 42]),
        (.channelPressure(99, channel: 3), [0xD3, 99]),
        (.pitchBend(UInt14(msb: 0x40, lsb: 0x01), channel: 4), [0xE4, 0x01, 0x40]),
        (.sysEx([0x7E, 0x7F, 0x09, 0x01]), [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7]),
        (.timecodeQuarterFrame(0x35), [0xF1, 0x35]),
        (.songPosition(UInt14(msb: 2, lsb: 3)), [0xF2, 3, 2]),
        (.songSelect(9), [0xF3, 9]),
        (.tuneRequest, [0xF6]),
        (.timingClock, [0xF8]),
        (.start, [0xFA]),
        (.continue, [0xFB]),
        (.stop, [0xFC]),
        (.activeSensing, [0xFE]),
        (.systemReset, [0xFF]),
    ]

    @Test(arguments: cases)
    func encode_eachKind(message: MIDIMessage, bytes: [UInt8]) {
        #expect(message.bytes == bytes)
    }

    @Test(arguments: cases)
    func byteParser_decodesEachKind(message: MIDIMessage, bytes: [UInt8]) {
        #expect(MIDIByteParser.parsedMessages(in: bytes, state: MIDIByteParser()).messages == [message])
    }

    @Test(arguments: cases)
    func dataLength_matchesEncoding(message: MIDIMessage, bytes: [UInt8]) {
        if case .sysEx = message {
            #expect(MIDIMessage.dataLength(forStatus: 0xF0) == nil)
        } else {
            #expect(MIDIMessage.dataLength(forStatus: bytes[0]) == bytes.count - 1)
            #expect(MIDIMessage(status: bytes[0], data1: bytes.count > 1 ? bytes[1] : 0,
                                data2: bytes.count > 2 ? bytes[2] : 0) == message)
        }
    }

    @Test func initStatus_undefinedOrDataByteIsNil() {
        for s: UInt8 in [0x00, 0x7F, 0xF0, 0xF4, 0xF5, 0xF7, 0xF9, 0xFD] {
            #expect(MIDIMessage(status: s) == nil)
        }
    }

    @Test func noteOnVelocityZero_isNoteOff() {
        #expect(MIDIMessage.noteOn(60, velocity: 0, channel: 0).isNoteOff)
        #expect(!MIDIMessage.noteOn(60, velocity: 1, channel: 0).isNoteOff)
        #expect(MIDIMessage.noteOff(60, channel: 0).isNoteOff)
    }

    @Test func pitchBend_signedValueCentredAtZero() {
        #expect(MIDIMessage.PitchBend(channel: 0, value: .midpoint).signedValue == 0)
        #expect(MIDIMessage.PitchBend(channel: 0, value: 0).signedValue == -8192)
        #expect(MIDIMessage.PitchBend(channel: 0, value: 16383).signedValue == 8191)
    }

    @Test func channel_nilForSystemMessages() {
        #expect(MIDIMessage.cc(1, value: 2, channel: 5).channel == 5)
        #expect(MIDIMessage.timingClock.channel == nil)
        #expect(MIDIMessage.sysEx([1]).channel == nil)
    }
}
