import Testing
import MIDI
import Sync

/// Bars and beats from a file's time signatures: what `play --transport-master`
/// gives the JACK transport as bar, beat and tick.
@Suite struct BeatMapBarTests {
    /// 480 PPQN: 4/4 for two bars, 3/4 from tick 3840 (beat 8), 6/8 from tick 5040 (beat 10.5: bar 3 cut short).
    static let map = BeatMap(tempoMap: TempoMap(division: .ticksPerQuarterNote(480), tempoChanges: [(0, 500_000)]),
                             timeSignatures: [TimeSignatureChange(tick: 0, numerator: 4, denominator: 4),
                                              TimeSignatureChange(tick: 3840, numerator: 3, denominator: 4),
                                              TimeSignatureChange(tick: 5040, numerator: 6, denominator: 8)])

    func position(_ beat: Double) -> (Int, Int, Double, Int, Int) {
        let p = Self.map.barPosition(atBeat: beat)
        return (p.bar, p.beat, (p.fraction * 1000).rounded() / 1000, p.numerator, p.denominator)
    }

    @Test func barPosition_followsEveryTimeSignature() {
        #expect(position(0) == (1, 1, 0, 4, 4))
        #expect(position(5.5) == (2, 2, 0.5, 4, 4))
        #expect(position(8) == (3, 1, 0, 3, 4))             // 3/4 starts bar 3
        #expect(position(10.25) == (3, 3, 0.25, 3, 4))
        #expect(position(10.5) == (4, 1, 0, 6, 8))          // bar 3 cut short still counts: 6/8 starts bar 4
        #expect(position(10.5 + 3.25) == (5, 1, 0.5, 6, 8)) // six eighths (three quarters) a bar
        #expect(Self.map.barPosition(atBeat: 10.5).barStartBeats == 21)  // in eighths from the top
    }

    @Test func barPosition_withoutSignatures_isFourFour() {
        let plain = BeatMap(beatsPerMinute: 90)
        let p = plain.barPosition(atBeat: 9.5)
        #expect((p.bar, p.beat, p.fraction, p.numerator, p.denominator) == (3, 2, 0.5, 4, 4))
        #expect(p.barStartBeats == 8)
    }

    @Test func timeSignatures_readFromAFile_lastAtATickWins() throws {
        let track = Track(events: [TrackEvent(tick: 0, event: .meta(.timeSignature(.init(numerator: 3, denominatorPower: 2, clocksPerClick: 24, thirtySecondsPerQuarter: 8)))),
                        TrackEvent(tick: 960, event: .meta(.timeSignature(.init(numerator: 5, denominatorPower: 3, clocksPerClick: 24, thirtySecondsPerQuarter: 8)))),
                        TrackEvent(tick: 960, event: .meta(.timeSignature(.init(numerator: 7, denominatorPower: 3, clocksPerClick: 24, thirtySecondsPerQuarter: 8))))])
        let file = StandardMIDIFile(format: .singleTrack, division: .ticksPerQuarterNote(480), tracks: [track])
        #expect(file.timeSignatures == [TimeSignatureChange(tick: 0, numerator: 3, denominator: 4),
                                        TimeSignatureChange(tick: 960, numerator: 7, denominator: 8)])
    }
}
