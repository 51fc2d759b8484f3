import Glibc
import MIDI
import Synchronization
import Testing
import Threads

@testable import ALSA

private let hasSequencer = access("/dev/snd/seq", F_OK) == 0

/// Collects what a client's input thread reports.
private final class Inbox: Sendable {
    let events = Mutex<[SequencerEvent]>([])
    func append(_ e: SequencerEvent) { events.withLock { $0.append(e) } }
    var snapshot: [SequencerEvent] { events.withLock { $0 } }

    /// Waits (up to `seconds`) until `done` holds for what arrived.
    func wait(seconds: Double = 5, until done: ([SequencerEvent]) -> Bool) -> [SequencerEvent] {
        for _ in 0..<Int(seconds * 100) {
            let now = snapshot
            if done(now) { return now }
            usleep(10_000)
        }
        return snapshot
    }
}

/// Runs only where the kernel has a sequencer: inside the ALSA VM
/// (`scripts/alsa-vm -- .build-alsa/debug/CarillonPackageTests.xctest --testing-library swift-testing --filter SequencerClientTests`).
@Suite(.enabled(if: hasSequencer, "no ALSA sequencer here (run inside the ALSA VM)"), .serialized)
struct SequencerClientTests {
    static let everyKind: [MIDIMessage] = [
        .noteOn(60, velocity: 100, channel: 0), .noteOff(60, velocity: 12, channel: 0),
        .polyPressure(61, pressure: 5, channel: 15), .cc(7, value: 99, channel: 3), .programChange(42, channel: 9),
        .channelPressure(77, channel: 1), .pitchBend(0, channel: 2), .pitchBend(8192, channel: 2),
        .pitchBend(16383, channel: 2), .songPosition(300), .songSelect(4), .timecodeQuarterFrame(0x25),
        .tuneRequest, .start, .timingClock, .stop, .continue, .activeSensing, .systemReset,
        .sysEx([0x7E, 0x7F, 0x09, 0x01]), .sysEx(Array(repeating: 0x55, count: 3000)),
    ]

    @Test func messages_throughTheKernel_arriveUnchanged() throws {
        let rx = try SequencerClient(name: "carillon-rx")
        let tx = try SequencerClient(name: "carillon-tx")
        let txPort = SeqAddress(client: tx.clientID, port: Int(try tx.makeOutputPort()))
        let inbox = Inbox()
        try rx.start { inbox.append($0) }
        #expect(try rx.connect(source: "CARILLON-TX").map(\.address) == [txPort])
        for m in Self.everyKind { try tx.send(m) }
        let got = inbox.wait { $0.compactMap(\.midi).count >= Self.everyKind.count }
        #expect(got.compactMap(\.midi).map(\.message) == Self.everyKind)
        #expect(got.compactMap(\.midi).allSatisfy { $0.source == txPort })
        #expect(rx.inputOverruns == 0)
    }

    @Test func clientExit_releasesHeldNotesAndPedal() throws {
        let rx = try SequencerClient(name: "carillon-rx")
        let inbox = Inbox()
        try rx.start { inbox.append($0) }
        var tx: SequencerClient? = try SequencerClient(name: "carillon-tx")
        let txPort = SeqAddress(client: tx!.clientID, port: Int(try tx!.makeOutputPort()))
        try rx.connect(txPort)
        try tx!.send(.cc(64, value: 127, channel: 0))
        try tx!.send(.noteOn(60, velocity: 100, channel: 0))
        try tx!.send(.noteOn(64, velocity: 100, channel: 0))
        try tx!.send(.noteOff(64, channel: 0))
        _ = inbox.wait { $0.compactMap(\.midi).count == 4 }
        tx = nil  // closes the client: CLIENT_EXIT / PORT_EXIT / PORT_UNSUBSCRIBED
        func releases(_ events: [SequencerEvent]) -> [MIDIMessage] {
            events.compactMap { e -> MIDIMessage? in if case .release(let m, _) = e { m } else { nil } }
        }
        let got = inbox.wait { releases($0).count >= 2 }
        let released = releases(got)
        #expect(released == [MIDIMessage.noteOff(60, channel: 0), .cc(64, value: 0, channel: 0)])
        #expect(got.contains(SequencerEvent.unsubscribed(txPort)))
    }

    @Test func connect_unknownName_listsCandidates() throws {
        let rx = try SequencerClient(name: "carillon-rx")
        #expect {
            try rx.connect(source: "no-such-keyboard")
        } throws: { error in
            guard let e = error as? ALSAError, case .noMatchingSource(let spec, let candidates) = e.kind else { return false }
            return spec == "no-such-keyboard" && candidates.contains { $0.hasPrefix("14:0 'Midi Through'") }
        }
    }

    @Test func autoconnect_picksUpAPortThatAppearsLater() throws {
        let rx = try SequencerClient(name: "carillon-rx")
        let inbox = Inbox()
        try rx.setAutoconnect(.named("late-comer"))
        try rx.start { inbox.append($0) }
        let late = try SequencerClient(name: "late-comer")
        let port = SeqAddress(client: late.clientID, port: Int(try late.makeOutputPort()))
        let got = inbox.wait { $0.contains { if case .autoconnected(let p) = $0 { p.address == port } else { false } } }
        #expect(got.contains { if case .autoconnected(let p) = $0 { p.address == port } else { false } })
        try late.send(.noteOn(72, velocity: 1, channel: 0))
        func isNote(_ e: SequencerEvent) -> Bool { e.midi.map { $0 == (.noteOn(72, velocity: 1, channel: 0), port) } ?? false }
        #expect(inbox.wait { $0.contains(where: isNote) }.contains(where: isNote))
    }

    /// The kernel stamps each message as it reaches our port; the client turns the stamp
    /// into monotonic time: after the send began, and no later than the input thread had it.
    @Test func messages_carryTheirKernelArrivalStamp() throws {
        let rx = try SequencerClient(name: "carillon-rx")
        #expect(rx.arrivalStampingError == nil)
        let tx = try SequencerClient(name: "carillon-tx")
        let txPort = SeqAddress(client: tx.clientID, port: Int(try tx.makeOutputPort()))
        let handled = Mutex<[(arrival: UInt64?, handled: UInt64)]>([])
        try rx.start { e in
            if e.midi != nil { let now = monotonicNanoseconds(); handled.withLock { $0.append((e.arrival, now)) } }
        }
        try rx.connect(txPort)
        var sent: [UInt64] = []
        for i in 0..<10 {
            sent.append(monotonicNanoseconds())
            try tx.send(.noteOn(UInt7(60 + i), velocity: 100, channel: 0))
            usleep(20_000)
        }
        for _ in 0..<500 where handled.withLock({ $0.count }) < 10 { usleep(10_000) }
        let got = handled.withLock { $0 }
        try #require(got.count == 10)
        for (i, g) in got.enumerated() {
            let arrival = try #require(g.arrival, "message \(i) came without a stamp")
            // A late timer tick can make the queue time lag a little; never the other way.
            #expect(arrival + 5_000_000 >= sent[i], "message \(i) stamped before it was sent")
            #expect(arrival <= g.handled, "message \(i) stamped after the input thread had it")
        }
    }

    @Test func stop_returnsWithinAPollTimeout() throws {
        let rx = try SequencerClient(name: "carillon-rx")
        try rx.start { _ in }
        var t0 = timespec(), t1 = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t0)
        rx.stop()
        clock_gettime(CLOCK_MONOTONIC, &t1)
        let ms = Double(t1.tv_sec - t0.tv_sec) * 1000 + Double(t1.tv_nsec - t0.tv_nsec) / 1e6
        #expect(ms < 500)
    }
}
