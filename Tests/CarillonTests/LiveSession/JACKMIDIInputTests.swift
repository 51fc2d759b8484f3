import CAllocationCounter
import Controls
import Engine
@testable import Hosting
import Hosting
@testable import LiveSession
import MIDI
import MappingFiles
@testable import Sampling
import Testing
import Threads

/// JACK MIDI reaches the same router as the ALSA sequencer's input: a mapped
/// CC moves its control and goes no further, notes and SysEx reach the
/// renderer's queue at the frame the process callback gave them, and
/// `--record-midi` records them all. The process callback's side allocates nothing.
@Suite struct JACKMIDIInputTests {
    static let yaml = """
        name: JACK test
        channel: 1
        controls:
          - name: Volume
            kind: fader
            source: { cc: 7 }
            soft-takeover: false
            targets: [strip.1.gain]
        """

    /// As `JACKOutput.process` does: wire bytes at their frames.
    static func deliver(_ wire: [[UInt8]], frames: [UInt64], to inbox: EventQueue) {
        for (bytes, frame) in zip(wire, frames) { bytes.withUnsafeBufferPointer { _ = inbox.push(midiBytes: $0, frame: frame) } }
    }

    @Test func mappedCC_movesTheControl_notesAndSysExReachTheQueueAtTheirFrames_allRecorded() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.yaml))
        let clock = OutputClock(sampleRate: 48_000, periodFrames: 256)
        clock.publish(blockStart: 0, at: OutputClock.now())
        let queue = EventQueue(capacity: 64)
        let recorder = MIDIRecorder(path: "/dev/null", sampleRate: 48_000)
        recorder.begin()
        let router = InputRouter(hub: hub, events: EventQueueProducer(queue, clock: clock), log: HostLog(), midiRecorder: recorder)
        let input = JACKMIDIInput()
        Self.deliver([[0x90, 60, 100], [0xB0, 7, 0], [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7], [0x80, 60, 0]],
                     frames: [300, 310, 320, 500], to: input.inbox)
        let before = hub.value(of: .strip(.channel(Channel(0)), .gain))
        JACKMIDIInput.drain(input.inbox, into: router)
        hub.tick()

        #expect(hub.value(of: .strip(.channel(Channel(0)), .gain)) != before)   // CC 7 → strip 1's gain, at the fader's bottom
        var queued: [(frame: UInt64, status: UInt8, sysEx: Bool)] = []
        while let e = queue.peek() { queued.append((e.frame, e.message.status, e.message.isSysEx)); queue.pop() }
        #expect(queued.map(\.frame) == [300, 320, 500])
        #expect(queued.map(\.sysEx) == [false, true, false])
        #expect(queued.first?.status == 0x90)
        #expect(recorder.count == 4)
        // The take is sample-exact: each message at the frame it was played at (a tick is a frame).
        let recorded = recorder.file()
        #expect(recorded.division == .ticksPerQuarterNote(24_000))
        #expect(recorded.tracks[0].events.compactMap { if case .midi = $0.event { $0.tick } else { nil } } == [UInt64(300), 310, 320, 500])
        #expect(router.jackMessageCount == 4)
        #expect(input.inbox.count == 0)
    }

    @Test func withoutAClock_eventsAreDueAtOnce() {
        let queue = EventQueue(capacity: 16)
        let router = InputRouter(hub: ControlHub(mapping: nil), events: EventQueueProducer(queue), log: HostLog())
        let input = JACKMIDIInput()
        Self.deliver([[0x91, 64, 90]], frames: [12_345], to: input.inbox)
        JACKMIDIInput.drain(input.inbox, into: router)
        #expect(queue.peek()?.frame == 0)
    }

    /// The producer's side runs in JACK's process callback: no heap call.
    @Test func pushingWireBytes_allocatesNothing() {
        let input = JACKMIDIInput()
        let wire: [UInt8] = [0x91, 64, 100, 0xC1, 5, 0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7]
        wire.withUnsafeBufferPointer { wire in
            let base = wire.baseAddress!
            func cycle(_ n: Int) {
                let frame = UInt64(n * 256)
                _ = input.inbox.push(midiBytes: UnsafeBufferPointer(start: base, count: 3), frame: frame)
                _ = input.inbox.push(midiBytes: UnsafeBufferPointer(start: base + 3, count: 2), frame: frame + 1)
                _ = input.inbox.push(midiBytes: UnsafeBufferPointer(start: base + 5, count: 6), frame: frame + 2)
                while input.inbox.peek() != nil { input.inbox.pop() }
            }
            // Steady state first (runtime metadata, debug builds).
            for n in 0..<10 { cycle(n) }
            carillon_allocations_arm()
            for n in 10..<1_010 { cycle(n) }
            let calls = carillon_allocations_disarm()
            #expect(calls == 0, "heap calls in 1000 cycles: \(calls)")
        }
    }
}

/// The process callback's re-read rule (`JACKMIDIRereads`): a buffer read again after an
/// xrun, or left as it was by a late sender, is dropped, a new one never, and a steady cycle
/// never drops a clock at the same offset every period.
@Suite struct JACKMIDIRereadsTests {
    /// One call of the process callback: its server cycle, its events, the cycle when it ended; whether it was a repeat.
    static func call(_ guardian: inout JACKMIDIRereads, cycle: UInt32, frames: Int = 256, _ events: [(Int, [UInt8])],
                     endedIn end: UInt32? = nil) -> Bool {
        guardian.begin(cycle: cycle, frames: frames)
        for (offset, bytes) in events { bytes.withUnsafeBufferPointer { guardian.add(offset: offset, bytes: $0) } }
        let repeated = guardian.isRepeat()
        guardian.end(cycle: end ?? cycle)
        return repeated
    }

    static let noteOn: [(Int, [UInt8])] = [(10, [0x90, 60, 100])]

    @Test func theSameBufferInTheSameCycle_isARepeat() {
        var g = JACKMIDIRereads()
        #expect(!Self.call(&g, cycle: 1000, Self.noteOn))
        #expect(Self.call(&g, cycle: 1000, Self.noteOn))
        #expect(Self.call(&g, cycle: 1000, Self.noteOn))   // and again
    }

    @Test func theSameBufferAfterMissedCycles_orAfterAnOverrun_isARepeat() {
        var g = JACKMIDIRereads()
        #expect(!Self.call(&g, cycle: 1000, Self.noteOn))
        #expect(Self.call(&g, cycle: 1000 + 3 * 256, Self.noteOn))              // cycles missed between
        var h = JACKMIDIRereads()
        #expect(!Self.call(&h, cycle: 1000, Self.noteOn, endedIn: 1256))       // ran into the next cycle
        #expect(Self.call(&h, cycle: 1256, Self.noteOn))
    }

    @Test func steadyCycles_neverDrop_identicalClocks() {
        // A clock master whose clocks fall at the same offset every period (117.1875 bpm at 1024 frames, 48 kHz).
        var g = JACKMIDIRereads()
        var cycle: UInt32 = UInt32.max - 2048   // across the frame counter's wrap too
        for _ in 0..<8 {
            #expect(!Self.call(&g, cycle: cycle, frames: 1024, [(5, [0xF8])]))
            cycle &+= 1024
        }
    }

    /// A late sender (stopped, or starved of the CPU) leaves its buffer as it was while
    /// Carillon runs on in consecutive cycles (seen in scripts/test-jack: one note-on read in
    /// three cycles in a row, and recorded three times).
    @Test func theSameNotesInConsecutiveCycles_areARepeat_butNotWhenTheyChange() {
        var g = JACKMIDIRereads()
        #expect(!Self.call(&g, cycle: 1000, Self.noteOn))
        #expect(Self.call(&g, cycle: 1256, Self.noteOn))
        #expect(Self.call(&g, cycle: 1512, Self.noteOn))
        #expect(!Self.call(&g, cycle: 1768, [(10, [0x80, 60, 0])]))
        // A clock with a note is not real-time only: the pair again is a repeat.
        let mixed: [(Int, [UInt8])] = [(5, [0xF8]), (10, [0x90, 60, 100])]
        #expect(!Self.call(&g, cycle: 2024, mixed))
        #expect(Self.call(&g, cycle: 2280, mixed))
        // A clock alone after missed cycles still is.
        #expect(!Self.call(&g, cycle: 2536, [(5, [0xF8])]))
        #expect(Self.call(&g, cycle: 2536 + 3 * 256, [(5, [0xF8])]))
    }

    @Test func anyDifference_isNew() {
        var g = JACKMIDIRereads()
        #expect(!Self.call(&g, cycle: 0, Self.noteOn))
        #expect(!Self.call(&g, cycle: 0, [(11, [0x90, 60, 100])]))                          // offset
        #expect(!Self.call(&g, cycle: 0, [(11, [0x90, 60, 101])]))                          // a byte
        #expect(!Self.call(&g, cycle: 0, [(11, [0x90, 60, 101]), (20, [0x80, 60, 0])]))     // one more
        #expect(!Self.call(&g, cycle: 0, [(11, [0x90, 60, 101])]))                          // one fewer
        #expect(!Self.call(&g, cycle: 0, [(11, [0xF0, 0x7E, 0xF7])]))                       // a length
        #expect(!Self.call(&g, cycle: 0, []))                                               // nothing to drop
        #expect(!Self.call(&g, cycle: 0, []))
    }

    @Test func aBufferTooLargeToKeep_isNeverCalledARepeat_andIsReadFromTheBuffer() {
        var g = JACKMIDIRereads()
        let many = (0..<(JACKMIDIRereads.maxEvents + 1)).map { ($0 % 256, [UInt8(0x90), 60, 100]) }
        #expect(!Self.call(&g, cycle: 0, many))
        #expect(!Self.call(&g, cycle: 0, many))
        #expect(!g.forEachKept { _, _ in Issue.record("nothing kept") })
    }

    /// What the callback passes on is the copy judged, event by event, in order.
    @Test func theKeptEvents_areTheCallsAsAdded() {
        var g = JACKMIDIRereads()
        let events: [(Int, [UInt8])] = [(0, [0xEF, 0x2F, 4]), (84, [0x80, 41, 15]), (84, [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7]), (200, [0xF8])]
        _ = Self.call(&g, cycle: 0, events)
        var kept: [(Int, [UInt8])] = []
        #expect(g.forEachKept { kept.append(($0, Array($1))) })
        #expect(kept.map(\.0) == events.map(\.0))
        #expect(kept.map(\.1) == events.map(\.1))
        _ = Self.call(&g, cycle: 256, [])
        #expect(g.forEachKept { _, _ in Issue.record("an empty call keeps nothing") })
    }

    @Test func noAllocation() {
        var g = JACKMIDIRereads()
        let bytes: [UInt8] = [0x90, 60, 100]
        var repeats = 0
        let counted = bytes.withUnsafeBufferPointer { b in
            g.begin(cycle: 99, frames: 256); _ = g.isRepeat(); g.end(cycle: 99)   // steady state first (debug builds)
            carillon_allocations_arm()
            for c in 0..<64 {   // each cycle's buffer read twice
                g.begin(cycle: UInt32(c / 2 * 256), frames: 256)
                g.add(offset: c / 2, bytes: b)
                if g.isRepeat() { repeats += 1 }
                g.end(cycle: UInt32(c / 2 * 256))
            }
            return carillon_allocations_disarm()
        }
        #expect(counted == 0)
        #expect(repeats == 32)
    }
}
