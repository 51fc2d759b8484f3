import Testing
import Sync

/// MIDI clock in with jittered arrival times: the tempo estimate, a tempo
/// change, and Start / Stop / Continue / Song Position Pointer.
@Suite struct ClockFollowerTests {
    /// A small deterministic generator (xorshift), so a failure repeats.
    struct Jitter {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        /// Uniform in −`amplitude` … +`amplitude` seconds, as nanoseconds.
        mutating func next(_ amplitude: Double) -> Int64 {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            let u = Double(state % 1_000_001) / 1_000_000 * 2 - 1
            return Int64(u * amplitude * 1e9)
        }
    }

    /// Feeds `count` clocks at `bpm` from `start` (ns), each off by up to ±`jitter` s; returns the next ideal time.
    static func feed(_ f: inout ClockFollower, bpm: Double, count: Int, from start: UInt64, jitter: Double,
                     random: inout Jitter, commands: inout [ClockFollower.Command]) -> UInt64 {
        let period = 60 / bpm / 24 * 1e9
        for k in 0..<count {
            let ideal = Double(start) + Double(k) * period
            let t = UInt64(Int64(ideal) + random.next(jitter))
            if let c = f.receive(.clock, at: t) { commands.append(c) }
        }
        return UInt64(Double(start) + Double(count) * period)
    }

    @Test(arguments: [60.0, 120.0, 174.0])
    func tempo_isWithinHalfAPercentAfterABeat_withAMillisecondOfJitter(bpm: Double) {
        var f = ClockFollower(), random = Jitter(), commands: [ClockFollower.Command] = []
        _ = f.receive(.start, at: 1_000_000_000)
        _ = Self.feed(&f, bpm: bpm, count: 25, from: 1_001_000_000, jitter: 0.001, random: &random, commands: &commands)
        let estimate = f.beatsPerMinute!
        #expect(abs(estimate / bpm - 1) < 0.005, "estimate \(estimate) for \(bpm)")
        #expect(commands == [.play(beat: 0)])
        #expect(f.clocks == 24)
    }

    @Test func tempo_doesNotWobbleWithJitter() {
        var f = ClockFollower(), random = Jitter(), commands: [ClockFollower.Command] = []
        _ = f.receive(.start, at: 0)
        var t: UInt64 = 1_000_000
        t = Self.feed(&f, bpm: 120, count: 24, from: t, jitter: 0.001, random: &random, commands: &commands)
        var lowest = Double.infinity, highest = 0.0
        for _ in 0..<(24 * 16) {
            t = Self.feed(&f, bpm: 120, count: 1, from: t, jitter: 0.001, random: &random, commands: &commands)
            lowest = min(lowest, f.beatsPerMinute!); highest = max(highest, f.beatsPerMinute!)
        }
        // ±1 ms on 20.8 ms intervals: each interval is ±5 %; the estimate stays within ±0.5 %.
        #expect(lowest > 119.4 && highest < 120.6, "\(lowest)…\(highest)")
    }

    @Test func aTempoChange_isFollowedWithinABeat() {
        var f = ClockFollower(), random = Jitter(), commands: [ClockFollower.Command] = []
        _ = f.receive(.start, at: 0)
        var t: UInt64 = 1_000_000
        t = Self.feed(&f, bpm: 100, count: 48, from: t, jitter: 0.001, random: &random, commands: &commands)
        #expect(abs(f.beatsPerMinute! - 100) < 0.5)
        t = Self.feed(&f, bpm: 140, count: 24, from: t, jitter: 0.001, random: &random, commands: &commands)
        #expect(abs(f.beatsPerMinute! / 140 - 1) < 0.005, "\(f.beatsPerMinute!)")
    }

    @Test func stopContinueAndPointer_becomeTransportCommands() {
        var f = ClockFollower(), random = Jitter(), commands: [ClockFollower.Command] = []
        _ = f.receive(.start, at: 0)
        var t: UInt64 = 1_000_000
        t = Self.feed(&f, bpm: 120, count: 49, from: t, jitter: 0.0005, random: &random, commands: &commands)
        if let c = f.receive(.stop, at: t) { commands.append(c) }
        // While stopped: a pointer to bar 3 (sixteenth 32 = beat 8), then Continue, then a clock.
        if let c = f.receive(.songPosition(32), at: t + 1_000_000) { commands.append(c) }
        _ = f.receive(.continue, at: t + 2_000_000)
        #expect(f.running == false)
        t = Self.feed(&f, bpm: 120, count: 13, from: t + 3_000_000, jitter: 0.0005, random: &random, commands: &commands)
        #expect(commands == [.play(beat: 0), .stop(beat: 2), .locate(beat: 8), .play(beat: 8)])
        #expect(f.running)
        #expect(abs(f.beat(at: t) - 8.5) < 0.05)
        // A Start later plays from the top again.
        _ = f.receive(.stop, at: t)
        _ = f.receive(.start, at: t + 1_000_000)
        var more: [ClockFollower.Command] = []
        _ = Self.feed(&f, bpm: 120, count: 1, from: t + 2_000_000, jitter: 0, random: &random, commands: &more)
        #expect(more == [.play(beat: 0)])
    }

    @Test func aPauseInTheClock_startsTheFitAgain() {
        var f = ClockFollower(), random = Jitter(), commands: [ClockFollower.Command] = []
        _ = f.receive(.start, at: 0)
        var t = Self.feed(&f, bpm: 120, count: 30, from: 1_000_000, jitter: 0, random: &random, commands: &commands)
        t += 2_000_000_000   // two seconds without a clock, then 90 bpm
        _ = Self.feed(&f, bpm: 90, count: 3, from: t, jitter: 0, random: &random, commands: &commands)
        #expect(abs(f.beatsPerMinute! - 90) < 0.1)
    }

    /// The gate: while the master runs, the transport may reach the next clock's place and no
    /// further — one clock after the last (the Start's first clock is beat 0); none while stopped.
    @Test func gateBeat_isTheNextClocksPlace_whileRunning() {
        var f = ClockFollower(), random = Jitter(), commands: [ClockFollower.Command] = []
        #expect(f.gateBeat == nil)
        _ = f.receive(.start, at: 0)
        #expect(f.gateBeat == nil, "armed, not running: nothing plays before the first clock")
        var t = Self.feed(&f, bpm: 120, count: 1, from: 1_000_000, jitter: 0, random: &random, commands: &commands)
        #expect(f.gateBeat == 1.0 / 24)
        t = Self.feed(&f, bpm: 120, count: 60, from: t, jitter: 0, random: &random, commands: &commands)
        #expect(f.gateBeat == 61.0 / 24)
        // A pause in the clock does not move it: only a clock does.
        _ = f.beat(at: t + 500_000_000)
        #expect(f.gateBeat == 61.0 / 24)
        _ = f.receive(.stop, at: t + 500_000_000)
        #expect(f.gateBeat == nil)
        #expect(commands == [.play(beat: 0)])
    }
}
