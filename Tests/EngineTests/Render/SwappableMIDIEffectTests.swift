import Engine
import Testing

/// A zone's MIDI effect slot (a reload's chain): the effect replaced is sent
/// All Notes Off in the block the new one is taken, so what it sounds ends
/// there; it is then freed off the render thread, not on it.
@Suite struct SwappableMIDIEffectTests {
    /// Echoes every note-on it gets as a note on channel `channel` and, on
    /// All Notes Off, ends every note it has on (as a chain does).
    final class Echo: MIDIEffect {
        let channel: UInt8
        private var on: [UInt8] = []
        private var pending: [(offset: Int, message: ChannelMessage)] = []
        init(channel: UInt8) { self.channel = channel; on.reserveCapacity(128); pending.reserveCapacity(128) }
        func receive(_ message: ChannelMessage, at offset: Int) {
            if message.kind == 0x90 && message.data2 > 0 {
                on.append(message.data1)
                pending.append((offset, ChannelMessage(status: 0x90 | channel, data1: message.data1, data2: message.data2)))
            } else if message.kind == 0xB0 && message.data1 == 123 {
                for key in on { pending.append((offset, ChannelMessage(status: 0x80 | channel, data1: key, data2: 0))) }
                on.removeAll(keepingCapacity: true)
            }
        }
        func process(frames: Int, into output: UnsafeMutableBufferPointer<TimedMessage>) -> Int {
            var n = 0
            for p in pending where n < output.count { output[n] = TimedMessage(frame: UInt64(p.offset), message: p.message); n += 1 }
            pending.removeAll(keepingCapacity: true)
            return n
        }
    }

    @Test func replace_endsTheOldEffectsNotes_inTheBlockTheNewOneStarts() {
        let output = UnsafeMutableBufferPointer<TimedMessage>.allocate(capacity: 16)
        defer { output.deallocate() }
        func block(_ slot: SwappableMIDIEffect) -> [String] {
            (0..<slot.process(frames: 64, into: output)).map { "\(output[$0].message)" }
        }
        let empty = SwappableMIDIEffect()
        empty.receive(.noteOn(60, velocity: 100, channel: 0), at: 3)
        #expect(block(empty).isEmpty, "an empty slot sends nothing")

        weak var first: Echo?
        let slot: SwappableMIDIEffect = {
            let echo = Echo(channel: 1)
            first = echo
            return SwappableMIDIEffect(echo)
        }()
        slot.receive(.noteOn(60, velocity: 100, channel: 0), at: 5)
        #expect(block(slot) == ["91 3C 64"])
        slot.replace(with: Echo(channel: 2))
        #expect(slot.isSwapping)
        slot.receive(.noteOn(62, velocity: 90, channel: 0), at: 7)   // the block's first message: the new effect's
        #expect(block(slot) == ["81 3C 00", "92 3E 5A"], "the old one's note ends, the new one plays")
        #expect(first != nil, "the old effect is not freed on the render thread")
        slot.collectRetired()
        #expect(first == nil && !slot.isSwapping)
        #expect(block(slot).isEmpty, "the old effect is gone: nothing sent twice")
    }
}
