import ClockOutRig
import Engine
import MIDI
import Sync
import Testing

/// MIDI clock out from the real sequencer's map, block by block (1024 frames at 48 kHz).
@Suite struct ClockGeneratorTests {
    static let rate = 48_000.0
    static let block = 1024

    /// A tempo map at 480 PPQN: 120 bpm, then 90 bpm from beat 8 (tick 3840).
    static let tempoMap = TempoMap(division: .ticksPerQuarterNote(480),
                                   tempoChanges: [(0, 500_000), (3840, 666_667)])

    /// An empty piece with `tempoMap`'s beats, its clock out collected block by block.
    static func rig(duration: Double = 60, tempoMap: TempoMap = tempoMap, startingAt: UInt64? = nil) -> ClockOutRig {
        ClockOutRig(score: Score(events: [], duration: duration), beats: BeatMap(tempoMap: tempoMap),
                    sampleRate: rate, block: block, startingAt: startingAt)
    }

    static func standardDeviation(_ xs: [Double]) -> Double {
        let mean = xs.reduce(0, +) / Double(xs.count)
        return (xs.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(xs.count)).squareRoot()
    }

    @Test func clocks_followTheTempoMapToTheFrame() {
        var run = Self.rig()
        run.render(blocks: 47 * 10)   // ~10 s: 8 beats at 120, then 90 bpm
        #expect(run.transportEvents.first == ClockEvent(frame: 0, kind: .start))
        let frames = run.clockFrames
        // 8 beats at 120 bpm = 4 s; clock k before that at k × 0.5 s / 24.
        for k in [0, 1, 23, 24, 100, 191] {
            #expect(frames[k] == UInt64((Double(k) * 0.5 / 24 * Self.rate).rounded()))
        }
        // After beat 8 (4 s), every clock 0.666667 s / 24 apart.
        let after = zip(frames[193...], frames[192...]).map { Double($0 - $1) / Self.rate * 1000 }
        for interval in after { #expect(abs(interval - 666.667 / 24) < 0.03) }
        let before = zip(frames[1..<192], frames[0..<191]).map { Double($0 - $1) / Self.rate * 1000 }
        #expect(Self.standardDeviation(before) <= 0.5)
        #expect(Self.standardDeviation(Array(after)) <= 0.5)
    }

    /// `live`/`play --clock-out` schedule the piece a little after the output starts
    /// (JACK: a quarter second on, for its connections): the Start goes out at the
    /// piece's first frame, with the first clock, never blocks before it.
    @Test func aPieceScheduledLater_startsAtItsFirstFrame() {
        let first: UInt64 = 12_000 + 3 * 1024 + 100   // inside the 15th block
        var run = Self.rig(startingAt: first)
        run.render(blocks: 10)
        #expect(run.events.isEmpty)
        run.render(blocks: 40)
        #expect(run.transportEvents.first == ClockEvent(frame: first, kind: .start))
        #expect(run.clockFrames.first == first)
        #expect(run.clockFrames.dropFirst().first == first + 1000)   // 120 bpm at 48 kHz: 1000 frames a clock
    }

    @Test func clocks_followTheTempoScale() {
        var run = Self.rig()
        run.renderer.transport.setTempoScale(2)
        run.render(blocks: 47)   // 1 s at ×2: 2 s of the piece, 4 beats
        let frames = run.clockFrames
        #expect(frames.count == 4 * 24 + 1)
        #expect(frames[24] == 12_000)   // beat 1 at 0.25 s of the sample clock
    }

    @Test func seekWhilePlaying_sendsStopPointerContinueThenClocksFromThePointer() {
        var run = Self.rig()
        run.render(blocks: 10)
        run.events = []
        run.renderer.transport.seek(to: 1.01)   // beat 2.02 → the pointer names sixteenth 9 (beat 2.25)
        run.render(blocks: 20)
        let t = run.transportEvents
        #expect(t.map(\.kind) == [.stop, .songPosition, .continue])
        #expect(t[1].sixteenths == 9)
        let seekFrame = t[0].frame
        #expect(seekFrame == 10 * UInt64(Self.block))
        // The first clock after: where the piece reaches beat 2.25 (1.125 s), 0.115 s after the seek.
        let first = run.clockFrames.first { $0 >= seekFrame }!
        #expect(first == seekFrame + UInt64((0.115 * Self.rate).rounded()))
    }

    @Test func stopThenPlay_sendsStopThenPointerAndContinue() {
        var run = Self.rig()
        run.render(blocks: 20)
        run.renderer.transport.stop()
        run.render(blocks: 5)
        let clocksWhileStopped = run.clockFrames.filter { $0 >= 20 * UInt64(Self.block) }
        #expect(clocksWhileStopped.isEmpty)
        run.renderer.transport.play()
        run.render(blocks: 5)
        #expect(run.transportEvents.map(\.kind) == [.start, .stop, .songPosition, .continue])
        #expect(run.transportEvents[1].frame == 20 * UInt64(Self.block))
    }

    @Test func theEndOfThePiece_sendsStopAtItsFrame() {
        var run = Self.rig(duration: 1.5)
        run.render(blocks: 100)
        let stop = run.transportEvents.last!
        #expect(stop.kind == .stop)
        #expect(stop.frame == 72_000)
        #expect(run.clockFrames.count == 3 * 24)   // clocks 0…71; clock 72 falls at the end, not played
    }

    @Test func aLoopWrap_sendsStopPointerContinueAtTheWrapFrame() throws {
        var run = Self.rig()
        run.renderer.transport.setLoop(true, start: 0.5, end: 1.3)
        run.render(blocks: 70)
        let t = run.transportEvents
        try #require(t.count >= 4)
        #expect(t.map(\.kind).prefix(4) == [.start, .stop, .songPosition, .continue])
        #expect(t[1].frame == 62_400)          // 1.3 s
        #expect(t[2].sixteenths == 4)          // beat 1 = 0.5 s
        // Clock 24 (beat 1) again right at the wrap: the loop starts on it.
        let clocks = run.events.filter { $0.frame >= 62_400 && $0.kind == .clock }
        #expect(clocks.first?.frame == 62_400)
    }
}
