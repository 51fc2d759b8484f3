import Testing
@testable import MIDI

@Suite struct SMFReaderTests {
    typealias B = SMFBytes

    @Test func format0_readsEventsAtAbsoluteTicks() throws {
        let bytes = B.file(format: 0, tracks: [[0x00, 0x90, 60, 100, 0x60, 0x80, 60, 0, 0x81, 0x00, 0x90, 62, 1] + B.endOfTrack])
        let file = try StandardMIDIFile(bytes: bytes)
        #expect(file.format == .singleTrack)
        #expect(file.division == .ticksPerQuarterNote(96))
        #expect(file.warnings.isEmpty)
        #expect(file.tracks[0].events == [
            TrackEvent(tick: 0, event: .midi(.noteOn(60, velocity: 100, channel: 0))),
            TrackEvent(tick: 96, event: .midi(.noteOff(60, channel: 0))),
            TrackEvent(tick: 224, event: .midi(.noteOn(62, velocity: 1, channel: 0))),
            TrackEvent(tick: 224, event: .meta(.endOfTrack)),
        ])
    }

    @Test func runningStatus_insideTrack() throws {
        let file = try StandardMIDIFile(bytes: B.file(tracks: [[0x00, 0xB1, 7, 100, 0x10, 10, 64, 0x00, 0xC1, 5, 0x00, 6] + B.endOfTrack]))
        #expect(file.allEvents == [
            .midi(.cc(7, value: 100, channel: 1)), .midi(.cc(10, value: 64, channel: 1)),
            .midi(.programChange(5, channel: 1)), .midi(.programChange(6, channel: 1)), .meta(.endOfTrack),
        ])
    }

    @Test func runningStatus_acrossMetaIsToleratedForRealFiles() throws {
        let body: [UInt8] = [0x00, 0x90, 60, 100, 0x00, 0xFF, 0x01, 0x01, 0x41, 0x10, 60, 0] + B.endOfTrack
        let file = try StandardMIDIFile(bytes: B.file(tracks: [body]))
        #expect(file.allEvents == [
            .midi(.noteOn(60, velocity: 100, channel: 0)), .meta(.text(.text, [0x41])),
            .midi(.noteOn(60, velocity: 0, channel: 0)), .meta(.endOfTrack),
        ])
        #expect(file.warnings.isEmpty)
    }

    @Test func metaEvents_allKinds() throws {
        var body: [UInt8] = []
        body += [0x00, 0xFF, 0x00, 0x02, 0x00, 0x07]
        for kind in MetaEvent.TextKind.allCases { body += [0x00, 0xFF, kind.rawValue, 0x02, 0x48, 0x69] }
        body += [0x00, 0xFF, 0x20, 0x01, 0x09]
        body += [0x00, 0xFF, 0x21, 0x01, 0x02]
        body += [0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20]
        body += [0x00, 0xFF, 0x54, 0x05, 0x61, 0x02, 0x03, 0x04, 0x05]
        body += [0x00, 0xFF, 0x58, 0x04, 0x06, 0x03, 0x18, 0x08]
        body += [0x00, 0xFF, 0x59, 0x02, 0xFD, 0x01]
        body += [0x00, 0xFF, 0x7F, 0x03, 0x00, 0x00, 0x41]
        body += [0x00, 0xFF, 0x60, 0x01, 0x33]
        body += [0x00, 0xFF, 0x51, 0x02, 0x01, 0x02]   // tempo with a wrong length
        body += B.endOfTrack
        let file = try StandardMIDIFile(bytes: B.file(tracks: [body]))
        var expected: [FileEvent] = [.meta(.sequenceNumber(7))]
        expected += MetaEvent.TextKind.allCases.map { .meta(.text($0, [0x48, 0x69])) }
        expected += [
            .meta(.channelPrefix(9)), .meta(.port(2)), .meta(.tempo(microsecondsPerQuarterNote: 500_000)),
            .meta(.smpteOffset(.init(hours: 0x61, minutes: 2, seconds: 3, frames: 4, fractionalFrames: 5))),
            .meta(.timeSignature(.init(numerator: 6, denominatorPower: 3, clocksPerClick: 24, thirtySecondsPerQuarter: 8))),
            .meta(.keySignature(.init(sharpsOrFlats: -3, isMinor: true))),
            .meta(.sequencerSpecific([0, 0, 0x41])),
            .meta(.unknown(type: 0x60, data: [0x33])),
            .meta(.unknown(type: 0x51, data: [1, 2])),
            .meta(.endOfTrack),
        ]
        #expect(file.allEvents == expected)
        #expect(file.tracks[0].name == "Hi")
    }

    @Test func sysExEvents_completeDividedAndEscape() throws {
        let body: [UInt8] = [
            0x00, 0xF0, 0x05, 0x7E, 0x7F, 0x09, 0x01, 0xF7,     // complete
            0x00, 0xF0, 0x02, 0x43, 0x12,                       // first packet
            0x10, 0xF7, 0x03, 0x00, 0x01, 0xF7,                 // continuation
            0x00, 0xF7, 0x02, 0xF3, 0x01,                       // escape: raw song select
        ] + B.endOfTrack
        let file = try StandardMIDIFile(bytes: B.file(tracks: [body]))
        #expect(file.allEvents == [
            .midi(.sysEx([0x7E, 0x7F, 0x09, 0x01])), .sysExStart([0x43, 0x12]),
            .sysExEscape([0x00, 0x01, 0xF7]), .sysExEscape([0xF3, 0x01]), .meta(.endOfTrack),
        ])
        #expect(file.tracks[0].events[2].tick == 16)
    }

    @Test func textString_utf8OrLatin1() {
        #expect(MetaEvent.string(from: Array("Piano".utf8)) == "Piano")
        #expect(MetaEvent.string(from: Array("Grüße".utf8)) == "Grüße")
        #expect(MetaEvent.string(from: [0x53, 0x70, 0xE5, 0x72]) == "Spår")   // Latin-1, as in real files
    }

    @Test func division_smpte() throws {
        let file = try StandardMIDIFile(bytes: B.file(division: 0xE728, tracks: [B.endOfTrack]))   // -25 fps, 40 ticks
        #expect(file.division == .smpte(framesPerSecond: 25, ticksPerFrame: 40))
        let drop = try StandardMIDIFile(bytes: B.file(division: 0xE350, tracks: [B.endOfTrack]))   // -29: 30 drop-frame
        #expect(drop.division == .smpte(framesPerSecond: 29, ticksPerFrame: 80))
    }

    @Test func format2_readsAllTracks() throws {
        let file = try StandardMIDIFile(bytes: B.file(format: 2, tracks: [B.endOfTrack, B.endOfTrack, B.endOfTrack]))
        #expect(file.format == .sequentialTracks)
        #expect(file.tracks.count == 3)
    }

    @Test func unknownChunk_skippedSilently() throws {
        let bytes = B.header(tracks: 1) + B.chunk("XFIH", [1, 2, 3]) + B.track([0x00, 0x90, 1, 2] + B.endOfTrack)
        let file = try StandardMIDIFile(bytes: bytes)
        #expect(file.tracks.count == 1)
        #expect(file.warnings.isEmpty)
    }

    @Test func headerLongerThanSix_extraSkipped() throws {
        let bytes = B.header(tracks: 1, length: 8) + [0, 0] + B.track(B.endOfTrack)
        let file = try StandardMIDIFile(bytes: bytes)
        #expect(file.tracks.count == 1)
        #expect(file.warnings.isEmpty)
    }

    @Test func riffRMID_unwrapped() throws {
        let smf = B.file(format: 0, tracks: [[0x00, 0x90, 60, 1] + B.endOfTrack])
        var riff: [UInt8] = Array("RIFF".utf8) + B.le32(UInt32(4 + 8 + 4 + 8 + smf.count)) + Array("RMID".utf8)
        riff += Array("LIST".utf8) + B.le32(4) + Array("INFO".utf8)
        riff += Array("data".utf8) + B.le32(UInt32(smf.count)) + smf
        let file = try StandardMIDIFile(bytes: riff)
        #expect(file.allEvents == [.midi(.noteOn(60, velocity: 1, channel: 0)), .meta(.endOfTrack)])
        #expect(file.warnings.isEmpty)
    }

    @Test func leadingWrapper_skippedWithWarning() throws {
        let file = try StandardMIDIFile(bytes: Array(repeating: 0, count: 128) + B.file(tracks: [B.endOfTrack]))
        #expect(file.tracks.count == 1)
        #expect(file.warnings.map(\.offset) == [0])
    }
}

/// Each malformation: its typed error, or its salvaged events and warning.
@Suite struct SMFMalformedTests {
    typealias B = SMFBytes

    func error(_ bytes: [UInt8]) -> SMFError? {
        do { _ = try StandardMIDIFile(bytes: bytes); return nil } catch { return error }
    }

    @Test func empty_refused() { #expect(error([]) == SMFError(.empty, at: 0)) }

    @Test func notMIDI_refused() {
        #expect(error(Array("hello, this is not a MIDI file".utf8)) == SMFError(.notAMIDIFile, at: 0))
    }

    @Test func truncatedHeader_refused() {
        #expect(error(Array("MThd".utf8) + [0, 0, 0, 6, 0, 1]) == SMFError(.truncatedHeader, at: 0))
    }

    @Test func headerTooShort_refused() {
        #expect(error(B.header(tracks: 1, length: 4) + B.track(B.endOfTrack)) == SMFError(.headerTooShort(4), at: 4))
    }

    @Test func unsupportedFormat_refused() {
        #expect(error(B.file(format: 3, tracks: [B.endOfTrack])) == SMFError(.unsupportedFormat(3), at: 8))
    }

    @Test func zeroDivision_refused() {
        #expect(error(B.file(division: 0, tracks: [B.endOfTrack])) == SMFError(.invalidDivision(0), at: 12))
    }

    @Test func badSMPTERate_refused() {
        #expect(error(B.file(division: 0xE928, tracks: [B.endOfTrack])) == SMFError(.invalidDivision(0xE928), at: 12))
        #expect(error(B.file(division: 0xE700, tracks: [B.endOfTrack])) == SMFError(.invalidDivision(0xE700), at: 12))
    }

    @Test func riffWithoutData_refused() {
        let riff = Array("RIFF".utf8) + B.le32(4) + Array("RMID".utf8)
        #expect(error(riff) == SMFError(.riffWithoutData, at: 12))
        #expect(error(Array("RIFF".utf8) + B.le32(4) + Array("WAVE".utf8)) == SMFError(.notAMIDIFile, at: 8))
    }

    @Test func errorDescription_namesOffset() {
        #expect(SMFError(.unsupportedFormat(3), at: 8).description == "unsupported SMF format 3 at byte 8")
    }

    @Test func chunkLengthPastEnd_salvaged() throws {
        let bytes = B.header(tracks: 1) + B.track([0x00, 0x90, 60, 1] + B.endOfTrack, length: 1000)
        let file = try StandardMIDIFile(bytes: bytes)
        #expect(file.allEvents == [.midi(.noteOn(60, velocity: 1, channel: 0)), .meta(.endOfTrack)])
        #expect(file.warnings.count == 1)
        #expect(file.warnings[0].offset == 18)
        #expect(file.warnings[0].message.contains("runs past the end"))
    }

    @Test func missingEndOfTrack_salvaged() throws {
        let file = try StandardMIDIFile(bytes: B.file(tracks: [[0x00, 0x90, 60, 1, 0x10, 0x80, 60, 0]]))
        #expect(file.allEvents == [.midi(.noteOn(60, velocity: 1, channel: 0)), .midi(.noteOff(60, channel: 0))])
        #expect(file.warnings.map(\.offset) == [30])
        #expect(file.warnings[0].message == "track has no end-of-track event")
    }

    @Test func vlqLongerThanFourBytes_stopsTrack() throws {
        let file = try StandardMIDIFile(bytes: B.file(tracks: [[0x00, 0x90, 60, 1, 0x81, 0x81, 0x81, 0x81, 0x00, 0x90, 61, 1] + B.endOfTrack]))
        #expect(file.allEvents == [.midi(.noteOn(60, velocity: 1, channel: 0))])
        #expect(file.warnings.first == SMFWarning(offset: 26, track: 0, message: "delta time longer than 4 bytes"))
    }

    @Test func dataByteWithoutStatus_stopsTrack() throws {
        let file = try StandardMIDIFile(bytes: B.file(tracks: [[0x00, 0x3C, 0x40] + B.endOfTrack]))
        #expect(file.allEvents.isEmpty)
        #expect(file.warnings.first == SMFWarning(offset: 23, track: 0, message: "data byte 0x3C without a status byte"))
    }

    @Test func truncatedChannelMessage_stopsTrack() throws {
        let file = try StandardMIDIFile(bytes: B.file(tracks: [[0x00, 0x90, 60, 1, 0x00, 0x90, 60]]))
        #expect(file.allEvents == [.midi(.noteOn(60, velocity: 1, channel: 0))])
        #expect(file.warnings.first?.message == "track ends inside a channel message")
        #expect(file.warnings.first?.offset == 27)
    }

    @Test func statusWhereDataExpected_readAsNextEvent() throws {
        // Read as data, 0x90 would make the rest derail; read as a status, the rest is well formed.
        let file = try StandardMIDIFile(bytes: B.file(tracks: [[0x00, 0x90, 60, 0x90, 60, 1] + B.endOfTrack]))
        #expect(file.allEvents == [.midi(.noteOn(60, velocity: 1, channel: 0)), .meta(.endOfTrack)])
        #expect(file.warnings == [SMFWarning(offset: 23, track: 0,
                                             message: "channel message 0x90 cut short by a status byte dropped (0x90 starts the next event)")])
    }

    @Test func metaLengthPastTrack_stopsTrack() throws {
        let file = try StandardMIDIFile(bytes: B.file(tracks: [[0x00, 0xFF, 0x01, 0x7F, 0x41]]))
        #expect(file.allEvents.isEmpty)
        #expect(file.warnings.first == SMFWarning(offset: 26, track: 0, message: "meta event of 127 bytes runs past the end of the track"))
    }

    @Test func sysExLengthPastTrack_stopsTrack() throws {
        let file = try StandardMIDIFile(bytes: B.file(tracks: [[0x00, 0xF0, 0x10, 0x41]]))
        #expect(file.allEvents.isEmpty)
        #expect(file.warnings.first?.message == "SysEx event of 16 bytes runs past the end of the track")
    }

    @Test func undefinedStatusInTrack_skipped() throws {
        let file = try StandardMIDIFile(bytes: B.file(tracks: [[0x00, 0xF4] + B.endOfTrack]))
        #expect(file.allEvents == [.meta(.endOfTrack)])
        #expect(file.warnings == [SMFWarning(offset: 23, track: 0, message: "undefined status byte 0xF4 skipped")])
    }

    @Test func bytesAfterEndOfTrack_ignoredWithWarning() throws {
        let file = try StandardMIDIFile(bytes: B.file(tracks: [B.endOfTrack + [0x00, 0x90, 60, 1]]))
        #expect(file.allEvents == [.meta(.endOfTrack)])
        #expect(file.warnings.first == SMFWarning(offset: 26, track: 0, message: "4 bytes after the end of track ignored"))
    }

    @Test func trackCountMismatch_warned() throws {
        let bytes = B.header(tracks: 3) + B.track(B.endOfTrack)
        let file = try StandardMIDIFile(bytes: bytes)
        #expect(file.tracks.count == 1)
        #expect(file.warnings == [SMFWarning(offset: 10, track: nil, message: "header declares 3 tracks, found 1")])
    }

    @Test func trailingGarbage_warned() throws {
        let file = try StandardMIDIFile(bytes: B.file(tracks: [B.endOfTrack]) + [0xFF, 0x00, 0x13, 0x37, 0, 0, 0, 0, 1])
        #expect(file.tracks.count == 1)
        #expect(file.warnings.first?.offset == 26)
    }

    @Test func truncatedEverywhere_neverCrashes() throws {
        let whole = B.file(tracks: [[0x00, 0xFF, 0x03, 0x02, 0x41, 0x42, 0x00, 0xF0, 0x02, 0x01, 0xF7, 0x83, 0x60, 0x90, 60, 1] + B.endOfTrack])
        for n in 0..<whole.count {
            let prefix = Array(whole.prefix(n))
            if let file = try? StandardMIDIFile(bytes: prefix) {
                #expect(n >= 14)
                #expect(!file.warnings.isEmpty)
            } else {
                #expect(n < 14)
            }
        }
    }
}
