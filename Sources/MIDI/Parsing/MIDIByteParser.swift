/// A streaming parser for live MIDI 1.0 bytes (a serial port, a USB packet
/// stream, a raw ALSA device). Pure: the state goes in and comes out, so a
/// message split across packets is completed by the next call.
///
/// - Running status: data bytes after a complete channel message repeat its status.
/// - System real-time bytes (F8–FF) are delivered at once wherever they
///   appear, even between the data bytes of a message or inside SysEx, and
///   change nothing else.
/// - SysEx (F0 … F7) may span any number of packets. Any other status byte
///   ends it as an implied F7 (MIDI 1.0), and the SysEx is delivered.
/// - Stray data bytes (no status in force), a lone F7 and undefined status
///   bytes (F4, F5, F9, FD) are skipped and counted in `skippedBytes`; an
///   undefined status cancels running status.
/// - A SysEx longer than `maxSysExLength` is dropped (counted), and its
///   remaining bytes are skipped.
public struct MIDIByteParser: Hashable, Sendable {
    /// The status whose data bytes are awaited (channel or system common), 0 if none.
    public private(set) var runningStatus: UInt8 = 0
    private var data1: UInt8 = 0
    private var dataCount: UInt8 = 0
    /// The bytes of an open SysEx after F0, nil outside SysEx.
    public private(set) var sysEx: [UInt8]?
    /// Bytes skipped since the parser was made: strays, undefined status bytes, dropped SysEx.
    public private(set) var skippedBytes: Int = 0
    public var maxSysExLength: Int

    public init(maxSysExLength: Int = 1 << 20) { self.maxSysExLength = maxSysExLength }

    /// The messages in `bytes`, and the parser state to continue with.
    public static func parsedMessages(in bytes: some Sequence<UInt8>, state: MIDIByteParser)
        -> (messages: [MIDIMessage], state: MIDIByteParser)
    {
        var parser = state
        var messages: [MIDIMessage] = []
        parser.parse(bytes) { messages.append($0) }
        return (messages, parser)
    }

    /// Feeds `bytes`, handing each complete message to `emit` in order.
    public mutating func parse(_ bytes: some Sequence<UInt8>, emit: (MIDIMessage) -> Void) {
        for b in bytes { feed(b, emit: emit) }
    }

    /// Feeds one byte.
    @inline(__always)
    public mutating func feed(_ b: UInt8, emit: (MIDIMessage) -> Void) {
        if b >= 0xF8 {
            // Real-time: out of band.
            if let m = MIDIMessage(status: b) { emit(m) } else { skippedBytes += 1 }
            return
        }
        if b >= 0x80 {
            if sysEx != nil {
                if b == 0xF7 {
                    emit(.sysEx(sysEx!))
                    sysEx = nil
                    runningStatus = 0
                    return
                }
                emit(.sysEx(sysEx!))   // implied end of SysEx
                sysEx = nil
            }
            dataCount = 0
            switch b {
            case 0xF0:
                runningStatus = 0
                sysEx = []
            case 0xF7, 0xF4, 0xF5:
                runningStatus = 0
                skippedBytes += 1
            case 0xF6:
                runningStatus = 0
                emit(.tuneRequest)
            default:
                runningStatus = b   // channel status, or F1/F2/F3 awaiting data
            }
            return
        }
        // A data byte.
        if sysEx != nil {
            if sysEx!.count >= maxSysExLength {
                skippedBytes += sysEx!.count + 2
                sysEx = nil
                runningStatus = 0
            } else {
                sysEx!.append(b)
            }
            return
        }
        guard runningStatus != 0 else { skippedBytes += 1; return }
        let needed = runningStatus >= 0xC0 && runningStatus < 0xE0 || runningStatus == 0xF1 || runningStatus == 0xF3 ? 1 : 2
        if dataCount == 0 && needed == 2 {
            data1 = b
            dataCount = 1
            return
        }
        let message: MIDIMessage
        if needed == 1 {
            message = MIDIMessage(status: runningStatus, data1: b)!
        } else {
            message = MIDIMessage(status: runningStatus, data1: data1, data2: b)!
        }
        dataCount = 0
        if runningStatus >= 0xF0 { runningStatus = 0 }   // system common has no running status
        emit(message)
    }
}
