// libFuzzer entry point for the Standard MIDI File reader (see scripts/fuzz).
// Reads, and when the file reads: merges the timeline, writes it and reads the
// written bytes again, checking that the events survive the round trip.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFileReader(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let file = try? StandardMIDIFile(bytes: bytes) else { return 0 }
    let timeline = file.timeline()
    precondition(timeline.count == file.tracks.reduce(0) { $0 + $1.events.count })
    _ = file.duration
    let map = file.tempoMap
    for e in timeline.prefix(64) {
        let back = map.tick(atSeconds: e.seconds)
        precondition(back.isFinite)
    }
    let again = try! StandardMIDIFile(bytes: file.serialized())
    precondition(again.tracks.count == file.tracks.count)
    for (a, b) in zip(file.tracks, again.tracks) {
        // The writer adds a missing end-of-track and drops ones before the last event.
        let strip = { (t: Track) in t.events.filter { if case .meta(.endOfTrack) = $0.event { false } else { true } } }
        precondition(strip(a) == strip(b), "round trip changed a track")
    }
    return 0
}
