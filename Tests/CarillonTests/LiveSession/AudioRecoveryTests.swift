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
        func prepare(sampleRate: Double, maxFrames: Int) {}
        func receive(_ m: ChannelMessage) {
            let key = m.channel << 8 | Int(m.data1)
            if m.isNoteOn { held.withLock { _ = $0.insert(key) } }
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

        /// One block on the test thread, as the render thread would (only while the output plays).
        mutating func renderBlock() {
            guard output.playing.load(ordering: .acquiring) else { return }
            buffer.withUnsafeMutableBufferPointer { renderer.render(frames: 480, into: $0) }
        }

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
}
