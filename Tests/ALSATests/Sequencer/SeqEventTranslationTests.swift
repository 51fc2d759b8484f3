import CALSA
import MIDI
import Testing

@testable import ALSA

/// Builds sequencer events the way the kernel and alsa-lib hand them to us.
private func event(_ type: snd_seq_event_type, from source: SeqAddress = SeqAddress(client: 24, port: 0),
    _ fill: (inout snd_seq_event_t) -> Void = { _ in }) -> snd_seq_event_t
{
    var ev = snd_seq_event_t()
    carillon_seq_ev_clear(&ev)
    ev.type = snd_seq_event_type_t(type.rawValue)
    ev.source = source.cValue
    fill(&ev)
    return ev
}

private func control(_ type: snd_seq_event_type, channel: UInt8 = 0, param: UInt32 = 0, value: Int32) -> snd_seq_event_t {
    event(type) { $0.data.control.channel = channel; $0.data.control.param = param; $0.data.control.value = value }
}

private func note(_ type: snd_seq_event_type, channel: UInt8, note: UInt8, velocity: UInt8) -> snd_seq_event_t {
    event(type) { $0.data.note.channel = channel; $0.data.note.note = note; $0.data.note.velocity = velocity }
}

/// Decodes a SysEx chunk from `source` (the bytes live only during the call, as in ALSA's input buffer).
private func sysexChunk(_ bytes: [UInt8], from source: SeqAddress = SeqAddress(client: 24, port: 0),
    into decoder: inout SeqEventDecoder) -> [MIDIMessage]
{
    var copy = bytes
    return copy.withUnsafeMutableBytes { raw in
        var ev = event(SND_SEQ_EVENT_SYSEX, from: source)
        carillon_seq_ev_set_sysex(&ev, UInt32(raw.count), raw.baseAddress)
        return decoder.decode(ev)
    }
}

@Suite struct SeqEventTranslationTests {
    @Test func channelVoice_decodesEveryKind() {
        var d = SeqEventDecoder()
        #expect(d.decode(note(SND_SEQ_EVENT_NOTEON, channel: 9, note: 36, velocity: 100)) == [.noteOn(36, velocity: 100, channel: 9)])
        #expect(d.decode(note(SND_SEQ_EVENT_NOTEON, channel: 0, note: 60, velocity: 0)) == [.noteOn(60, velocity: 0, channel: 0)])
        #expect(d.decode(note(SND_SEQ_EVENT_NOTEOFF, channel: 15, note: 127, velocity: 64)) == [.noteOff(127, velocity: 64, channel: 15)])
        #expect(d.decode(note(SND_SEQ_EVENT_KEYPRESS, channel: 1, note: 61, velocity: 33)) == [.polyPressure(61, pressure: 33, channel: 1)])
        #expect(d.decode(control(SND_SEQ_EVENT_CONTROLLER, channel: 2, param: 7, value: 101)) == [.cc(7, value: 101, channel: 2)])
        #expect(d.decode(control(SND_SEQ_EVENT_PGMCHANGE, channel: 3, value: 19)) == [.programChange(19, channel: 3)])
        #expect(d.decode(control(SND_SEQ_EVENT_CHANPRESS, channel: 4, value: 90)) == [.channelPressure(90, channel: 4)])
    }

    @Test func pitchBend_signedALSARangeMapsToUnsigned() {
        var d = SeqEventDecoder()
        #expect(d.decode(control(SND_SEQ_EVENT_PITCHBEND, value: -8192)) == [.pitchBend(0, channel: 0)])
        #expect(d.decode(control(SND_SEQ_EVENT_PITCHBEND, value: 0)) == [.pitchBend(8192, channel: 0)])
        #expect(d.decode(control(SND_SEQ_EVENT_PITCHBEND, value: 8191)) == [.pitchBend(16383, channel: 0)])
        // Out of range from a careless application: clamped, not trapped.
        #expect(d.decode(control(SND_SEQ_EVENT_PITCHBEND, value: 20000)) == [.pitchBend(16383, channel: 0)])
        #expect(d.decode(control(SND_SEQ_EVENT_PITCHBEND, value: -20000)) == [.pitchBend(0, channel: 0)])
    }

    @Test func control14_lowControllerBecomesMSBAndLSB() {
        var d = SeqEventDecoder()
        #expect(d.decode(control(SND_SEQ_EVENT_CONTROL14, channel: 5, param: 7, value: 0x3FFF))
            == [.cc(7, value: 127, channel: 5), .cc(39, value: 127, channel: 5)])
        #expect(d.decode(control(SND_SEQ_EVENT_CONTROL14, channel: 0, param: 1, value: 8192 + 5))
            == [.cc(1, value: 64, channel: 0), .cc(33, value: 5, channel: 0)])
    }

    @Test func control14_highControllerIsSevenBit() {
        var d = SeqEventDecoder()
        #expect(d.decode(control(SND_SEQ_EVENT_CONTROL14, param: 74, value: 99)) == [.cc(74, value: 99, channel: 0)])
    }

    @Test func nrpnAndRPN_becomeParameterNumberThenDataEntry() {
        var d = SeqEventDecoder()
        #expect(d.decode(control(SND_SEQ_EVENT_NONREGPARAM, channel: 1, param: 0x0102, value: 0x0304)) == [
            .cc(99, value: 2, channel: 1), .cc(98, value: 2, channel: 1),
            .cc(6, value: 6, channel: 1), .cc(38, value: 4, channel: 1),
        ])
        // RPN 0 (pitch-bend range) = 2 semitones, 0 cents.
        #expect(d.decode(control(SND_SEQ_EVENT_REGPARAM, param: 0, value: 2 << 7)) == [
            .cc(101, value: 0, channel: 0), .cc(100, value: 0, channel: 0),
            .cc(6, value: 2, channel: 0), .cc(38, value: 0, channel: 0),
        ])
    }

    @Test func systemMessages_decode() {
        var d = SeqEventDecoder()
        #expect(d.decode(control(SND_SEQ_EVENT_SONGPOS, value: 1000)) == [.songPosition(1000)])
        #expect(d.decode(control(SND_SEQ_EVENT_SONGSEL, value: 3)) == [.songSelect(3)])
        #expect(d.decode(control(SND_SEQ_EVENT_QFRAME, value: 0x35)) == [.timecodeQuarterFrame(0x35)])
        let plain: [(snd_seq_event_type, MIDIMessage)] = [
            (SND_SEQ_EVENT_START, .start), (SND_SEQ_EVENT_STOP, .stop), (SND_SEQ_EVENT_CONTINUE, .continue),
            (SND_SEQ_EVENT_CLOCK, .timingClock), (SND_SEQ_EVENT_TUNE_REQUEST, .tuneRequest),
            (SND_SEQ_EVENT_RESET, .systemReset), (SND_SEQ_EVENT_SENSING, .activeSensing),
        ]
        for (type, message) in plain { #expect(d.decode(event(type)) == [message]) }
    }

    @Test func nonMIDIEvents_decodeToNothing() {
        var d = SeqEventDecoder()
        for type in [SND_SEQ_EVENT_PORT_SUBSCRIBED, SND_SEQ_EVENT_CLIENT_START, SND_SEQ_EVENT_PORT_EXIT,
            SND_SEQ_EVENT_ECHO, SND_SEQ_EVENT_TEMPO]
        {
            #expect(d.decode(event(type)).isEmpty)
        }
    }

    @Test func sysEx_oneChunk() {
        var d = SeqEventDecoder()
        #expect(sysexChunk([0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7], into: &d) == [.sysEx([0x7E, 0x7F, 0x09, 0x01])])
    }

    @Test func sysEx_chunksReassembledPerSource() {
        var d = SeqEventDecoder()
        let a = SeqAddress(client: 24, port: 0), b = SeqAddress(client: 25, port: 0)
        #expect(sysexChunk([0xF0, 0x41, 0x10], from: a, into: &d).isEmpty)
        #expect(sysexChunk([0xF0, 0x43], from: b, into: &d).isEmpty)
        #expect(sysexChunk([0x42, 0x12], from: a, into: &d).isEmpty)
        #expect(sysexChunk([0x01, 0xF7], from: b, into: &d) == [.sysEx([0x43, 0x01])])
        #expect(sysexChunk([0x40, 0xF7], from: a, into: &d) == [.sysEx([0x41, 0x10, 0x42, 0x12, 0x40])])
    }

    @Test func sysEx_continuationWithoutStartIsDropped() {
        var d = SeqEventDecoder()
        #expect(sysexChunk([0x01, 0x02, 0xF7], into: &d).isEmpty)
    }

    @Test func sysEx_newStartAbandonsUnfinishedMessage() {
        var d = SeqEventDecoder()
        #expect(sysexChunk([0xF0, 0x01, 0x02], into: &d).isEmpty)
        #expect(sysexChunk([0xF0, 0x03, 0xF7], into: &d) == [.sysEx([0x03])])
    }

    @Test func sysEx_resetForgetsPartialMessage() {
        var d = SeqEventDecoder()
        let a = SeqAddress(client: 24, port: 0)
        #expect(sysexChunk([0xF0, 0x01], from: a, into: &d).isEmpty)
        d.reset(source: a)
        #expect(sysexChunk([0x02, 0xF7], from: a, into: &d).isEmpty)
    }

    @Test(arguments: [
        MIDIMessage.noteOn(60, velocity: 100, channel: 0), .noteOn(61, velocity: 0, channel: 15),
        .noteOff(62, velocity: 40, channel: 3), .polyPressure(64, pressure: 12, channel: 2),
        .cc(74, value: 127, channel: 9), .programChange(5, channel: 1), .channelPressure(77, channel: 4),
        .pitchBend(0, channel: 0), .pitchBend(8192, channel: 7), .pitchBend(16383, channel: 15),
        .timecodeQuarterFrame(0x71), .songPosition(16383), .songSelect(9), .tuneRequest, .timingClock,
        .start, .continue, .stop, .activeSensing, .systemReset, .sysEx([0x7E, 0x00, 0x06, 0x01]), .sysEx([]),
    ])
    func encodeThenDecode_roundTrips(message: MIDIMessage) {
        var d = SeqEventDecoder()
        let decoded = message.withSeqEvent { ev in
            ev.source = SeqAddress(client: 130, port: 0).cValue
            return d.decode(ev)
        }
        #expect(decoded == [message])
    }

    @Test func encode_setsFixedLengthForChannelMessagesAndVariableForSysEx() {
        MIDIMessage.noteOn(60, velocity: 1, channel: 0).withSeqEvent { ev in
            #expect(carillon_seq_ev_is_variable(&ev) == 0)
        }
        MIDIMessage.sysEx([1, 2]).withSeqEvent { ev in
            #expect(carillon_seq_ev_is_variable(&ev) != 0)
            #expect(ev.data.ext.len == 4)
        }
    }
}
