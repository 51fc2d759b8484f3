import Engine
import Testing

/// JACK MIDI's wire bytes into a queue (`push(midiBytes:frame:)`): channel
/// messages and whole SysEx queued, system messages skipped, a message cut short refused.
@Suite struct EventQueueMIDIBytesTests {
    @Test func midiBytes_becomeChannelMessagesAndSysEx_othersSkipped() {
        let queue = EventQueue(capacity: 16)
        let messages: [[UInt8]] = [[0x90, 60, 100], [0xC3, 7], [0xF8], [0xB0, 7], [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7], [0xE2, 0, 64]]
        var results: [Bool] = []
        for (i, m) in messages.enumerated() {
            results.append(m.withUnsafeBufferPointer { queue.push(midiBytes: $0, frame: UInt64(i)) })
        }
        // The clock byte is skipped (true, nothing queued); the CC cut short is refused.
        #expect(results == [true, true, true, false, true, true])
        var got: [ChannelMessage] = [], sysEx: [[UInt8]] = [], frames: [UInt64] = []
        while let e = queue.peek() {
            frames.append(e.frame)
            if let bytes = queue.headSysEx() { sysEx.append(Array(bytes)) } else { got.append(e.message) }
            queue.pop()
        }
        #expect(got == [.noteOn(60, velocity: 100, channel: 0), .programChange(7, channel: 3),
                        ChannelMessage(status: 0xE2, data1: 0, data2: 64)])
        #expect(sysEx == [[0x7E, 0x7F, 0x09, 0x01]])
        #expect(frames == [0, 1, 4, 5])
    }
}
