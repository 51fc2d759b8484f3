import Testing
@testable import MIDI

@Suite struct SMFWriterTests {
    @Test func writer_usesRunningStatusAndEndOfTrack() {
        let file = StandardMIDIFile(format: .singleTrack, division: .ticksPerQuarterNote(96), tracks: [Track(events: [
            TrackEvent(tick: 0, event: .midi(.noteOn(60, velocity: 100, channel: 0))),
            TrackEvent(tick: 200, event: .midi(.noteOn(60, velocity: 0, channel: 0))),
        ])])
        #expect(file.serialized() == SMFBytes.header(format: 0, tracks: 1) + SMFBytes.track([
            0x00, 0x90, 60, 100, 0x81, 0x48, 60, 0, 0x00, 0xFF, 0x2F, 0x00,
        ]))
    }

    @Test func roundTrip_everyEventKind() throws {
        let events: [FileEvent] = [
            .meta(.text(.trackName, Array("Piano".utf8))), .meta(.tempo(microsecondsPerQuarterNote: 612_345)),
            .meta(.timeSignature(.init(numerator: 7, denominatorPower: 3))),
            .meta(.keySignature(.init(sharpsOrFlats: 2, isMinor: false))),
            .meta(.smpteOffset(.init(hours: 1, minutes: 2, seconds: 3, frames: 4, fractionalFrames: 5))),
            .meta(.sequenceNumber(300)), .meta(.channelPrefix(3)), .meta(.port(1)),
            .meta(.sequencerSpecific([0x41, 1])), .meta(.unknown(type: 0x70, data: [])),
            .midi(.noteOn(60, velocity: 100, channel: 0)), .midi(.noteOff(60, velocity: 3, channel: 0)),
            .midi(.polyPressure(60, pressure: 9, channel: 1)), .midi(.cc(64, value: 127, channel: 2)),
            .midi(.programChange(5, channel: 2)), .midi(.channelPressure(5, channel: 2)),
            .midi(.pitchBend(12345, channel: 15)), .midi(.sysEx([0x7E, 0x7F, 0x09, 0x01])),
            .sysExStart([0x43, 0x12]), .sysExEscape([0x01, 0xF7]), .sysExEscape([0xF8]),
            .midi(.cc(1, value: 1, channel: 2)),
        ]
        let track = Track(events: events.enumerated().map { TrackEvent(tick: UInt64($0.offset * 1000), event: $0.element) }
            + [TrackEvent(tick: 1_000_000, event: .meta(.endOfTrack))])
        for division in [StandardMIDIFile.Division.ticksPerQuarterNote(960), .smpte(framesPerSecond: 29, ticksPerFrame: 100)] {
            let file = StandardMIDIFile(format: .multiTrack, division: division, tracks: [track, Track()])
            let again = try StandardMIDIFile(bytes: file.serialized())
            #expect(again.warnings.isEmpty)
            #expect(again.division == division)
            #expect(again.tracks[0] == track)
            #expect(again.tracks[1].events == [TrackEvent(tick: 0, event: .meta(.endOfTrack))])
        }
    }

    /// A gap longer than a 28-bit delta (an hour of a take at 96 kHz, a tick a frame): empty
    /// text events carry it, each event keeps its tick, and running status restarts after them.
    @Test func gapLongerThanADelta_keepsEveryTick() throws {
        let longest: UInt64 = 0x0FFF_FFFF
        let ticks: [UInt64] = [0, 10, 10 + longest + 1, 10 + longest + 2, 345_600_017, 345_600_017 + 3 * longest + 5]
        let track = Track(events: ticks.enumerated().map { TrackEvent(tick: $0.element, event: .midi(.noteOn(UInt7(exactly: 60 + $0.offset)!, velocity: 100, channel: 0))) })
        let again = try StandardMIDIFile(bytes: StandardMIDIFile(format: .singleTrack, division: .ticksPerQuarterNote(24_000), tracks: [track]).serialized())
        #expect(again.warnings.isEmpty)
        let notes = again.tracks[0].events.filter { if case .midi = $0.event { true } else { false } }
        #expect(notes == track.events)
        let fillers = again.tracks[0].events.filter { $0.event == .meta(.text(.text, [])) }
        #expect(fillers.count == 1 + 3)   // a delta of longest + 1, then one of 3 × longest + 5
    }

    @Test func vlq_encodesBoundaries() {
        for (value, bytes) in [(0, [0x00]), (0x7F, [0x7F]), (0x80, [0x81, 0x00]), (0x3FFF, [0xFF, 0x7F]),
                               (0x4000, [0x81, 0x80, 0x00]), (0x0FFF_FFFF, [0xFF, 0xFF, 0xFF, 0x7F])] as [(UInt32, [UInt8])] {
            var out: [UInt8] = []
            appendVLQ(&out, value)
            #expect(out == bytes)
        }
    }
}
