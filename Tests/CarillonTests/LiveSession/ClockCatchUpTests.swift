import ALSA
import ClockOutRig
import Engine
import Hosting
import MIDI
@testable import LiveSession
import Sync
import Testing

/// `play --sync clock` keeps the master's phase: a clock that comes late holds
/// the piece at the gate (`ClockGateTests`), and the clocks after it, on time,
/// pull it back onto the master's grid (the sequencer's bounded catch-up)
/// instead of leaving it behind by the lateness for good. A master at 120 bpm,
/// 44.1 kHz (918.75 frames a clock), 256-frame periods; its clocks go through
/// the real follower (`ClockFollowing`), `OutputClock`, transport, sequencer and
/// renderer, as in `ClockGateTests`. The piece: a note every eighth (12 clocks),
/// each a different note in turn, so a lost or doubled one shows.
@Suite struct ClockCatchUpTests {
    static let rate = 44_100.0, period = 256
    static let base: UInt64 = 7_000_000_000_000
    static let framesPerClock = rate * 0.5 / 24
    /// Where the Start's first clock arrives: inside the 40th block.
    static let firstClock = 40.0 * Double(period) + 100
    /// A MIDI byte's time on the wire (31,250 baud): clocks held back come no closer than this.
    static let byteFrames = 0.00032 * rate
    static let millisecond = rate / 1000

    static func nanos(ofFrame frame: Double, rate: Double) -> UInt64 { base + UInt64((frame / rate * 1e9).rounded()) }
    static func note(eighth k: Int) -> UInt8 { UInt8(30 + k % 64) }

    /// Every note-on and note-off, in order, with the frame it was applied at.
    final class NoteLog: Instrument {
        let stripCount = 1
        private var frame = 0
        private(set) var noteOns: [(note: UInt8, frame: Int)] = []
        private(set) var noteOffs = 0
        func prepare(sampleRate: Double, maxFrames: Int) {}
        func receive(_ message: ChannelMessage) {
            if message.isNoteOn { noteOns.append((message.data1, frame)) } else if message.kind == 0x80 { noteOffs += 1 }
        }
        func render(frames: Int, dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                    effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) { frame += frames }
        func silence() {}
    }

    /// `eighths` notes, eighth `k` at k × 0.25 s, a sixteenth long.
    static func piece(eighths: Int) -> Score {
        var events: [Score.Event] = []
        for k in 0..<eighths {
            events.append(.init(seconds: Double(k) * 0.25, message: .noteOn(note(eighth: k), velocity: 100, channel: 0)))
            events.append(.init(seconds: Double(k) * 0.25 + 0.125, message: .noteOff(note(eighth: k), channel: 0)))
        }
        return Score(events: events, duration: Double(eighths) * 0.25)
    }

    /// What a follower played for a master whose clock `i` comes `late(i)` frames after its place on
    /// the grid (never before the clock ahead of it and a byte's time: a serial line delivers in order).
    struct Take {
        /// Onsets in the order they sounded.
        var notes: [(note: UInt8, frame: Int)]
        var noteOffs: Int
        /// Eighth `k`'s onset minus its place on the master's grid (the Start's clock's stamp, on by
        /// the master's tempo), in frames, for the eighths that sounded.
        var errors: [Double]
        var clockOut: [UInt64]
    }

    /// `loopEnd`: the piece loops from its top to there (seconds).
    /// `rate` and `period`: the output's (the period is also the block).
    static func take(clocks: Int, eighths: Int, loopEnd: Double? = nil, rate: Double = rate, period: Int = period,
                     late: (Int) -> Double) -> Take {
        let framesPerClock = rate * 0.5 / 24, firstClock = 40.0 * Double(period) + 100, byteFrames = 0.00032 * rate
        let instrument = NoteLog()
        var rig = ClockOutRig(score: piece(eighths: eighths), beats: BeatMap(beatsPerMinute: 120), instrument: instrument,
                              sampleRate: rate, block: period)
        rig.renderer.transport.stop()
        if let loopEnd { rig.renderer.transport.setLoop(true, start: 0, end: loopEnd) }
        let clock = OutputClock(sampleRate: rate, periodFrames: period)
        let follower = ClockFollowing(source: nil, sourceName: "test master", transport: rig.renderer.transport,
                                      beats: BeatMap(beatsPerMinute: 120), clock: clock)
        var messages: [(MIDIMessage, Double)] = [(.start, firstClock - 50)]
        var previous = firstClock - 50
        for i in 0..<clocks {
            let at = max(firstClock + Double(i) * framesPerClock + late(i), previous + byteFrames)
            messages.append((.timingClock, at)); previous = at
        }
        var pending = messages[...]
        var firstStamp: UInt64?
        let end = Int(previous + 0.5 * rate)
        rig.render(blocks: (end - Int(rig.renderer.sampleTime)) / period) { start in
            while let (message, at) = pending.first, at < Double(start) {
                pending.removeFirst()
                let arrival = nanos(ofFrame: at, rate: rate)
                if message == .timingClock, firstStamp == nil { firstStamp = clock.frame(arrival: arrival) }
                _ = follower.take(.message(message, source: SeqAddress(client: 30, port: 0), arrival: arrival))
            }
            clock.publish(blockStart: start, at: nanos(ofFrame: Double(start), rate: rate))
        }
        let zero = Double(firstStamp ?? 0)
        let errors = instrument.noteOns.enumerated().map { k, n in Double(n.frame) - (zero + Double(k * 12) * framesPerClock) }
        return Take(notes: instrument.noteOns, noteOffs: instrument.noteOffs, errors: errors, clockOut: rig.clockFrames)
    }

    /// Every eighth whose clock came sounds exactly once, in the piece's order.
    static func expectEveryNoteOnce(_ take: Take, clocks: Int, eighths: Int) {
        let due = min(eighths, (clocks - 1) / 12 + 1)
        #expect(take.notes.map(\.note) == (0..<due).map { note(eighth: $0) },
                "\(take.notes.count) onsets for \(due) eighths; first difference at \(zip(take.notes.map(\.note), (0..<due).map { note(eighth: $0) }).enumerated().first { $1.0 != $1.1 }?.offset ?? -1)")
        #expect(take.noteOffs == due, "\(take.noteOffs) note-offs for \(due) notes")
    }

    /// (e) One clock 60 ms late (clock 96, eighth 8's: the master's line stalled), the two due
    /// meanwhile right behind it, then every clock on time. Eighth 8 waits for its clock; the piece
    /// then catches up, and from clock 132 (a beat and a half after the late one) on every note is
    /// within 0.5 ms of the master's grid. Measured: eighths 8, 9, 10 at +60, +36.8, +2.15 ms, then
    /// every one at +0.50 ms; the closest two came 9,497 frames apart for 11,025 (+16 %: the
    /// catch-up's +12.5 % on a fitted tempo 3 % fast while the late clocks were in its window).
    /// Without the catch-up (main before it) every note from eighth 10 on sounded 56.9 ms late, to the end.
    @Test func oneClock60msLate_thePieceIsBackOnTheGridWithinABeatAndAHalf() throws {
        let late = 96, clocks = 24 * 16
        let take = Self.take(clocks: clocks, eighths: 32, late: { $0 == late ? 0.060 * Self.rate : 0 })
        Self.expectEveryNoteOnce(take, clocks: clocks, eighths: 32)
        try Self.expectCaughtUp(take, lateClock: late, lastLateClock: late, lateness: 0.060 * Self.rate, settle: 36)
    }

    /// (f) Five clocks in a row each 10 ms late (clocks 100…104), then on time: back on the grid
    /// within 12 clocks of the last late one. Measured: eighth 9 (clock 108) at +3.95 ms, every
    /// one after it on the grid (+0.02 ms); without the catch-up, 9.7 ms late to the end.
    @Test func fiveClocks10msLate_thePieceIsBackOnTheGrid() throws {
        let clocks = 24 * 16
        let take = Self.take(clocks: clocks, eighths: 32, late: { (100...104).contains($0) ? 0.010 * Self.rate : 0 })
        Self.expectEveryNoteOnce(take, clocks: clocks, eighths: 32)
        try Self.expectCaughtUp(take, lateClock: 100, lastLateClock: 104, lateness: 0.010 * Self.rate, settle: 12)
    }

    /// Before `lateClock` every eighth sounds on the grid (±2 frames of the stamps' rounding); the first
    /// eighth at or after it sounds no earlier than the grid and no later than `lateness`; from
    /// `lastLateClock + settle` on every eighth is within 1 ms of the grid: no later than the tolerance
    /// the catch-up leaves (0.5 ms) and a frame of rounding, never earlier than its clock's stamp.
    /// Between, onsets come no closer than the catch-up's +12.5 % on the fitted tempo allows, with
    /// 5 % for the fit's own swing while the late clocks are inside its one-beat window.
    static func expectCaughtUp(_ take: Take, lateClock: Int, lastLateClock: Int, lateness: Double, settle: Int) throws {
        let errors = take.errors
        for k in errors.indices where 12 * k < lateClock {
            #expect(abs(errors[k]) <= 2, "eighth \(k), before the late clock: \(errors[k]) frames off the grid")
        }
        let held = (lateClock + 11) / 12
        #expect(errors[held] >= -2 && errors[held] <= lateness + 2, "eighth \(held) (held by the late clock): \(errors[held])")
        var settled = 0
        for k in errors.indices where 12 * k >= lastLateClock + settle {
            #expect(errors[k] >= -2 && errors[k] <= 0.0005 * rate + 2,
                    "eighth \(k) (clock \(12 * k)): \(errors[k]) frames (\(errors[k] / millisecond) ms) off the grid; all: \(errors.map { Int($0) })")
            settled += 1
        }
        #expect(settled >= 8)
        let nominal = 12 * framesPerClock
        for k in 1..<take.notes.count {
            let interval = Double(take.notes[k].frame - take.notes[k - 1].frame)
            #expect(interval >= nominal / ((1 + Transport.catchUpLimit) * 1.05) - 2,
                    "eighths \(k - 1)…\(k): \(interval) frames apart, faster than the catch-up's limit (nominal \(nominal))")
        }
    }

    /// (h) A looping piece (`play --loop --sync clock`) is not caught up: after its wrap the
    /// master's count is not the piece's place, and catching up that "lag" would play it 12.5 %
    /// fast. Steady clocks over four passes of a loop of three eighths (0.75 s: after the first wrap
    /// the piece is 0.75 s "behind", within `catchUpMaximumLag`): every onset a quarter second after
    /// the one before, across the wraps too, each note once per pass.
    @Test func aLoopingPiece_isNotCaughtUpAfterItsWrap() throws {
        let take = Self.take(clocks: 24 * 6, eighths: 8, loopEnd: 0.75, late: { _ in 0 })
        // (The first 12: once looping, the gate compares the master's count with the piece's place,
        // so after a wrap it no longer holds the piece at the master's last clock.)
        #expect(take.notes.prefix(12).map(\.note) == (0..<12).map { Self.note(eighth: $0 % 3) }, "\(take.notes.map(\.note))")
        for k in 1..<min(12, take.notes.count) {
            let interval = Double(take.notes[k].frame - take.notes[k - 1].frame)
            #expect(abs(interval - 12 * Self.framesPerClock) <= 2, "eighths \(k - 1)…\(k): \(interval) frames apart")
        }
    }

    /// (e′) The same stall at the VM's set-up: 22,050 Hz, 1,024-frame periods (two or three clocks
    /// open the gate inside each block, each stamped a period, 46 ms, after it arrived). From clock
    /// 132 on every note within 0.5 ms (and 2 frames) of the grid, as at 44.1 kHz.
    @Test func oneClock60msLate_atALargePeriod_thePieceIsBackOnTheGrid() throws {
        let rate = 22_050.0, clocks = 24 * 16
        let take = Self.take(clocks: clocks, eighths: 32, rate: rate, period: 1024, late: { $0 == 96 ? 0.060 * rate : 0 })
        Self.expectEveryNoteOnce(take, clocks: clocks, eighths: 32)
        for k in take.errors.indices where 12 * k >= 132 || 12 * k < 96 {
            #expect(take.errors[k] >= -2 && take.errors[k] <= 0.0005 * rate + 2,
                    "eighth \(k): \(take.errors[k]) frames off the grid; all: \(take.errors.map { Int($0) })")
        }
    }

    /// (g) ±2 ms of random jitter on every clock for two minutes (5,760 clocks, 480 eighths): the
    /// phase error stays bounded, not growing — within −2…+2.5 ms of the grid throughout (the
    /// jitter itself, and the tolerance), each half minute's mean error within 1.25 ms and the last
    /// one no more than 0.25 ms above the first. Measured: means 0.89, 0.92, 1.02, 0.96 ms (a note
    /// sounds no earlier than its clock's stamp, so the jitter's late half shows, the early half not).
    /// Without the catch-up each late clock's wait was kept: the piece settled at about the jitter's
    /// maximum behind, means 2.25, 2.29, 2.41, 2.28 ms, the worst note 3.13 ms late.
    @Test func twoMinutesOf2msJitter_thePhaseErrorStaysBounded() throws {
        var random: UInt64 = 0x9E37_79B9_7F4A_7C15
        let clocks = 24 * 240, eighths = 480
        let offsets = (0..<clocks).map { i -> Double in
            guard i > 0 else { return 0 }   // the Start's clock on time: the grid's origin
            random ^= random << 13; random ^= random >> 7; random ^= random << 17
            return (Double(random % 2001) / 1000 - 1) * 0.002 * Self.rate
        }
        let take = Self.take(clocks: clocks, eighths: eighths, late: { offsets[$0] })
        Self.expectEveryNoteOnce(take, clocks: clocks, eighths: eighths)
        let ms = take.errors.map { $0 / Self.millisecond }
        let quarter = ms.count / 4
        func mean(_ s: ArraySlice<Double>) -> Double { s.reduce(0, +) / Double(s.count) }
        let means = (0..<4).map { mean(ms[($0 * quarter)..<(($0 + 1) * quarter)]) }
        let worst = (ms.min() ?? 0, ms.max() ?? 0)
        #expect(worst.0 >= -2.0 && worst.1 <= 2.5, "onsets \(worst.0)…\(worst.1) ms off the grid; each half minute's mean: \(means)")
        #expect(means.allSatisfy { abs($0) <= 1.25 } && means[3] - means[0] <= 0.25, "each half minute's mean error (ms): \(means)")
    }
}
