extension EventQueue {
    /// Producer thread only: one whole MIDI message in its wire bytes (as JACK
    /// MIDI delivers them: one message per event, status byte first, no
    /// running status), to apply at `frame`. Channel voice messages and SysEx
    /// (`F0 … F7`) are queued; system common and real-time messages (clock,
    /// active sensing…) mean nothing to an instrument and are skipped.
    /// Returns false for a message cut short or a full queue (counted by
    /// `overflowCount`). Never blocks, never allocates (plain comparisons and
    /// pointer reads: range patterns and slices cost heap calls in debug builds).
    @discardableResult
    public func push(midiBytes bytes: UnsafeBufferPointer<UInt8>, frame: UInt64) -> Bool {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return false }
        let count = bytes.count, status = base[0]
        if status >= 0x80 && status < 0xF0 {
            let kind = status & 0xF0
            let length = kind == 0xC0 || kind == 0xD0 ? 2 : 3
            guard count >= length else { return false }
            let message = ChannelMessage(status: status, data1: base[1], data2: length == 3 ? base[2] : 0)
            return push(TimedMessage(frame: frame, message: message))
        }
        if status == 0xF0 {
            guard count >= 3, base[count - 1] == 0xF7 else { return false }
            return pushSysEx(UnsafeBufferPointer(start: base + 1, count: count - 2), frame: frame)
        }
        return true
    }
}
