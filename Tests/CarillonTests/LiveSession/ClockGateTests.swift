import ALSA
import ClockOutRig
import Engine
import Hosting
import MIDI
@testable import LiveSession
import Sync
import Testing

/// `play --sync clock`'s gate: the transport never passes the place of the
/// master's next clock before that clock comes. A fake master's clock stream
/// goes through the real follower (`ClockFollowing`), transport, sequencer and
/// renderer; each message is taken before the first block that renders after
/// it arrived (as the input thread would), and stamped one period on by the
/// real `OutputClock`. The piece: a note every eighth note at 120 bpm (1000
/// frames a clock at 48 kHz, 12,000 an eighth).
@Suite struct ClockGateTests {
    static let rate = 48_000.0, period = 256
    static let base: UInt64 = 7_000_000_000_000
    /// Where the Start's first clock arrives, on the render clock: inside the 40th block.
    static let firstClock = 40.0 * 256 + 100
    static let framesPerClock = 1000.0
    static let eighths = 24

    static func nanos(ofFrame frame: Double, rate: Double = rate) -> UInt64 { base + UInt64((frame / rate * 1e9).rounded()) }

    /// Remembers the frame each note-on is applied at (the renderer splits its render calls at events).
    final class NoteFrames: Instrument {
        let stripCount = 1
        private var frame = 0
        private(set) var noteOns: [UInt8: Int] = [:]
        func prepare(sampleRate: Double, maxFrames: Int) {}
        func receive(_ message: ChannelMessage) {
            if message.isNoteOn, noteOns[message.data1] == nil { noteOns[message.data1] = frame }
        }
        func render(frames: Int, dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                    effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) { frame += frames }
        func silence() {}
    }

    /// Eighth `k`'s note: 40 + k, at k × 0.25 s, a sixteenth long.
    static var piece: Score {
        var events: [Score.Event] = []
        for k in 0..<eighths {
            events.append(.init(seconds: Double(k) * 0.25, message: .noteOn(UInt8(40 + k), velocity: 100, channel: 0)))
            events.append(.init(seconds: Double(k) * 0.25 + 0.125, message: .noteOff(UInt8(40 + k), channel: 0)))
        }
        return Score(events: events, duration: Double(eighths) * 0.25)
    }

    /// The piece on a renderer, waiting for the master as `startSync` leaves it, with its clock out
    /// (`--clock-out` while following) collected block by block.
    final class Rig {
        let instrument = NoteFrames()
        var clockOut: ClockOutRig
        var renderer: Renderer { clockOut.renderer }
        let clock: OutputClock
        let follower: ClockFollowing
        /// Each message's stamped frame (where the follower placed it), in order.
        var stamped: [(MIDIMessage, UInt64)] = []

        let period: Int
        let rate: Double

        /// `period`: the output's period, also the block (1024: two clocks or more open the gate in a block).
        init(period: Int = ClockGateTests.period, rate: Double = ClockGateTests.rate) {
            self.period = period
            self.rate = rate
            clock = OutputClock(sampleRate: rate, periodFrames: period)
            clockOut = ClockOutRig(score: ClockGateTests.piece, beats: BeatMap(beatsPerMinute: 120), instrument: instrument,
                                   sampleRate: rate, block: period)
            clockOut.renderer.transport.stop()
            follower = ClockFollowing(source: nil, sourceName: "test master", transport: clockOut.renderer.transport,
                                      beats: BeatMap(beatsPerMinute: 120), clock: clock)
        }

        /// Renders until `frames`; `messages` (arrival frames on the render clock, in order) each
        /// taken before the first block that starts after it arrived.
        func run(_ messages: [(MIDIMessage, Double)], until frames: Int) {
            var pending = messages[...]
            clockOut.render(blocks: (frames - Int(clockOut.renderer.sampleTime)) / period) { start in
                while let (message, at) = pending.first, at < Double(start) {
                    pending.removeFirst()
                    let arrival = ClockGateTests.nanos(ofFrame: at, rate: rate)
                    stamped.append((message, clock.frame(arrival: arrival)))
                    #expect(follower.take(.message(message, source: SeqAddress(client: 30, port: 0), arrival: arrival)))
                }
                clock.publish(blockStart: start, at: ClockGateTests.nanos(ofFrame: Double(start), rate: rate))
            }
        }

        /// The frame eighth `k`'s note sounded at, if it did.
        func onset(eighth k: Int) -> Int? { instrument.noteOns[UInt8(40 + k)] }
    }

    /// Start, then `count` clocks a clock apart from `firstClock`, each moved by `offset(i)` frames.
    static func clocks(_ count: Int, offset: (Int) -> Double = { _ in 0 }) -> [(MIDIMessage, Double)] {
        [(.start, firstClock - 50)] + (0..<count).map { (.timingClock, firstClock + Double($0) * framesPerClock + offset($0)) }
    }

    /// Today's follower and the gate alike: with steady clocks, eighth `k` sounds where the
    /// Start's stamped frame and the fitted tempo put it.
    static var startFrame: Double { firstClock + Double(period) }

    /// (a) The master stops mid-beat: its clocks end 12 clocks into beat 2 (clock 60, beat 2.5),
    /// and its Stop comes `stopAfter` ms after that last clock. Eighth 5 (beat 2.5, clock 60)
    /// sounds; eighth 6 (beat 3, clock 72, which never came) must not — the follower without a
    /// gate ran on by its tempo and played it when the Stop came more than a quarter second on.
    /// Carillon's own clock out sends the master's 61 clocks, not one more.
    @Test(arguments: [(260.0, 256), (400.0, 256), (400.0, 1024)])
    func aMasterThatStopsMidBeat_neverSoundsTheBeatWhoseClockDidNotCome(stopAfter: Double, period: Int) throws {
        let rig = Rig(period: period)
        var messages = Self.clocks(61)
        messages.append((.stop, Self.firstClock + 60 * Self.framesPerClock + stopAfter / 1000 * Self.rate))
        rig.run(messages, until: Int(Self.firstClock) + 100_000)
        for k in 0...5 { #expect(rig.onset(eighth: k) != nil, "eighth \(k) (clock \(12 * k)) came and should sound") }
        #expect(rig.onset(eighth: 6) == nil, "beat 3's note sounded at frame \(rig.onset(eighth: 6) ?? -1); its clock never came")
        #expect(rig.onset(eighth: 7) == nil)
        // The Stop lands where the last clock (60, beat 2.5) let the piece go: clock 61's place, the
        // master's own count after 61 clocks (beat 61/24, 1.2708 s), never past it.
        #expect(!rig.renderer.transport.isPlaying)
        let position = rig.renderer.transport.position
        #expect(position >= 1.25 && position <= 61.0 / 48 + 1e-9, "stopped at \(position) s")
        #expect(rig.clockOut.clockFrames.count == 61, "clock out: \(rig.clockOut.clockFrames.count) clocks for the master's 61")
        #expect(rig.clockOut.transportEvents.map(\.kind) == [.start, .stop])
    }

    /// (b) A late clock: clock 36 (beat 1.5, eighth 3) comes 60 ms after clock 35 instead of
    /// 20.8 ms (the master stalled; the clocks after it keep the new phase). The transport holds
    /// at clock 36's place until the clock comes: eighth 3 sounds no earlier than that clock's
    /// stamped frame, and no later note sounds before the clock at its place.
    @Test func aLateClock_holdsTheTransport_andNoNoteSoundsEarly() throws {
        let rig = Rig()
        let stall = 0.060 * Self.rate - Self.framesPerClock   // 1,880 frames later than due
        rig.run(Self.clocks(24 * 6, offset: { $0 >= 36 ? stall : 0 }), until: Int(Self.firstClock) + 160_000)
        let clockFrames = rig.stamped.filter { $0.0 == .timingClock }.map { Int($0.1) }
        #expect(clockFrames.count == 24 * 6)
        for k in 3..<(24 * 6 / 12) {
            let onset = try #require(rig.onset(eighth: k), "eighth \(k) should sound")
            // Its clock's stamped frame, give or take the 1-frame rounding of the stamp.
            #expect(onset >= clockFrames[12 * k] - 1,
                    "eighth \(k) sounded at \(onset), \(clockFrames[12 * k] - onset) frames before its clock (stamped \(clockFrames[12 * k]))")
        }
        // Before the stall, the notes are where the steady clocks put them.
        for k in 0..<3 {
            let onset = try #require(rig.onset(eighth: k))
            #expect(abs(Double(onset) - (Self.startFrame + Double(k) * 12 * Self.framesPerClock)) <= 2)
        }
    }

    /// (c) Steady clocks: no change from the follower without a gate. Every eighth sounds within
    /// 2 frames of the Start's stamped frame plus the fitted tempo's time; with ±0.5 ms of jitter
    /// on each clock, within −2…+2 + 2 × 24 frames (the gate only ever holds a note back to its
    /// clock's stamp, never moves one earlier). Measured against the follower without a gate (this
    /// test on the commit before the gate, printing each onset): exact clocks, all 24 onsets on
    /// the same frames (0…+1 off the ideal both ways); ±0.5 ms, 0…+23 frames later than it (it
    /// ran −2…+10 off the ideal, the gate 0…+31).
    @Test(arguments: [0.0, 0.0005])
    func steadyClocks_playWhereTheFollowerWithoutAGateDid(jitter: Double) throws {
        let rig = Rig()
        var random: UInt64 = 0x9E37_79B9_7F4A_7C15
        let amplitude = jitter * Self.rate
        let offsets = (0..<(24 * 12)).map { i -> Double in
            guard i > 0 else { return 0 }   // the Start's clock on time: it sets the phase both ways
            random ^= random << 13; random ^= random >> 7; random ^= random << 17
            return (Double(random % 2001) / 1000 - 1) * amplitude
        }
        rig.run(Self.clocks(24 * 12, offset: { offsets[$0] }), until: Int(Self.firstClock) + 300_000)
        var worst = (early: 0.0, late: 0.0)
        for k in 0..<Self.eighths {
            let onset = try #require(rig.onset(eighth: k), "eighth \(k) should sound")
            let d = Double(onset) - (Self.startFrame + Double(k) * 12 * Self.framesPerClock)
            worst = (min(worst.early, d), max(worst.late, d))
        }
        #expect(worst.early >= -2 && worst.late <= 2 + 2 * amplitude, "onsets \(worst.early)…+\(worst.late) frames off the ideal")
        // The clock out while following: one run, no Stop/Song Position/Continue from the gate's openings
        // (with jitter the tempo scale changes at every clock, and the openings re-anchor mid-block).
        #expect(rig.clockOut.transportEvents.map(\.kind) == [.start, .stop], "\(rig.clockOut.transportEvents.prefix(6))")
    }

    /// (d) The VM's set-up: 22,050 Hz, a 1024-frame period, so two or three clocks (459.4 frames
    /// apart at 120 bpm) open the gate inside each block and re-anchor the transport there. The clock
    /// out while following is the master's run: Start (not SPP 1 + Continue), the clocks, Stop; after
    /// the master's SPP 32 + Continue (and 140 bpm after it, as the VM's master), SPP 32 + Continue
    /// and the clocks, Stop. No Stop/SPP/Continue from the gate's openings or the tempo change.
    @Test(arguments: [0.0, 0.001])
    func largePeriodAtALowRate_clockOutIsTheMastersRun(jitter: Double) throws {
        let rate = 22_050.0, period = 1024
        let rig = Rig(period: period, rate: rate)
        let perClock = rate * 0.5 / 24
        let first = 40.0 * Double(period) + 100
        var messages: [(MIDIMessage, Double)] = [(.start, first - 50)]
        for i in 0..<96 { messages.append((.timingClock, first + Double(i) * perClock)) }
        let stopAt = first + 95 * perClock + 0.2 * rate
        messages.append((.stop, stopAt))
        messages.append((.songPosition(32), stopAt + 0.5 * rate))
        let again = stopAt + 1.0 * rate
        messages.append((.continue, again - 50))
        // As the VM's master: 140 bpm after the Continue, ±1 ms of jitter on every clock.
        let perClock140 = rate * 60 / 140 / 24
        for i in 0..<48 { messages.append((.timingClock, again + Double(i) * perClock140)) }
        messages.append((.stop, again + 47 * perClock140 + 0.2 * rate))
        var random: UInt64 = 0x9E37_79B9_7F4A_7C15
        for j in messages.indices where messages[j].0 == .timingClock {
            random ^= random << 13; random ^= random >> 7; random ^= random << 17
            messages[j].1 += (Double(random % 2001) / 1000 - 1) * jitter * rate
        }
        rig.run(messages, until: Int(again + 47 * perClock140 + 0.6 * rate))
        let out = rig.clockOut.transportEvents
        let kinds = out.map { $0.kind == .songPosition ? "spp=\($0.sixteenths)" : "\($0.kind)" }
        #expect(kinds == ["start", "stop", "spp=32", "spp=32", "continue", "stop"]
                    || kinds == ["start", "stop", "spp=32", "continue", "stop"], "clock out: \(kinds)")
        #expect(rig.clockOut.clockFrames.count == 96 + 48, "clock out: \(rig.clockOut.clockFrames.count) clocks for the master's 144")
        // After the Continue the clock out follows the master to 140 bpm (393.75 frames a clock), not
        // 120's 459.4 (the VM's run after these fixes showed 120.03 there). Measured: 377.4 over the
        // last 24 clocks (the follower catching up its lag from the tempo change), hence ±6 %.
        let last = rig.clockOut.clockFrames.suffix(25)
        let interval = Double(last.last! - last.first!) / 24
        #expect(abs(interval - perClock140) < 0.06 * perClock140, "clock out after the Continue: \(interval) frames a clock")
    }
}
