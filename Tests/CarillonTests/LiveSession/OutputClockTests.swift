import ALSA
import Controls
import Engine
import Hosting
import MIDI
@testable import Hosting
@testable import LiveSession
@testable import Sampling
import Testing
import Threads


/// `--timing stamped`: arrival times (a fake monotonic clock: plain
/// nanoseconds) turned into frames of the output's sample clock, and the
/// producer that pushes them in order.
@Suite struct OutputClockTests {
    static let rate = 48_000.0, period = 1024
    static let periodNanos = UInt64(Double(period) / rate * 1e9)
    /// An arbitrary boot-relative start, as CLOCK_MONOTONIC would give.
    static let base: UInt64 = 5_000_000_000_000

    /// The nanoseconds at which `frame` of the sample clock is due, with the device started at `base`.
    static func due(_ frame: UInt64, origin: UInt64 = base) -> UInt64 { origin + UInt64(Double(frame) / rate * 1e9) }

    /// A clock fed `blocks` block starts, each woken `late(k)` nanoseconds after it was due.
    static func running(blocks: Int, origin: UInt64 = base, late: (Int) -> UInt64 = { _ in 0 }) -> OutputClock {
        let clock = OutputClock(sampleRate: rate, periodFrames: period)
        for k in 0..<blocks {
            let frame = UInt64(k * period)
            clock.publish(blockStart: frame, at: due(frame, origin: origin) + late(k))
        }
        return clock
    }

    @Test func beforeTheFirstBlock_playsAtOnce() {
        let clock = OutputClock(sampleRate: Self.rate, periodFrames: Self.period)
        #expect(clock.frame(arrival: Self.base) == 0)
        #expect(clock.latencyFrames == UInt64(Self.period))
    }

    @Test func steadyOutput_arrivalPlaysOnePeriodLater() {
        let clock = Self.running(blocks: 100)
        // Arrivals all over the last block's period: each exactly one period later on the timeline.
        for step in 0..<50 {
            let arrivalFrame = UInt64(99 * Self.period + step * 20)
            let frame = clock.frame(arrival: Self.due(arrivalFrame))
            #expect(abs(Int(frame) - Int(arrivalFrame) - Self.period) <= 1, "arrival at \(arrivalFrame) -> \(frame)")
        }
    }

    @Test func lateWakes_doNotMoveTheTimeline() {
        // Every block but one in eight woken 0.5…3.5 ms late (scheduling delay,
        // a timer's granularity): the earliest wakes set the mapping.
        let clock = Self.running(blocks: 200) { k in k % 8 == 0 ? 0 : UInt64(500_000 + (k * 7919) % 3_000_000) }
        let arrivalFrame = UInt64(199 * Self.period + 300)
        let frame = clock.frame(arrival: Self.due(arrivalFrame))
        #expect(abs(Int(frame) - Int(arrivalFrame) - Self.period) <= 1, "\(frame)")
    }

    @Test func aStretchOfLateWakes_shorterThanTheWindowsSeconds_doesNotMoveTheTimeline() {
        // 256-frame periods: 0.7 s of wakes 4 ms late (a timer beating against the period)
        // after 1 s on time. 64 blocks (the old window) would have let the minimum follow them.
        let period = 256
        let clock = OutputClock(sampleRate: Self.rate, periodFrames: period)
        #expect(clock.window >= Int(OutputClock.windowSeconds * Self.rate) / period)
        let onTime = 190, late = 130
        for k in 0..<(onTime + late) {
            let frame = UInt64(k * period)
            clock.publish(blockStart: frame, at: Self.due(frame) + (k < onTime ? 0 : 4_000_000))
        }
        let arrivalFrame = UInt64((onTime + late - 1) * period + 100)
        let frame = clock.frame(arrival: Self.due(arrivalFrame))
        #expect(abs(Int(frame) - Int(arrivalFrame) - period) <= 1, "\(frame)")
    }

    @Test func theWindow_isAboutThreeSecondsOfPeriods_withinBounds() {
        #expect(OutputClock(sampleRate: 48_000, periodFrames: 1024).window == 141)
        #expect(OutputClock(sampleRate: 48_000, periodFrames: 64).window == 2250)
        #expect(OutputClock(sampleRate: 8_000, periodFrames: 8192).window == 64)
        #expect(OutputClock(sampleRate: 192_000, periodFrames: 16).window == 4096)
    }

    @Test func eventsAreNeverPlacedInABlockAlreadyRendering() {
        // Whenever an event arrives while block k renders (woken late or not), its
        // frame lies at or after block k + 1: it is not late, only one period away.
        let late: (Int) -> UInt64 = { k in UInt64((k * 104_729) % 4_000_000) }
        let clock = OutputClock(sampleRate: Self.rate, periodFrames: Self.period)
        for k in 0..<300 {
            let start = UInt64(k * Self.period)
            let woke = Self.due(start) + late(k)
            clock.publish(blockStart: start, at: woke)
            for offset in stride(from: 0, to: Int(Self.periodNanos), by: Int(Self.periodNanos) / 7) {
                let frame = clock.frame(arrival: woke + UInt64(offset))
                #expect(frame >= start + UInt64(Self.period), "block \(k): \(frame)")
            }
        }
    }

    @Test func aSlowPrefill_doesNotMoveTheTimeline() {
        // ALSA's start: four periods rendered back to back, the first one slow (150 ms,
        // longer than the whole buffer of 85 ms); the device starts when they are written and
        // then asks for a block each period. Only those say where the frames lie.
        let periods = 4, slow: UInt64 = 150_000_000, render: UInt64 = 1_000_000
        let clock = OutputClock(sampleRate: Self.rate, periodFrames: Self.period, settleFrames: periods * Self.period)
        var t = Self.base
        for k in 0..<periods {
            clock.publish(blockStart: UInt64(k * Self.period), at: t)
            t += k == 0 ? slow : render
        }
        // Nothing published yet: at once, in the block after the last one rendered (where it
        // plays, and so where a take records it), not at frame 0, which the prefill has passed.
        #expect(clock.frame(arrival: t) == UInt64(periods * Self.period))
        let deviceStart = t   // frame 0 plays now; block k is asked for when frame (k − periods) · period has played
        for k in periods..<(periods + 20) {
            clock.publish(blockStart: UInt64(k * Self.period), at: deviceStart + UInt64(Double((k - periods) * Self.period) / Self.rate * 1e9))
        }
        // An arrival while frame F plays is placed at F + one period + the buffer ahead.
        let playing = UInt64(19 * Self.period + 300)
        let frame = clock.frame(arrival: deviceStart + UInt64(Double(playing) / Self.rate * 1e9))
        #expect(abs(Int(frame) - Int(playing) - (periods + 1) * Self.period) <= 1, "\(frame)")
    }

    @Test func clockJumpBack_orStaleStamp_playsAtOnce() {
        let clock = Self.running(blocks: 10)
        let lastBlock = UInt64(9 * Self.period)
        #expect(clock.frame(arrival: 0) == lastBlock)
        #expect(clock.frame(arrival: Self.base - 3_600_000_000_000) == lastBlock)
        // A stamp older than the latency: as soon as possible, never in a past block.
        #expect(clock.frame(arrival: Self.due(lastBlock - 2 * UInt64(Self.period))) == lastBlock)
    }

    @Test func clockJumpForward_orStalledOutput_clampedAFewPeriodsAhead() {
        let clock = Self.running(blocks: 10)
        let latest = UInt64(9 * Self.period) + clock.latencyFrames + 2 * UInt64(Self.period)
        #expect(clock.frame(arrival: Self.base + 3_600_000_000_000) == latest)
        #expect(clock.frame(arrival: UInt64.max) == latest)
        #expect(clock.frame(arrival: Self.due(UInt64(9 * Self.period)) + 10 * Self.periodNanos) == latest)
    }

    @Test func deviceRestart_followedWithinTheWindow() {
        // An xrun: the device restarts 50 ms later than the old timeline said.
        let clock = Self.running(blocks: 20)
        let shift: UInt64 = 50_000_000
        var lastFrame: UInt64 = 0
        for k in 20..<(20 + clock.window) {
            lastFrame = UInt64(k * Self.period)
            clock.publish(blockStart: lastFrame, at: Self.due(lastFrame) + shift)
        }
        let arrivalFrame = lastFrame + 100
        let frame = clock.frame(arrival: Self.due(arrivalFrame) + shift)
        #expect(abs(Int(frame) - Int(arrivalFrame) - Self.period) <= 1, "\(frame)")
    }

    /// Everything in the queue, in order.
    static func drain(_ queue: EventQueue) -> [TimedMessage] {
        var out: [TimedMessage] = []
        while let e = queue.peek() { out.append(e); queue.pop() }
        return out
    }

    @Test func producer_keepsArrivalOrder_framesNeverDecrease() {
        let clock = Self.running(blocks: 10)
        let queue = EventQueue(capacity: 64)
        let producer = EventQueueProducer(queue, clock: clock)
        #expect(producer.timing == .stamped)
        let now = Self.due(UInt64(9 * Self.period))
        producer.push(.noteOn(60, velocity: 100, channel: 0), at: .arrival(now + 5_000_000))
        producer.push(.noteOn(62, velocity: 100, channel: 0), at: .arrival(now + 1_000_000))   // stamped earlier, came later
        producer.push(.controlChange(7, value: 90, channel: 0))                            // a parameter change: no stamp
        producer.pushSysEx([0x7E, 0x7F, 0x09, 0x01], at: .arrival(now + 6_000_000))
        producer.push(.noteOff(60, channel: 0), at: .arrival(now))                            // a clock jump back
        let events = Self.drain(queue)
        #expect(events.map(\.message.data1) == [60, 62, 7, 4, 60])
        #expect(events.map(\.message.isSysEx) == [false, false, false, true, false])
        let first = UInt64(9 * Self.period) + UInt64(0.005 * Self.rate) + UInt64(Self.period)
        #expect(abs(Int(events[0].frame) - Int(first)) <= 1)
        #expect(events[1].frame == events[0].frame)
        #expect(events[2].frame == events[0].frame)
        #expect(events[3].frame > events[0].frame)
        #expect(events[4].frame == events[3].frame)
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.frame <= $1.frame })
    }

    /// The ALSA input path under a stall (`kill -STOP` of live: the output and input threads
    /// frozen 1.5 s): the sequencer's client queue holds what arrived meanwhile, each event with
    /// its kernel stamp, and the input thread reads each once when it runs again. Through the
    /// router, every note-on and note-off of the stall reaches the queue and the take once, in
    /// the order played, none before the block then rendering (nothing doubles: a sequencer
    /// event has one reader and one read; nothing is lost while the client pool, 2000 events, holds).
    @Test func stall_everyEventStampedDuringIt_placedOnce_inOrder() {
        let clock = Self.running(blocks: 50)
        let queue = EventQueue(capacity: 1024)
        let recorder = MIDIRecorder(path: "/dev/null", sampleRate: Int(Self.rate))
        recorder.begin()
        let router = InputRouter(hub: ControlHub(mapping: nil), events: EventQueueProducer(queue, clock: clock), log: HostLog(),
                                 midiRecorder: recorder)
        let stalledAt = Self.due(UInt64(49 * Self.period))
        let source = SeqAddress(client: 24, port: 0)
        // 150 notes played 10 ms apart during the stall, then the output renders its first block after it.
        var played: [MIDIMessage] = []
        for k in 0..<150 {
            let on = MIDIMessage.noteOn(.init(channel: 0, note: UInt7(UInt8(36 + k % 60)), velocity: UInt7(UInt8(1 + k / 60 * 12 + k % 7))))
            let off = MIDIMessage.noteOff(.init(channel: 0, note: UInt7(UInt8(36 + k % 60)), velocity: 0))
            let at = stalledAt + UInt64(k) * 10_000_000
            router.handle(.message(on, source: source, arrival: at))
            router.handle(.message(off, source: source, arrival: at + 5_000_000))
            played += [on, off]
        }
        let resumed = UInt64(49 * Self.period) + UInt64(1.5 * Self.rate)
        clock.publish(blockStart: resumed, at: Self.due(resumed))
        let events = Self.drain(queue)
        #expect(events.count == played.count)
        #expect(events.map { [$0.message.status, $0.message.data1, $0.message.data2] }
                == played.map { m in m.bytes.count == 3 ? [m.bytes[0], m.bytes[1], m.bytes[2]] : [] })
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.frame <= $1.frame })
        #expect(events.allSatisfy { $0.frame >= UInt64(49 * Self.period) })
        #expect(recorder.file().tracks.first.map { track in track.events.filter { if case .midi = $0.event { true } else { false } }.count } == played.count)
    }

    /// The router places a message by the kernel's arrival stamp when it has one,
    /// not by when the input thread got to it; one fed in without a stamp, by the clock now.
    @Test func router_placesByTheArrivalStamp_elseByTheClockNow() {
        let clock = OutputClock(sampleRate: Self.rate, periodFrames: Self.period)
        // The real clock's last block: "now" lies within it.
        let now = OutputClock.now()
        clock.publish(blockStart: 10 * UInt64(Self.period), at: now)
        let queue = EventQueue(capacity: 16)
        let router = InputRouter(hub: ControlHub(mapping: nil), events: EventQueueProducer(queue, clock: clock), log: HostLog())
        let source = SeqAddress(client: 20, port: 0)
        // Fed in directly (no stamp): placed by the clock when the router takes it.
        let before = OutputClock.now()
        router.handle(.message(.noteOn(62, velocity: 100, channel: 0), source: source))
        let after = OutputClock.now()
        let unstamped = Self.drain(queue)
        #expect(unstamped.count == 1)
        #expect(unstamped[0].frame >= clock.frame(arrival: before) && unstamped[0].frame <= clock.frame(arrival: after))
        // Stamped by the kernel 5 ms later than now, whenever the router gets to it: placed by the stamp.
        let stamped = after + 5_000_000
        router.handle(.message(.noteOn(60, velocity: 100, channel: 0), source: source, arrival: stamped))
        let events = Self.drain(queue)
        #expect(events.count == 1)
        #expect(events.first?.frame == clock.frame(arrival: stamped))
        #expect(clock.frame(arrival: stamped) > clock.frame(arrival: after))
    }

    @Test func producerWithoutClock_asap_everythingAtOnce() {
        let queue = EventQueue(capacity: 16)
        let producer = EventQueueProducer(queue)
        #expect(producer.timing == .asap)
        producer.push(.noteOn(60, velocity: 100, channel: 0), at: .arrival(Self.base))
        producer.push(.noteOff(60, channel: 0))
        #expect(Self.drain(queue).map(\.frame) == [0, 0])
    }

    @Test func renderer_playsAStampedEventAtItsFrame_onTheBlockGrid() throws {
        // Through the real sampler: the onset lands where the stamp says, not at a block start.
        let sampler = try Sampler(soundFont: timGM, sampleRate: Self.rate, options: SamplerOptions())
        let renderer = Renderer(instrument: sampler.instrument, eventCapacity: 64)
        renderer.prepare(sampleRate: Self.rate, maxFrames: Self.period)
        let clock = OutputClock(sampleRate: Self.rate, periodFrames: Self.period)
        let producer = EventQueueProducer(renderer.events, clock: clock)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * Self.period)
        defer { output.deallocate() }
        var onsets: [Int] = []
        for arrivalOffset in [100, 500, 900] {
            var onset: Int?
            let startBlock = renderer.sampleTime
            for k in 0..<12 {
                let start = renderer.sampleTime
                clock.publish(blockStart: start, at: Self.due(start))
                if k == 0 {
                    producer.push(.noteOn(76, velocity: 127, channel: 9), at: .arrival(Self.due(start + UInt64(arrivalOffset))))
                }
                renderer.render(frames: Self.period, into: output)
                if onset == nil, let i = (0..<Self.period).first(where: { abs(output[2 * $0]) > 1e-3 }) {
                    onset = Int(start - startBlock) + i
                }
            }
            producer.push(.noteOff(76, channel: 9))
            renderer.silence()
            // Until the reverb's tail is gone: the next note starts from silence.
            for _ in 0..<400 {
                renderer.render(frames: Self.period, into: output)
                if output.allSatisfy({ abs($0) < 1e-5 }) { break }
            }
            onsets.append(try #require(onset) - arrivalOffset)
        }
        // Each onset one period after its arrival, within one 64-frame block.
        for o in onsets { #expect(abs(o - Self.period) <= 64, "onsets after arrival: \(onsets)") }
        #expect(onsets.max()! - onsets.min()! <= 64, "onsets after arrival: \(onsets)")
    }
}
