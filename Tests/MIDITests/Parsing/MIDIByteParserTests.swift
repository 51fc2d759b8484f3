import Testing
@testable import MIDI

@Suite struct MIDIByteParserTests {
    func parse(_ bytes: [UInt8], _ state: MIDIByteParser = MIDIByteParser()) -> [MIDIMessage] {
        MIDIByteParser.parsedMessages(in: bytes, state: state).messages
    }

    @Test func runningStatus_repeatsChannelStatus() {
        #expect(parse([0x90, 60, 100, 62, 100, 60, 0]) == [
            .noteOn(60, velocity: 100, channel: 0), .noteOn(62, velocity: 100, channel: 0),
            .noteOn(60, velocity: 0, channel: 0),
        ])
        #expect(parse([0xC5, 1, 2, 3]) == [.programChange(1, channel: 5), .programChange(2, channel: 5), .programChange(3, channel: 5)])
    }

    @Test func realTime_insideMessageDeliveredAtOnceWithoutBreakingIt() {
        #expect(parse([0x90, 0xF8, 60, 0xFA, 100, 0xFE, 61, 101]) == [
            .timingClock, .start, .noteOn(60, velocity: 100, channel: 0), .activeSensing,
            .noteOn(61, velocity: 101, channel: 0),
        ])
    }

    @Test func realTime_insideSysExDoesNotEndIt() {
        #expect(parse([0xF0, 0x7E, 0xF8, 0x01, 0xFC, 0x02, 0xF7]) == [.timingClock, .stop, .sysEx([0x7E, 0x01, 0x02])])
    }

    @Test func sysEx_splitAcrossPacketsIsJoined() {
        let first = MIDIByteParser.parsedMessages(in: [0xF0, 0x43, 0x10], state: MIDIByteParser())
        #expect(first.messages.isEmpty)
        #expect(first.state.sysEx == [0x43, 0x10])
        let second = MIDIByteParser.parsedMessages(in: [0x4C, 0x00], state: first.state)
        #expect(second.messages.isEmpty)
        let third = MIDIByteParser.parsedMessages(in: [0x7F, 0xF7, 0x80, 60, 0], state: second.state)
        #expect(third.messages == [.sysEx([0x43, 0x10, 0x4C, 0x00, 0x7F]), .noteOff(60, channel: 0)])
        #expect(third.state.sysEx == nil)
    }

    @Test func message_splitAcrossPacketsIsJoined() {
        let a = MIDIByteParser.parsedMessages(in: [0xB3, 7], state: MIDIByteParser())
        #expect(a.messages.isEmpty)
        let b = MIDIByteParser.parsedMessages(in: [100, 10], state: a.state)
        #expect(b.messages == [.cc(7, value: 100, channel: 3)])
        let c = MIDIByteParser.parsedMessages(in: [64], state: b.state)
        #expect(c.messages == [.cc(10, value: 64, channel: 3)])
    }

    @Test func strayDataBytes_skippedUntilStatus() {
        let r = MIDIByteParser.parsedMessages(in: [1, 2, 3, 0x90, 60, 1], state: MIDIByteParser())
        #expect(r.messages == [.noteOn(60, velocity: 1, channel: 0)])
        #expect(r.state.skippedBytes == 3)
    }

    @Test func undefinedStatus_skippedAndCancelsRunningStatus() {
        let r = MIDIByteParser.parsedMessages(in: [0x90, 60, 1, 0xF4, 61, 2, 0xF9, 0xFD, 0xF5], state: MIDIByteParser())
        #expect(r.messages == [.noteOn(60, velocity: 1, channel: 0)])
        #expect(r.state.skippedBytes == 6)   // F4, 61, 2, F9, FD, F5
    }

    @Test func realTime_keepsRunningStatus() {
        #expect(parse([0x90, 60, 1, 0xF8, 61, 2]) == [.noteOn(60, velocity: 1, channel: 0), .timingClock, .noteOn(61, velocity: 2, channel: 0)])
    }

    @Test func sysEx_interruptedByStatusEndsAsImpliedEOX() {
        #expect(parse([0xF0, 0x01, 0x02, 0x90, 60, 100]) == [.sysEx([0x01, 0x02]), .noteOn(60, velocity: 100, channel: 0)])
        #expect(parse([0xF0, 0x01, 0xF0, 0x02, 0xF7]) == [.sysEx([0x01]), .sysEx([0x02])])
    }

    @Test func loneEOX_skipped() {
        let r = MIDIByteParser.parsedMessages(in: [0xF7, 0x90, 60, 1], state: MIDIByteParser())
        #expect(r.messages == [.noteOn(60, velocity: 1, channel: 0)])
        #expect(r.state.skippedBytes == 1)
    }

    @Test func systemCommon_cancelsRunningStatus() {
        #expect(parse([0x90, 60, 1, 0xF2, 0x10, 0x20, 61, 2]) == [
            .noteOn(60, velocity: 1, channel: 0), .songPosition(UInt14(msb: 0x20, lsb: 0x10)),
        ])
        #expect(parse([0x90, 60, 1, 0xF6, 61, 2]) == [.noteOn(60, velocity: 1, channel: 0), .tuneRequest])
        #expect(parse([0xF1, 0x21, 0x22]) == [.timecodeQuarterFrame(0x21)])
    }

    @Test func statusInsideMessage_abandonsPartialMessage() {
        #expect(parse([0x90, 60, 0xB0, 7, 100]) == [.cc(7, value: 100, channel: 0)])
    }

    @Test func sysEx_longerThanLimitDropped() {
        var bytes: [UInt8] = [0xF0] + Array(repeating: 0x11, count: 20) + [0xF7, 0xF8]
        bytes += [0xF0, 1, 0xF7]
        let r = MIDIByteParser.parsedMessages(in: bytes, state: MIDIByteParser(maxSysExLength: 8))
        #expect(r.messages == [.timingClock, .sysEx([1])])
        #expect(r.state.skippedBytes > 0)
    }

    @Test func byteByByte_sameAsWhole() {
        let bytes: [UInt8] = [0xF0, 1, 0xF8, 2, 0xF7, 0x90, 60, 100, 61, 0xFE, 100, 0xE0, 0, 64, 0xC1, 5, 6]
        let whole = parse(bytes)
        var state = MIDIByteParser()
        var pieces: [MIDIMessage] = []
        for b in bytes {
            let r = MIDIByteParser.parsedMessages(in: [b], state: state)
            pieces += r.messages
            state = r.state
        }
        #expect(pieces == whole)
        #expect(whole.count == 8)
    }
}
