/// A score's SysEx messages in one byte pool, allocated when the score is
/// scheduled, read by the render thread without allocating: message `i`
/// (the number in its `ChannelMessage.sysExPlaceholder`) is a slice of the pool.
struct SysExTable {
    private var bytes: UnsafeMutableBufferPointer<UInt8> = .init(start: nil, count: 0)
    /// Per message: start offset in `bytes`; one more entry holds the end.
    private var starts: UnsafeMutableBufferPointer<Int> = .init(start: nil, count: 0)

    /// Not on the render thread.
    mutating func replace(with messages: [[UInt8]]) {
        release()
        guard !messages.isEmpty else { return }
        let total = messages.reduce(0) { $0 + $1.count }
        bytes = .allocate(capacity: max(1, total))
        starts = .allocate(capacity: messages.count + 1)
        var offset = 0
        for (i, message) in messages.enumerated() {
            starts[i] = offset
            for (j, b) in message.enumerated() { bytes[offset + j] = b }
            offset += message.count
        }
        starts[messages.count] = offset
    }

    mutating func release() {
        if bytes.baseAddress != nil { bytes.deallocate() }
        if starts.baseAddress != nil { starts.deallocate() }
        bytes = .init(start: nil, count: 0)
        starts = .init(start: nil, count: 0)
    }

    var count: Int { max(0, starts.count - 1) }

    /// The bytes of message `index` (between F0 and F7), nil when there is none. Render thread.
    @inline(__always)
    func message(_ index: Int) -> UnsafeBufferPointer<UInt8>? {
        guard index >= 0, index + 1 < starts.count, let base = bytes.baseAddress else { return nil }
        return UnsafeBufferPointer(start: base + starts[index], count: starts[index + 1] - starts[index])
    }
}
