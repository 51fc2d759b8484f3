extension EventQueue {
    /// Producer thread only: one whole MIDI message in its wire bytes (as JACK
    /// MIDI delivers them: one message per event, status byte first, no
    /// running status), to apply at `frame`. Channel voice messages and SysEx
    /// (`F0 … F7`) are queued; system common and real-time messages (clock,
    /// active sensing…) mean nothing to an instrument and are skipped.
    /// Returns false for a message cut short or a full queue (counted by
    /// `overflowCount`). Never blocks, never allocates.
    @discardableResult
    public func push(midiBytes bytes: UnsafeBufferPointer<UInt8>, frame: UInt64) -> Bool {
        guard let status = bytes.first else { return false }
        switch status {
        case 0x80...0xEF:
            let kind = status & 0xF0
            let length = kind == 0xC0 || kind == 0xD0 ? 2 : 3
            guard bytes.count >= length else { return false }
            let message = ChannelMessage(status: status, data1: bytes[1], data2: length == 3 ? bytes[2] : 0)
            return push(TimedMessage(frame: frame, message: message))
        case 0xF0:
            guard bytes.count >= 3, bytes[bytes.count - 1] == 0xF7 else { return false }
            return pushSysEx(UnsafeBufferPointer(rebasing: bytes[1..<(bytes.count - 1)]), frame: frame)
        default:
            return true
        }
    }
}
