import Controls
import MappingFiles
import Engine
import Hosting
@testable import LiveSession
import MIDI
import Sampling
import Synchronization
import Testing
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// The decisions alone, on a clock the test holds.
@Suite struct AudioRecoveryTests {
    @Test func fault_startsOneOutage_aSecondFaultIsTheSameOne() {
        var r = AudioRecovery(retryInterval: 1)
        let started = r.fault("server gone", at: 10)
        #expect(started)
        let startedAgain = r.fault("again", at: 10.5)
        #expect(!startedAgain)
        #expect(r.statusText == "no audio: server gone, retrying")
    }

    @Test func tries_comeAboutOnceAnInterval_neverBefore() {
        var r = AudioRecovery(retryInterval: 1)
        _ = r.fault("gone", at: 0)
        #expect(!r.isTryDue(at: 0.99))
        #expect(r.isTryDue(at: 1))
        r.tryFailed(at: 1.02)
        #expect(!r.isTryDue(at: 2.0))
        #expect(r.isTryDue(at: 2.02))
        r.tryFailed(at: 2.05)
        #expect(r.statusText == "no audio: gone, retrying (2 tries so far)")
    }

    @Test func recovered_playsAgain_andSaysHowLongItWasDown() {
        var r = AudioRecovery(retryInterval: 1)
        let notDown = r.recovered(at: 1)
        #expect(notDown == nil)   // nothing to recover from
        _ = r.fault("gone", at: 3)
        r.tryFailed(at: 4)
        let downFor = r.recovered(at: 5.5)
        #expect(downFor == 2.5)
        #expect(r.state == .playing)
        #expect(r.statusText == nil)
        #expect(r.recoveries == 1)
        // A later fault is a new outage.
        let newOutage = r.fault("gone again", at: 9)
        #expect(newOutage)
    }

    @Test func giveUpAfter_endsOnce_onlyAfterThatLongWithoutAudio() {
        var r = AudioRecovery(retryInterval: 1, giveUpAfter: 2)
        let whilePlaying = r.shouldGiveUp(at: 100)
        #expect(!whilePlaying)      // playing
        _ = r.fault("gone", at: 0)
        let tooSoon = r.shouldGiveUp(at: 1.99)
        #expect(!tooSoon)
        let onTime = r.shouldGiveUp(at: 2)
        #expect(onTime)
        let twice = r.shouldGiveUp(at: 3)
        #expect(!twice)        // once
        #expect(!r.isTryDue(at: 10))           // no tries after giving up
        #expect(r.statusText == "no audio: gone, gave up")
    }

    @Test func withoutGiveUpAfter_itRetriesForEver() {
        var r = AudioRecovery(retryInterval: 1)
        _ = r.fault("gone", at: 0)
        let gaveUpLater = r.shouldGiveUp(at: 1e9)
        #expect(!gaveUpLater)
        #expect(r.isTryDue(at: 1e9))
    }
}

/// `AudioSupervisor` over a fake output that fails and comes back: the test
/// thread is the render thread while the output "plays", and stops rendering
/// when it fails, as a dead device's thread would.
@Suite(.serialized) struct AudioSupervisorTests {
    /// Which notes sound, as the render side sees them.
    final class Voices: Instrument, @unchecked Sendable {
        let stripCount = 16
        let held = Mutex<Set<Int>>([])
        let releasedByNoteOff = Mutex<[Int]>([])
        /// Every note-on that reached the instrument.
        let noteOnCount = Atomic<Int>(0)
        /// The last value of each controller (channel << 8 | controller) and each channel's program.
        let controls = Mutex<[Int: UInt8]>([:])
        let programs = Mutex<[Int: UInt8]>([:])
        func prepare(sampleRate: Double, maxFrames: Int) {}
        func receive(_ m: ChannelMessage) {
            let key = m.channel << 8 | Int(m.data1)
            if m.kind == 0xB0 { controls.withLock { $0[key] = m.data2 } }
            if m.kind == 0xC0 { programs.withLock { $0[m.channel] = m.data1 } }
            if m.isNoteOn { noteOnCount.add(1, ordering: .relaxed); held.withLock { _ = $0.insert(key) } }
            else if m.kind == 0x80 || m.kind == 0x90 {
                releasedByNoteOff.withLock { $0.append(key) }
                held.withLock { _ = $0.remove(key) }
            }
        }
        func render(frames: Int, dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                    effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {}
        func silence() { held.withLock { $0.removeAll() } }
        var heldNow: Set<Int> { held.withLock { $0 } }
        var noteOffs: [Int] { releasedByNoteOff.withLock { $0 } }
    }

    final class FakeOutput: AudioOutput, @unchecked Sendable {
        let summary = "fake"
        let sampleRate = 48_000
        let maxFrames = 480
        let periodDuration = 0.01
        let prefillFrames = 0
        let xruns = 0
        var cycle: OutputCycle?
        /// The device is there to be reopened.
        let available = Atomic<Bool>(true)
        let playing = Atomic<Bool>(false)
        let reopenTries = Mutex<[Double]>([])
        let halts = Atomic<Int>(0)
        /// Set before the supervisor starts: the stall watch's limit (nil: not watched).
        var stallLimitSeconds: Double?
        var stallLimit: Double? { stallLimitSeconds }

        func start(_ cycle: OutputCycle) throws(LiveHost.Failure) { self.cycle = cycle; playing.store(true, ordering: .releasing) }
        func halt() { halts.add(1, ordering: .relaxed) }
        func reopen() throws(LiveHost.Failure) {
            reopenTries.withLock { $0.append(Double(monotonicNanoseconds()) / 1e9) }
            guard available.load(ordering: .acquiring) else { throw .deviceChanged("not back yet") }
            playing.store(true, ordering: .releasing)
        }
        func finish() {}
        var isPlaying: Bool { playing.load(ordering: .acquiring) }
        var tries: [Double] { reopenTries.withLock { $0 } }

        /// The device goes away: the render thread stops and says why.
        func fail(_ reason: String) {
            available.store(false, ordering: .releasing)
            playing.store(false, ordering: .releasing)
            cycle?.shared.fault.withLock { $0 = reason }
        }
    }

    struct Rig {
        let voices = Voices()
        let output = FakeOutput()
        let shared = OutputState()
        let renderer: Renderer
        let keyboard: KeyboardRouting
        let log = HostLog()
        var buffer = [Float](repeating: 0, count: 960)

        init() throws {
            renderer = Renderer(instrument: voices)
            renderer.prepare(sampleRate: 48_000, maxFrames: 480)
            let hub = ControlHub(mapping: try ControlMapping.parse(yaml: "zones:\n  - { name: Piano, keys: C-1..G9, to: 3 }\n"))
            keyboard = KeyboardRouting(hub: hub, events: EventQueueProducer(renderer.events, clock: nil))
            keyboard.start()
            try output.start(OutputCycle(renderer: renderer, shared: shared, recorder: nil))
        }

        func supervisor(transport: Transport? = nil, recovery: AudioRecovery) throws -> AudioSupervisor {
            try AudioSupervisor(.init(output: output, shared: shared, renderer: renderer, clock: nil, keyboard: keyboard, jackMIDIInbox: nil,
                                      transport: transport, log: log, verbose: true), recovery: recovery)
        }

        /// One block on the test thread, as the render thread would (only while the output plays), counted in `shared.blocks`.
        mutating func renderBlock() {
            guard output.playing.load(ordering: .acquiring), let cycle = output.cycle else { return }
            buffer.withUnsafeMutableBufferPointer { cycle.render(frames: 480, into: $0) }
        }
        var framesRenderedAway: Int { shared.framesRenderedAway.load(ordering: .relaxed) }

        var outage: String? { shared.outage.withLock { $0 } }
        var failure: String? { shared.failure.withLock { $0 } }

        func press(_ key: UInt7, on: Bool = true) {
            keyboard.route(on ? .noteOn(key, velocity: 100, channel: 0) : .noteOff(key, channel: 0), from: 1, at: .afterLast)
        }
    }

    /// Waits up to `seconds` for `condition`.
    static func eventually(_ seconds: Double = 5, _ condition: () -> Bool) -> Bool {
        for _ in 0..<Int(seconds * 100) {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    /// Channel 3 (index 2), key `k`: where the zone sends the keyboard's notes.
    static func zoned(_ k: Int) -> Int { 2 << 8 | k }

    @Test func aFault_releasesHeldNotes_retries_andPlaysAgainWithNothingStale() throws {
        var rig = try Rig()
        let supervisor = try rig.supervisor(recovery: AudioRecovery(retryInterval: 0.2))
        defer { supervisor.stop() }
        rig.press(60)
        rig.renderBlock()
        #expect(rig.voices.heldNow == [Self.zoned(60)])

        rig.output.fail("snd_pcm_writei failed: No such device")
        #expect(Self.eventually { rig.outage != nil })
        #expect(rig.outage == "no audio: snd_pcm_writei failed: No such device, retrying")
        let halts = rig.output.halts.load(ordering: .relaxed)
        #expect(halts == 1)
        // The zones' ledger sent the note-off, and the voices are gone: nothing sounds when the device is back.
        #expect(Self.eventually { rig.voices.heldNow.isEmpty })
        #expect(rig.voices.noteOffs.contains(Self.zoned(60)))
        // A key played while there is no audio is played nowhere (it would sound late, and stuck, on the return).
        rig.press(64)
        usleep(1_000_000)   // about a second down: a few tries
        #expect(rig.failure == nil)
        let tries = rig.output.tries
        #expect(tries.count >= 3)
        // About once an interval, never in a burst.
        for (a, b) in zip(tries, tries.dropFirst()) { #expect(b - a >= 0.19) }

        rig.output.available.store(true, ordering: .releasing)
        #expect(Self.eventually { rig.outage == nil })
        #expect(rig.output.isPlaying)
        rig.renderBlock()
        #expect(rig.voices.heldNow.isEmpty)
        // And it plays on: the next key sounds, and the log said it once, and that it is back.
        rig.press(67)
        rig.renderBlock()
        #expect(rig.voices.heldNow == [Self.zoned(67)])
        let log = rig.log.take()
        #expect(log.filter { $0.hasPrefix("no audio:") }.count == 1)
        #expect(log.contains { $0.hasPrefix("audio back after") })
    }

    @Test func play_holdsItsTransport_whileThereIsNoOutput() throws {
        var rig = try Rig()
        rig.renderer.schedule(Score(events: [.init(seconds: 0, message: .noteOn(48, velocity: 90, channel: 0))], duration: 60))
        let transport = rig.renderer.transport
        let supervisor = try rig.supervisor(transport: transport, recovery: AudioRecovery(retryInterval: 0.2))
        defer { supervisor.stop() }
        for _ in 0..<10 { rig.renderBlock() }
        #expect(transport.isPlaying)
        rig.output.fail("the JACK server stopped or dropped carillon (killed)")
        #expect(Self.eventually { !transport.isPlaying })
        let heldAt = transport.position
        usleep(500_000)
        #expect(transport.position == heldAt)   // the drained blocks do not move the piece
        #expect(rig.voices.heldNow.isEmpty)
        rig.output.available.store(true, ordering: .releasing)
        #expect(Self.eventually { rig.outage == nil })
        #expect(transport.isPlaying)
        rig.renderBlock()
        #expect(transport.position > heldAt)
    }

    @Test func giveUpAfter_setsTheFailure_theSessionEndsOnIt() throws {
        let rig = try Rig()
        let supervisor = try rig.supervisor(recovery: AudioRecovery(retryInterval: 0.1, giveUpAfter: 0.4))
        defer { supervisor.stop() }
        rig.output.fail("gone")
        #expect(Self.eventually { rig.failure != nil })
        #expect(rig.failure == "no audio for 0.4 s (--give-up-after): gone")
        // The device coming back after that changes nothing: the session is ending.
        let tries = rig.output.tries.count
        rig.output.available.store(true, ordering: .releasing)
        usleep(300_000)
        #expect(rig.output.tries.count == tries)
    }

    /// Issue 40's soak: while down, a player playing on made the supervisor render away the queue at every
    /// poll (0.5 s of audio each), which crowded out the reopen tries. Now the queue is drained: no frame is
    /// rendered after the fault's render-away, controls and programs set meanwhile hold, and no note sounds on the return.
    @Test func whileDown_aFloodOfNoteOns_isDrainedNotRendered_controlsKept_nothingSoundsOnTheReturn() throws {
        var rig = try Rig()
        let supervisor = try rig.supervisor(recovery: AudioRecovery(retryInterval: 0.2))
        defer { supervisor.stop() }
        rig.press(60)
        rig.renderBlock()
        let clockAtFault = rig.renderer.sampleTime
        // Note-ons that reached the instrument: none after the fault, not even in its render-away's blocks.
        let onsAtFault = rig.voices.noteOnCount.load(ordering: .relaxed)
        rig.output.fail("snd_pcm_writei failed: No such device")

        // A second of playing on from the fault (through its render-away too): 200 note-ons (half let go),
        // a control change and a program change amid them.
        for i in 0..<200 {
            let key = UInt7(36 + i % 48)
            rig.press(key)
            if i % 2 == 1 { rig.press(key, on: false) }
            if i == 60 { #expect(rig.framesRenderedAway == RenderAway.quietStretchFrames) }
            if i == 100 {
                rig.keyboard.route(.cc(7, value: 33, channel: 0), from: 1, at: .afterLast)
                rig.keyboard.route(.programChange(5, channel: 0), from: 1, at: .afterLast)
            }
            usleep(5_000)
        }
        #expect(Self.eventually { rig.renderer.events.count == 0 })
        usleep(100_000)
        #expect(rig.output.tries.count >= 3, "the tries were crowded out: \(rig.output.tries.count)")
        #expect(rig.voices.heldNow.isEmpty)
        // (a) Not a frame rendered for what came in: the fault's one render-away (the fake is silent: its
        // tails are quiet after 0.5 s), none per poll, none before the tries.
        #expect(rig.framesRenderedAway == RenderAway.quietStretchFrames)
        #expect(rig.renderer.sampleTime == clockAtFault + UInt64(RenderAway.quietStretchFrames))
        // (b) The control and the program reached the instrument (the zone plays channel 3, index 2).
        #expect(rig.voices.controls.withLock { $0[Self.zoned(7)] } == 33)
        #expect(rig.voices.programs.withLock { $0[2] } == 5)
        // No note-on reached a voice meanwhile.
        #expect(rig.voices.noteOnCount.load(ordering: .relaxed) == onsAtFault)

        rig.output.available.store(true, ordering: .releasing)
        #expect(Self.eventually { rig.outage == nil })
        for _ in 0..<20 { rig.renderBlock() }
        // (c) Nothing sounds on the return, and what was set meanwhile still holds.
        #expect(rig.voices.heldNow.isEmpty)
        #expect(rig.voices.noteOnCount.load(ordering: .relaxed) == onsAtFault)
        #expect(rig.voices.controls.withLock { $0[Self.zoned(7)] } == 33)
        #expect(rig.voices.programs.withLock { $0[2] } == 5)
        rig.press(67)
        rig.renderBlock()
        #expect(rig.voices.heldNow == [Self.zoned(67)])
    }

    /// Issue 40's soak: `snd_pcm_writei` blocked for 12–30 s with no fault said. An output that stops
    /// writing is a fault once the stall limit has passed: halted, reopened, and said once.
    @Test func anOutputThatStopsWriting_isAFault_atTheStallLimit_once() throws {
        var rig = try Rig()
        rig.output.stallLimitSeconds = 0.5
        let supervisor = try rig.supervisor(recovery: AudioRecovery(retryInterval: 0.2))
        defer { supervisor.stop() }
        // Playing: a block every 10 ms for a second, no fault.
        for _ in 0..<100 { rig.renderBlock(); usleep(10_000) }
        #expect(rig.outage == nil)
        // The output stops writing, and says nothing.
        let stalledAt = Double(monotonicNanoseconds()) / 1e9
        #expect(Self.eventually(3) { rig.outage != nil })
        let seenAfter = Double(monotonicNanoseconds()) / 1e9 - stalledAt
        #expect(seenAfter >= 0.5, "before the stall limit: \(seenAfter) s")
        #expect(seenAfter < 1.5, "long after the stall limit: \(seenAfter) s")
        #expect(rig.output.halts.load(ordering: .relaxed) == 1)
        // It reopens (the fake's device is there) and plays on: no second fault while blocks come.
        #expect(Self.eventually { rig.outage == nil })
        for _ in 0..<150 { rig.renderBlock(); usleep(10_000) }
        let log = rig.log.take()
        #expect(log.filter { $0.hasPrefix("no audio: output stalled: no period written for 0.5 s") }.count == 1, "\(log)")
        #expect(log.filter { $0.hasPrefix("no audio:") }.count == 1, "\(log)")
        #expect(rig.output.halts.load(ordering: .relaxed) == 1)
    }
}

/// The stall watch's decisions, on a clock the test holds.
@Suite struct OutputStallWatchTests {
    @Test func fires_onceAtTheLimit_andAgainOnlyAfterProgress() {
        var w = OutputStallWatch(limit: 1, blocks: 7, at: 0)
        var fired: [Double] = []
        for i in 1...60 {   // 3 s of 50 ms polls, no block
            let now = Double(i) * 0.05
            if w.poll(blocks: 7, at: now) != nil { fired.append(now) }
        }
        #expect(fired.count == 1)
        #expect(abs(fired[0] - 1.0) < 1e-9)
        // A block went through: the next stall is measured afresh.
        #expect(w.poll(blocks: 8, at: 3.05) == nil)
        #expect(w.poll(blocks: 8, at: 3.5) == nil)
        #expect(w.poll(blocks: 8, at: 3.75) == nil)
        #expect(w.poll(blocks: 8, at: 4.0) == nil)
        #expect(w.poll(blocks: 8, at: 4.05) == nil)   // 0.25 + 0.25 + 0.25 + 0.05: a gap counts at most 0.25 s
        #expect(w.poll(blocks: 8, at: 4.3) != nil)    // + 0.25 ≥ 1
    }

    @Test func aStoppedProcess_isNotTheOutputsStall() {
        // The whole process stopped 30 s (kill -STOP): the supervisor's own gap counts 0.25 s, not 30.
        var w = OutputStallWatch(limit: 1, blocks: 0, at: 0)
        #expect(w.poll(blocks: 0, at: 0.05) == nil)
        #expect(w.poll(blocks: 0, at: 30.05) == nil)
        #expect(w.stalledFor < 0.31)
        // Continued: the output writes again within a period or two, and nothing fires.
        #expect(w.poll(blocks: 3, at: 30.1) == nil)
        #expect(w.stalledFor == 0)
    }

    @Test func theLimit_isEightPeriods_atLeastASecond() {
        #expect(OutputStallWatch.limit(periodDuration: 256.0 / 48_000) == 1)
        #expect(OutputStallWatch.limit(periodDuration: 0.25) == 2)
    }

    @Test func restart_measuresFromTheReopen() {
        var w = OutputStallWatch(limit: 1, blocks: 0, at: 0)
        for i in 1...30 { _ = w.poll(blocks: 0, at: Double(i) * 0.05) }   // 1.5 s: fired
        w.restart(blocks: 0, at: 10)
        #expect(w.poll(blocks: 0, at: 10.05) == nil)
        #expect(w.stalledFor < 0.06)
    }
}
