import Engine
import Testing

/// `Score.shortenGaps`: a stretch with no event longer than the limit is cut
/// to it, judged on the merged score.
@Suite struct ScoreGapTests {
    static func event(_ seconds: Double, _ message: ChannelMessage) -> Score.Event { .init(seconds: seconds, message: message) }

    @Test func gapBetweenEvents_isCutToTheLimit_andLaterEventsMoveEarlier() {
        var score = Score(events: [
            Self.event(0, .noteOn(60, velocity: 100, channel: 0)),
            Self.event(1, .noteOff(60, channel: 0)),
            Self.event(1 + 94_000, .noteOn(62, velocity: 100, channel: 0)),
            Self.event(1 + 94_001, .noteOff(62, channel: 0)),
        ], duration: 94_003)
        let gaps = score.shortenGaps(longerThan: 300)
        #expect(gaps == [Score.Gap(start: 1, length: 94_000, trailing: false)])
        #expect(score.events.map(\.seconds) == [0, 1, 301, 302])
        #expect(score.duration == 303)
    }

    @Test func noteHeldAcrossTheGap_isReleasedAtTheLimit() {
        var score = Score(events: [
            Self.event(2, .noteOn(60, velocity: 100, channel: 0)),
            Self.event(2 + 536_000, .noteOff(60, channel: 0)),
        ])
        _ = score.shortenGaps(longerThan: 120)
        #expect(score.events.map(\.seconds) == [2, 122])
    }

    @Test func quietTrack_whileOthersPlay_isNoGap() {
        // Channel 1 rests for ten minutes while channel 2 plays on: nothing to cut.
        var events = [Self.event(0, .noteOn(60, velocity: 100, channel: 0))]
        for s in stride(from: 0.0, through: 600, by: 30) {
            events.append(Self.event(s, .noteOn(70, velocity: 90, channel: 1)))
            events.append(Self.event(s + 1, .noteOff(70, channel: 1)))
        }
        events.append(Self.event(601, .noteOff(60, channel: 0)))
        var score = Score(events: events)
        let before = score.events
        #expect(score.shortenGaps(longerThan: 300).isEmpty)
        #expect(score.events == before)
    }

    @Test func lateEndOfTrack_isCut_andSaidToBeTrailing() {
        var score = Score(events: [Self.event(0, .noteOn(60, velocity: 100, channel: 0)),
                                   Self.event(1, .noteOff(60, channel: 0))], duration: 36_000)
        #expect(score.shortenGaps(longerThan: 300) == [Score.Gap(start: 1, length: 35_999, trailing: true)])
        #expect(score.duration == 301)
    }

    @Test func gapAtTheLimit_orShorter_staysWhole() {
        var score = Score(events: [Self.event(0, .noteOn(60, velocity: 100, channel: 0)),
                                   Self.event(300, .noteOff(60, channel: 0))], duration: 600)
        #expect(score.shortenGaps(longerThan: 300).isEmpty)
        #expect(score.events.map(\.seconds) == [0, 300])
        #expect(score.duration == 600)
    }

    @Test func leadingGap_beforeTheFirstEvent_isCut() {
        var score = Score(events: [Self.event(5_000, .noteOn(60, velocity: 100, channel: 0)),
                                   Self.event(5_001, .noteOff(60, channel: 0))])
        #expect(score.shortenGaps(longerThan: 300) == [Score.Gap(start: 0, length: 5_000, trailing: false)])
        #expect(score.events.map(\.seconds) == [300, 301])
    }

    @Test func severalGaps_eachCut_shiftsAddUp() {
        var score = Score(events: [Self.event(0, .noteOn(60, velocity: 100, channel: 0)),
                                   Self.event(1_000, .noteOff(60, channel: 0)),
                                   Self.event(1_010, .noteOn(61, velocity: 100, channel: 0)),
                                   Self.event(3_010, .noteOff(61, channel: 0))], duration: 3_012)
        #expect(score.shortenGaps(longerThan: 100).count == 2)
        #expect(score.events.map(\.seconds) == [0, 100, 110, 210])
        #expect(score.duration == 212)
    }
}
