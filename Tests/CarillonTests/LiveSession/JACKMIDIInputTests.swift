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
