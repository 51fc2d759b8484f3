import CALSA
import MIDI

// The one place that reads and writes the payload of `snd_seq_event_t`.
//
// ALSA → MIDI: every MIDI-carrying sequencer event becomes the MIDIMessage(s)
// a MIDI 1.0 byte stream would have carried: CONTROL14 becomes an MSB/LSB pair
// of CCs, NONREGPARAM/REGPARAM the four CCs of an NRPN/RPN write, SysEx chunks
// are reassembled per source, pitch bend goes from −8192…8191 to 0…16383.
// Values out of MIDI range are masked as a byte stream would mask them.
//
// MIDI → ALSA: one event per message (the form `aplaymidi` and the kernel's
// raw MIDI ports send).

private let noteOnType = SND_SEQ_EVENT_NOTEON.rawValue
private let noteOffType = SND_SEQ_EVENT_NOTEOFF.rawValue
private let noteType = SND_SEQ_EVENT_NOTE.rawValue
private let keyPressType = SND_SEQ_EVENT_KEYPRESS.rawValue
private let controllerType = SND_SEQ_EVENT_CONTROLLER.rawValue
private let programType = SND_SEQ_EVENT_PGMCHANGE.rawValue
private let chanPressType = SND_SEQ_EVENT_CHANPRESS.rawValue
private let pitchBendType = SND_SEQ_EVENT_PITCHBEND.rawValue
private let control14Type = SND_SEQ_EVENT_CONTROL14.rawValue
private let nrpnType = SND_SEQ_EVENT_NONREGPARAM.rawValue
private let rpnType = SND_SEQ_EVENT_REGPARAM.rawValue
private let songPosType = SND_SEQ_EVENT_SONGPOS.rawValue
private let songSelType = SND_SEQ_EVENT_SONGSEL.rawValue
private let qframeType = SND_SEQ_EVENT_QFRAME.rawValue
private let startType = SND_SEQ_EVENT_START.rawValue
private let continueType = SND_SEQ_EVENT_CONTINUE.rawValue
private let stopType = SND_SEQ_EVENT_STOP.rawValue
private let clockType = SND_SEQ_EVENT_CLOCK.rawValue
private let tuneRequestType = SND_SEQ_EVENT_TUNE_REQUEST.rawValue
private let resetType = SND_SEQ_EVENT_RESET.rawValue
private let sensingType = SND_SEQ_EVENT_SENSING.rawValue
private let sysexType = SND_SEQ_EVENT_SYSEX.rawValue

/// Turns sequencer events into `MIDIMessage`s. Holds the SysEx reassembly
/// state of each source, so one decoder serves one input thread.
public struct SeqEventDecoder {
    /// Largest SysEx kept; a longer one is dropped (a stuck sender cannot eat memory).
    public static let maxSysExLength = 1 << 16

    private var partialSysEx: [SeqAddress: [UInt8]] = [:]

    public init() {}

    /// The messages `event` carries, in order; empty for events that carry no
    /// MIDI (announcements, subscriptions, echo, queue control) and for a SysEx
    /// chunk that does not complete a message yet.
    public mutating func decode(_ event: snd_seq_event_t) -> [MIDIMessage] {
        var out: [MIDIMessage] = []
        decode(event, into: &out)
        return out
    }

    /// As `decode(_:)`, appending to `out`.
    public mutating func decode(_ event: snd_seq_event_t, into out: inout [MIDIMessage]) {
        let type = UInt32(event.type)
        switch type {
        case noteOnType, noteType:
            let n = event.data.note
            out.append(.noteOn(UInt7(truncatingIfNeeded: n.note), velocity: UInt7(truncatingIfNeeded: n.velocity),
                channel: Channel(truncatingIfNeeded: n.channel)))
        case noteOffType:
            let n = event.data.note
            out.append(.noteOff(UInt7(truncatingIfNeeded: n.note), velocity: UInt7(truncatingIfNeeded: n.velocity),
                channel: Channel(truncatingIfNeeded: n.channel)))
        case keyPressType:
            let n = event.data.note
            out.append(.polyPressure(UInt7(truncatingIfNeeded: n.note), pressure: UInt7(truncatingIfNeeded: n.velocity),
                channel: Channel(truncatingIfNeeded: n.channel)))
        case controllerType:
            let c = event.data.control
            out.append(.cc(UInt7(truncatingIfNeeded: c.param), value: UInt7(truncatingIfNeeded: c.value),
                channel: Channel(truncatingIfNeeded: c.channel)))
        case programType:
            let c = event.data.control
            out.append(.programChange(UInt7(truncatingIfNeeded: c.value), channel: Channel(truncatingIfNeeded: c.channel)))
        case chanPressType:
            let c = event.data.control
            out.append(.channelPressure(UInt7(truncatingIfNeeded: c.value), channel: Channel(truncatingIfNeeded: c.channel)))
        case pitchBendType:
            let c = event.data.control
            let value = min(max(Int(c.value) + 8192, 0), 16383)
            out.append(.pitchBend(UInt14(value), channel: Channel(truncatingIfNeeded: c.channel)))
        case control14Type:
            // As alsa-lib's seq_midi_event.c: controllers 0–31 carry 14 bits (MSB to
            // the controller, LSB to controller + 32); others a plain 7-bit value.
            let c = event.data.control
            let channel = Channel(truncatingIfNeeded: c.channel)
            if c.param < 32 {
                let v = UInt14(truncatingIfNeeded: c.value)
                out.append(.cc(UInt7(truncatingIfNeeded: c.param), value: v.msb, channel: channel))
                out.append(.cc(UInt7(truncatingIfNeeded: c.param + 32), value: v.lsb, channel: channel))
            } else {
                out.append(.cc(UInt7(truncatingIfNeeded: c.param), value: UInt7(truncatingIfNeeded: c.value), channel: channel))
            }
        case nrpnType, rpnType:
            // Parameter number MSB/LSB (99/98 or 101/100), then data entry MSB/LSB (6/38).
            let c = event.data.control
            let channel = Channel(truncatingIfNeeded: c.channel)
            let parameter = UInt14(truncatingIfNeeded: c.param)
            let value = UInt14(truncatingIfNeeded: c.value)
            let (msbCC, lsbCC): (UInt7, UInt7) = type == nrpnType ? (99, 98) : (101, 100)
            out.append(.cc(msbCC, value: parameter.msb, channel: channel))
            out.append(.cc(lsbCC, value: parameter.lsb, channel: channel))
            out.append(.cc(6, value: value.msb, channel: channel))
            out.append(.cc(38, value: value.lsb, channel: channel))
        case songPosType:
            out.append(.songPosition(UInt14(truncatingIfNeeded: event.data.control.value)))
        case songSelType:
            out.append(.songSelect(UInt7(truncatingIfNeeded: event.data.control.value)))
        case qframeType:
            out.append(.timecodeQuarterFrame(UInt7(truncatingIfNeeded: event.data.control.value)))
        case startType: out.append(.start)
        case continueType: out.append(.continue)
        case stopType: out.append(.stop)
        case clockType: out.append(.timingClock)
        case tuneRequestType: out.append(.tuneRequest)
        case resetType: out.append(.systemReset)
        case sensingType: out.append(.activeSensing)
        case sysexType:
            var event = event
            guard carillon_seq_ev_is_variable(&event) != 0, let ptr = event.data.ext.ptr else { return }
            let chunk = UnsafeRawBufferPointer(start: ptr, count: Int(event.data.ext.len))
            if let message = appendSysEx(chunk, from: SeqAddress(event.source)) { out.append(message) }
        default:
            break
        }
    }

    /// Forgets a half-received SysEx of `source` (it went away).
    public mutating func reset(source: SeqAddress) { partialSysEx[source] = nil }

    /// Adds one chunk of a source's SysEx; returns the message once its F7 arrives.
    /// A chunk starting with F0 starts a new message; a chunk with no message
    /// under way, a status byte inside, or an oversized message is dropped.
    private mutating func appendSysEx(_ chunk: UnsafeRawBufferPointer, from source: SeqAddress) -> MIDIMessage? {
        guard !chunk.isEmpty else { return nil }
        var bytes = chunk[...]
        if bytes.first == 0xF0 {
            partialSysEx[source] = []
            bytes = bytes.dropFirst()
        }
        guard var data = partialSysEx[source] else { return nil }
        partialSysEx[source] = nil  // keep the buffer uniquely referenced while appending
        var complete = false
        for byte in bytes {
            if byte == 0xF7 { complete = true; break }
            if byte >= 0x80 || data.count >= Self.maxSysExLength { return nil }
            data.append(byte)
        }
        if complete { return .sysEx(data) }
        partialSysEx[source] = data
        return nil
    }
}

extension MIDIMessage {
    /// Calls `body` with the sequencer event that carries this message: fixed
    /// length, no destination, no queue (the caller sets those). For SysEx the
    /// event points at the F0 … F7 bytes, valid only inside `body`.
    public func withSeqEvent<R>(_ body: (inout snd_seq_event_t) throws -> R) rethrows -> R {
        var ev = snd_seq_event_t()
        carillon_seq_ev_clear(&ev)
        carillon_seq_ev_set_fixed(&ev)
        func setNote(_ type: snd_seq_event_type, _ ch: Channel, _ note: UInt7, _ vel: UInt7) {
            ev.type = snd_seq_event_type_t(type.rawValue)
            ev.data.note.channel = ch.value
            ev.data.note.note = note.value
            ev.data.note.velocity = vel.value
        }
        func setControl(_ type: snd_seq_event_type, _ ch: UInt8, param: UInt32 = 0, value: Int32) {
            ev.type = snd_seq_event_type_t(type.rawValue)
            ev.data.control.channel = ch
            ev.data.control.param = param
            ev.data.control.value = value
        }
        func setPlain(_ type: snd_seq_event_type) { ev.type = snd_seq_event_type_t(type.rawValue) }

        switch self {
        case .noteOn(let m): setNote(SND_SEQ_EVENT_NOTEON, m.channel, m.note, m.velocity)
        case .noteOff(let m): setNote(SND_SEQ_EVENT_NOTEOFF, m.channel, m.note, m.velocity)
        case .polyPressure(let m): setNote(SND_SEQ_EVENT_KEYPRESS, m.channel, m.note, m.pressure)
        case .controlChange(let m):
            setControl(SND_SEQ_EVENT_CONTROLLER, m.channel.value, param: UInt32(m.controller.value), value: Int32(m.value.value))
        case .programChange(let m): setControl(SND_SEQ_EVENT_PGMCHANGE, m.channel.value, value: Int32(m.program.value))
        case .channelPressure(let m): setControl(SND_SEQ_EVENT_CHANPRESS, m.channel.value, value: Int32(m.pressure.value))
        case .pitchBend(let m): setControl(SND_SEQ_EVENT_PITCHBEND, m.channel.value, value: Int32(m.signedValue))
        case .timecodeQuarterFrame(let v): setControl(SND_SEQ_EVENT_QFRAME, 0, value: Int32(v.value))
        case .songPosition(let v): setControl(SND_SEQ_EVENT_SONGPOS, 0, value: Int32(v.value))
        case .songSelect(let v): setControl(SND_SEQ_EVENT_SONGSEL, 0, value: Int32(v.value))
        case .tuneRequest: setPlain(SND_SEQ_EVENT_TUNE_REQUEST)
        case .timingClock: setPlain(SND_SEQ_EVENT_CLOCK)
        case .start: setPlain(SND_SEQ_EVENT_START)
        case .continue: setPlain(SND_SEQ_EVENT_CONTINUE)
        case .stop: setPlain(SND_SEQ_EVENT_STOP)
        case .activeSensing: setPlain(SND_SEQ_EVENT_SENSING)
        case .systemReset: setPlain(SND_SEQ_EVENT_RESET)
        case .sysEx:
            var framed = bytes  // F0 … F7
            return try framed.withUnsafeMutableBytes { raw in
                carillon_seq_ev_set_sysex(&ev, UInt32(raw.count), raw.baseAddress)
                return try body(&ev)
            }
        }
        return try body(&ev)
    }
}
