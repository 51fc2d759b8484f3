import Foundation
import Testing
@testable import MIDI

/// Status bytes no SMF allows inside a track (system common F1–F6, real-time
/// F8–FE, undefined F4/F5/F9/FD): skipped with a warning, the rest of the track read.
@Suite struct StrayBytesTests {
    typealias B = SMFBytes

    /// note 60 at tick 0; the stray byte (and data) at tick 16; note 62 under running status at tick 48;
    /// note 64 with its own status at tick 96.
    static func body(_ stray: [UInt8]) -> [UInt8] {
        [0x00, 0x90, 60, 100, 0x10] + stray + [0x20, 62, 100, 0x30, 0x90, 64, 100] + B.endOfTrack
    }
    static let expected = [
        TrackEvent(tick: 0, event: .midi(.noteOn(60, velocity: 100, channel: 0))),
        TrackEvent(tick: 48, event: .midi(.noteOn(62, velocity: 100, channel: 0))),
        TrackEvent(tick: 96, event: .midi(.noteOn(64, velocity: 100, channel: 0))),
        TrackEvent(tick: 96, event: .meta(.endOfTrack)),
    ]
    /// The stray byte sits at file offset 14 (MThd) + 8 (MTrk header) + 5.
    static let strayOffset = 27

    func check(_ stray: [UInt8], _ message: String) throws {
        let file = try StandardMIDIFile(bytes: B.file(tracks: [Self.body(stray)]))
        #expect(file.tracks[0].events == Self.expected, "0x\(hex(stray[0]))")
        #expect(file.warnings == [SMFWarning(offset: Self.strayOffset, track: 0, message: message)])
        // Times follow the ticks: 120 BPM, 96 PPQN.
        #expect(file.timeline().map(\.seconds) == [0, 0.25, 0.5, 0.5])
    }

    @Test(arguments: [0xF4, 0xF5, 0xF9, 0xFD] as [UInt8])
    func undefinedStatus_skippedTrackGoesOn(_ byte: UInt8) throws {
        try check([byte], "undefined status byte 0x\(hex(byte)) skipped")
    }

    @Test(arguments: [0xF8, 0xFA, 0xFB, 0xFC, 0xFE] as [UInt8])
    func realTimeByte_skippedTrackGoesOn(_ byte: UInt8) throws {
        try check([byte], "real-time byte 0x\(hex(byte)) skipped")
    }

    @Test func systemCommon_skippedWithItsDataBytes() throws {
        try check([0xF1, 0x23], "system common message 0xF1 and 1 data byte skipped")
        try check([0xF2, 0x10, 0x20], "system common message 0xF2 and 2 data bytes skipped")
        try check([0xF3, 0x05], "system common message 0xF3 and 1 data byte skipped")
        try check([0xF6], "system common message 0xF6 skipped")
    }

    @Test func systemCommon_dataCutShortByTrackEnd() throws {
        // F2 wants two data bytes; the track ends after one.
        let file = try StandardMIDIFile(bytes: B.file(tracks: [[0x00, 0x90, 60, 100, 0x00, 0xF2, 0x05]]))
        #expect(file.tracks[0].events == [TrackEvent(tick: 0, event: .midi(.noteOn(60, velocity: 100, channel: 0)))])
        #expect(file.warnings.first == SMFWarning(offset: 27, track: 0, message: "system common message 0xF2 and 1 data byte skipped"))
    }

    @Test func severalStrayBytes_eachWarned() throws {
        let body: [UInt8] = [0x00, 0xF8, 0x00, 0xF9, 0x00, 0x90, 60, 1, 0x00, 0xFE, 0x10, 61, 1] + B.endOfTrack
        let file = try StandardMIDIFile(bytes: B.file(tracks: [body]))
        #expect(file.allEvents == [.midi(.noteOn(60, velocity: 1, channel: 0)), .midi(.noteOn(61, velocity: 1, channel: 0)), .meta(.endOfTrack)])
        #expect(file.warnings.map(\.offset) == [23, 25, 31])
    }

    /// Offsets (in `body`) where each event starts, by the SMF rules, and whether it uses running status.
    static func eventStarts(_ body: [UInt8]) -> [(offset: Int, running: Bool)] {
        var starts: [(offset: Int, running: Bool)] = [], i = 0, status: UInt8 = 0
        func vlq() -> Int { var v = 0; while body[i] >= 0x80 { v = v << 7 | Int(body[i] & 0x7F); i += 1 }; v = v << 7 | Int(body[i]); i += 1; return v }
        while i < body.count {
            let start = i
            _ = vlq()
            var b = body[i]
            starts.append((start, b < 0x80))
            if b < 0x80 { b = status } else { i += 1 }
            switch b {
            case 0xFF: i += 1; i += vlq()
            case 0xF0, 0xF7: i += vlq()
            default: status = b; i += (b & 0xF0) == 0xC0 || (b & 0xF0) == 0xD0 ? 1 : 2
            }
        }
        return starts
    }

    @Test func realFile_injectedByte_everyEventStillRead() throws {
        let path = "/usr/share/games/openttd/baseset/openmsx/keep_on_rolling.mid"
        try #require(FileManager.default.fileExists(atPath: path), "\(path) missing: run scripts/setup")
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let clean = try StandardMIDIFile(bytes: original)
        #expect(clean.warnings.isEmpty)
        // Inject a zero delta and 0xF9 before an event in the second half of a track that uses
        // running status: the case a cancelled running status would lose.
        func length(at chunk: Int) -> Int { original[(chunk + 4)..<(chunk + 8)].reduce(0) { $0 << 8 | Int($1) } }
        var chunk = 14, injection: (track: Int, chunk: Int, at: Int)?
        for k in clean.tracks.indices {
            let body = Array(original[(chunk + 8)..<(chunk + 8 + length(at: chunk))])
            let starts = Self.eventStarts(body)
            if let event = starts[(starts.count / 2)...].first(where: { $0.running }) {
                injection = (k, chunk, chunk + 8 + event.offset)
                break
            }
            chunk += 8 + length(at: chunk)
        }
        let (k, trackChunk, at) = try #require(injection)
        var damaged = original
        damaged.insert(contentsOf: [0x00, 0xF9], at: at)
        damaged.replaceSubrange((trackChunk + 4)..<(trackChunk + 8), with: B.be32(UInt32(length(at: trackChunk) + 2)))
        let file = try StandardMIDIFile(bytes: damaged)
        #expect(file.warnings == [SMFWarning(offset: at + 1, track: k, message: "undefined status byte 0xF9 skipped")])
        #expect(file.tracks == clean.tracks)
        #expect(file.timeline() == clean.timeline())
    }
}
