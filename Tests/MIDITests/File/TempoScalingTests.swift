import MIDI
import Testing

/// `render --tempo F`: a file played F times as fast, through its tempo events.
@Suite struct TempoScalingTests {
    static func note(_ tick: UInt64, _ key: UInt7) -> [TrackEvent] {
        [TrackEvent(tick: tick, event: .midi(.noteOn(key, velocity: 90, channel: 0))),
         TrackEvent(tick: tick + 240, event: .midi(.noteOff(key, channel: 0)))]
    }

    @Test func scalingTempo_dividesEveryTempoEvent_andTheTimesFollow() {
        let conductor = Track(events: [
            TrackEvent(tick: 0, event: .meta(.tempo(microsecondsPerQuarterNote: 600_000))),
            TrackEvent(tick: 960, event: .meta(.tempo(microsecondsPerQuarterNote: 400_001))),
        ])
        let file = StandardMIDIFile(division: .ticksPerQuarterNote(480),
                                    tracks: [conductor, Track(events: Self.note(0, 60) + Self.note(1440, 62))])
        let fast = file.scalingTempo(by: 2)
        #expect(fast.tempoMap.changes.map(\.microsecondsPerQuarterNote) == [300_000, 200_001])   // 200,000.5 rounded
        #expect(fast.tracks[0].events.count == 2)   // a tempo at tick 0 already: none added
        #expect(abs(fast.duration - file.duration / 2) < 1e-5)
        let slow = file.scalingTempo(by: 0.8)
        #expect(slow.tempoMap.changes.map(\.microsecondsPerQuarterNote) == [750_000, 500_001])
        #expect(file.scalingTempo(by: 1) == file)
    }

    @Test func scalingTempo_ofAFileWithoutTempo_setsTheDefaultDividedAtTheStart() {
        let file = StandardMIDIFile(format: .singleTrack, division: .ticksPerQuarterNote(96),
                                    tracks: [Track(events: Self.note(0, 60) + Self.note(960, 64))])
        #expect(abs(file.duration - 6.25) < 1e-9)   // 1200 ticks of 96 a quarter at 120 bpm
        let fast = file.scalingTempo(by: 1.5)
        #expect(fast.tracks[0].events.first == TrackEvent(tick: 0, event: .meta(.tempo(microsecondsPerQuarterNote: 333_333))))
        #expect(abs(fast.duration - 6.25 / 1.5) < 1e-5)
        // A tempo later than tick 0 is no tempo at the start: the default still plays until it.
        var late = file
        late.tracks[0].events.insert(TrackEvent(tick: 480, event: .meta(.tempo(microsecondsPerQuarterNote: 250_000))), at: 2)
        let lateFast = late.scalingTempo(by: 2)
        #expect(lateFast.tempoMap.changes.map(\.microsecondsPerQuarterNote) == [250_000, 125_000])
    }

    @Test func scalingTempo_leavesAnSMPTEFileAlone() {
        let file = StandardMIDIFile(division: .smpte(framesPerSecond: 25, ticksPerFrame: 40),
                                    tracks: [Track(events: Self.note(0, 60))])
        #expect(file.scalingTempo(by: 2) == file)
    }
}
