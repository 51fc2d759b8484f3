import Testing
@testable import MIDI

/// The header's track count, as FluidSynth's player, mido and symusic read it.
@Suite struct SMFReaderTrackCountTests {
    typealias B = SMFBytes

    static func note(_ key: UInt8) -> [UInt8] { [0x00, 0x90, key, 100, 0x60, 0x80, key, 0] + B.endOfTrack }

    @Test func extraTrackChunks_notReadWarnedOnce() throws {
        // Declares 1 track; two more chunks repeat it (the song would sound three times).
        let bytes = B.header(tracks: 1) + B.track(Self.note(60)) + B.track(Self.note(60)) + B.track(Self.note(60))
        let file = try StandardMIDIFile(bytes: bytes)
        #expect(file.tracks.count == 1)
        #expect(file.allEvents.count == 3)
        #expect(file.warnings == [SMFWarning(offset: 14 + 20, track: nil, message: "header declares 1 track: 2 track chunks after it not read")])
    }

    @Test func declaredZero_readsNoTrack() throws {
        let file = try StandardMIDIFile(bytes: B.header(tracks: 0) + B.track(Self.note(60)))
        #expect(file.tracks.isEmpty)
        #expect(file.warnings == [SMFWarning(offset: 14, track: nil, message: "header declares 0 tracks: 1 track chunk not read")])
    }

    @Test func unknownChunks_skippedNotCounted() throws {
        let bytes = B.header(tracks: 2) + B.chunk("XFIH", [1, 2]) + B.track(Self.note(60)) + B.chunk("XFKM", [])
            + B.track(Self.note(62)) + B.track(Self.note(64))
        let file = try StandardMIDIFile(bytes: bytes)
        #expect(file.tracks.count == 2)
        #expect(file.allEvents.contains(.midi(.noteOn(62, velocity: 100, channel: 0))))
        #expect(!file.allEvents.contains(.midi(.noteOn(64, velocity: 100, channel: 0))))
        #expect(file.warnings.map(\.message) == ["header declares 2 tracks: 1 track chunk after them not read"])
    }

    @Test func extraChunkWithoutChannelMessages_notWarned() throws {
        // Seq66 appends, uncounted, a chunk of its settings: meta events only.
        let settings: [UInt8] = [0x00, 0xFF, 0x03, 0x03, 0x53, 0x65, 0x71, 0x00, 0xFF, 0x7F, 0x04, 0x24, 0x24, 0x00, 0x10] + B.endOfTrack
        let file = try StandardMIDIFile(bytes: B.header(tracks: 1) + B.track(Self.note(60)) + B.track(settings))
        #expect(file.tracks.count == 1)
        #expect(file.warnings.isEmpty)
    }

    @Test func fewerThanDeclared_readAllWarned() throws {
        let file = try StandardMIDIFile(bytes: B.header(tracks: 1) + B.chunk("XFIH", []))
        #expect(file.tracks.isEmpty)
        #expect(file.warnings == [SMFWarning(offset: 10, track: nil, message: "header declares 1 track, found 0")])
    }
}

/// A data byte with its top bit set inside a channel message: read as data (clamped to
/// 127) as FluidSynth's player and symusic read it, unless it clearly starts the next event.
@Suite struct SMFReaderHighDataByteTests {
    typealias B = SMFBytes

    /// Offset of a track body's first byte in `B.file` with one track.
    static let body = 22

    @Test func highVelocity_readAsDataTrackGoesOn() throws {
        // 0xC0 could also start a program change (C0 10), and the bytes after would parse
        // both ways: the data reading, the peers' reading, wins the tie.
        let track: [UInt8] = [0x00, 0x90, 60, 0xC0, 0x10, 0x80, 60, 0, 0x00, 0x90, 62, 90, 0x10, 0x80, 62, 0] + B.endOfTrack
        let file = try StandardMIDIFile(bytes: B.file(tracks: [track]))
        #expect(file.allEvents == [
            .midi(.noteOn(60, velocity: 127, channel: 0)), .midi(.noteOff(60, channel: 0)),
            .midi(.noteOn(62, velocity: 90, channel: 0)), .midi(.noteOff(62, channel: 0)), .meta(.endOfTrack),
        ])
        #expect(file.tracks[0].events.map(\.tick) == [0, 0x10, 0x10, 0x20, 0x20])
        #expect(file.warnings == [SMFWarning(offset: Self.body + 3, track: 0, message: "data byte 0xC0 over 127 read as 127")])
    }

    @Test func highKeyAndController_clampedEachKind() throws {
        // Note number 0xBC (→ 127), then a controller value 0xFF (→ 127) under running status.
        let track: [UInt8] = [0x00, 0x90, 0xBC, 100, 0x10, 0x80, 60, 0, 0x00, 0xB0, 7, 0xFF, 0x00, 10, 64] + B.endOfTrack
        let file = try StandardMIDIFile(bytes: B.file(tracks: [track]))
        #expect(file.allEvents == [
            .midi(.noteOn(127, velocity: 100, channel: 0)), .midi(.noteOff(60, channel: 0)),
            .midi(.cc(7, value: 127, channel: 0)), .midi(.cc(10, value: 64, channel: 0)), .meta(.endOfTrack),
        ])
        #expect(file.warnings == [SMFWarning(offset: Self.body + 2, track: 0,
                                             message: "2 data bytes over 127 read as 127 (the first: 0xBC)")])
    }

    @Test func manyHighBytes_oneWarningPerTrack() throws {
        // 500 note pairs, every velocity 0xE4: 500 notes, one warning in each of two tracks.
        // (Velocity 0x80, masked, would have been a note-off: clamped, it stays a note.)
        var track: [UInt8] = []
        for k in 0..<500 { track += [0x00, 0x90, UInt8(30 + k % 60), k == 0 ? 0x80 : 0xE4, 0x08, 0x80, UInt8(30 + k % 60), 0x40] }
        track += B.endOfTrack
        let file = try StandardMIDIFile(bytes: B.file(tracks: [track, track]))
        let velocities = file.allEvents.compactMap { e -> Int? in
            if case .midi(.noteOn(let n)) = e { return n.velocity.intValue } else { return nil }
        }
        #expect(velocities.count == 1000)
        #expect(velocities.allSatisfy { $0 == 127 })
        #expect(file.warnings.map(\.message) == Array(repeating: "500 data bytes over 127 read as 127 (the first: 0x80)", count: 2))
        #expect(file.warnings.map(\.track) == [0, 1])
    }

    @Test func statusAfterShortMessage_readAsNextEvent() throws {
        // The second note-on lost its velocity: 0x90 after its key starts a whole note-on.
        // Read as data (velocity 0x10), the bytes after derail ("3E 40 10 80 3C 00 00 FF 2F 00"
        // ends inside a message); read as a status, everything after is well formed.
        let track: [UInt8] = [0x00, 0x90, 60, 64, 0x10, 0x90, 62, 0x90, 62, 64, 0x10, 0x80, 60, 0] + B.endOfTrack
        let file = try StandardMIDIFile(bytes: B.file(tracks: [track]))
        #expect(file.allEvents == [
            .midi(.noteOn(60, velocity: 64, channel: 0)), .midi(.noteOn(62, velocity: 64, channel: 0)),
            .midi(.noteOff(60, channel: 0)), .meta(.endOfTrack),
        ])
        #expect(file.tracks[0].events.map(\.tick) == [0, 0x10, 0x20, 0x20])
        #expect(file.warnings == [SMFWarning(offset: Self.body + 5, track: 0,
                                             message: "channel message 0x90 cut short by a status byte dropped (0x90 starts the next event)")])
    }

    @Test func endOfTrackAfterShortMessage_endsTrack() throws {
        // A note-on without its velocity right before the end of track.
        let track: [UInt8] = [0x00, 0x90, 60, 64, 0x10, 0x80, 60, 0xFF, 0x2F, 0x00]
        let file = try StandardMIDIFile(bytes: B.file(tracks: [track]))
        #expect(file.allEvents == [.midi(.noteOn(60, velocity: 64, channel: 0)), .meta(.endOfTrack)])
        #expect(file.tracks[0].events.map(\.tick) == [0, 0x10])
        #expect(file.warnings.map(\.message) == ["channel message 0x80 cut short by a status byte dropped (0xFF starts the next event)"])
    }

    @Test func highByteNeitherReadingClean_readAsData() throws {
        // Both readings derail: the data reading (the peers') is kept, and the track stops
        // later where it stops making sense, as before.
        let track: [UInt8] = [0x00, 0x90, 60, 0xF4, 0x10, 0x80, 0x81]
        let file = try StandardMIDIFile(bytes: B.file(tracks: [track]))
        #expect(file.allEvents.first == .midi(.noteOn(60, velocity: 127, channel: 0)))
        #expect(file.warnings.first?.message == "data byte 0xF4 over 127 read as 127")
    }

    @Test func damagedBytesEverywhere_neverTrap() throws {
        // Every byte of a small well-formed track replaced in turn by every value with the top
        // bit set, and every prefix of the two damaged tracks above: the reader must not trap.
        let track: [UInt8] = [0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20, 0x00, 0xC0, 5, 0x00, 0x90, 60, 64, 0x10, 0xE0, 0, 64,
                              0x10, 0x80, 60, 0, 0x00, 0xF0, 0x02, 0x01, 0xF7] + B.endOfTrack
        var files = 0
        for at in 0..<track.count {
            for value in UInt8(0x80)...0xFF {
                var damaged = track
                damaged[at] = value
                let file = try StandardMIDIFile(bytes: B.file(tracks: [damaged, track]))
                #expect(file.tracks.count == 2)
                files += 1
            }
        }
        let cut: [UInt8] = [0x00, 0x90, 60, 64, 0x10, 0x90, 62, 0x90, 62, 64, 0x10, 0x80, 60, 0] + B.endOfTrack
        let whole = B.file(tracks: [cut])
        for n in 14..<whole.count {
            _ = try StandardMIDIFile(bytes: Array(whole.prefix(n)))
        }
        #expect(files == track.count * 128)
    }
}
