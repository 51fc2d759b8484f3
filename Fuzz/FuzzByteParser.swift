// libFuzzer entry point for the live byte parser (see scripts/fuzz). Feeds the
// input in one go and split at a position given by the first byte, and checks
// that both give the same messages.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzByteParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let split = bytes.isEmpty ? 0 : Int(data[0]) % (bytes.count + 1)
    let whole = MIDIByteParser.parsedMessages(in: bytes, state: MIDIByteParser(maxSysExLength: 512))
    let first = MIDIByteParser.parsedMessages(in: bytes[..<split], state: MIDIByteParser(maxSysExLength: 512))
    let second = MIDIByteParser.parsedMessages(in: bytes[split...], state: first.state)
    precondition(whole.messages == first.messages + second.messages, "split changed the messages")
    precondition(whole.state == second.state)
    // Every message re-encodes to bytes that parse back to itself (real-time aside, which has no running status).
    for m in whole.messages where !m.isRealTime {
        let again = MIDIByteParser.parsedMessages(in: m.bytes, state: MIDIByteParser()).messages
        precondition(again == [m], "re-encoding changed \(m)")
    }
    return 0
}
