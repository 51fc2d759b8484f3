import Testing
import CAllocationCounter
@testable import Engine

/// SysEx reaches the instrument, from the event queue's byte ring and from a
/// scheduled score's pool, in order with channel messages, without allocating.
@Suite struct SysExTests {
    static let gsDrums: [UInt8] = [0x41, 0x10, 0x42, 0x12, 0x40, 0x1A, 0x15, 0x02, 0x0F]
    static let gmOn: [UInt8] = [0x7E, 0x7F, 0x09, 0x01]

    func make(block: Int = 256, sysExCapacity: Int = 8192) -> (Renderer, RecordingInstrument) {
        let instrument = RecordingInstrument()
        let renderer = Renderer(instrument: instrument)
        renderer.prepare(sampleRate: 48_000, maxFrames: block)
        return (renderer, instrument)
    }

    func push(_ queue: EventQueue, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { queue.pushSysEx($0) }
    }

    @Test func queue_deliversBytesInOrderWithChannelMessages() {
        let (renderer, instrument) = make()
        renderer.events.push(.now(.programChange(5, channel: 10)))
        #expect(push(renderer.events, Self.gsDrums))
        renderer.events.push(.now(.noteOn(38, velocity: 100, channel: 10)))
        #expect(push(renderer.events, Self.gmOn))
        _ = renderAll(renderer, frames: 256, block: 256)
        #expect(instrument.sysEx.map(\.bytes) == [Self.gsDrums, Self.gmOn])
        #expect(instrument.messages.map(\.message) == [.programChange(5, channel: 10), .noteOn(38, velocity: 100, channel: 10)])
        #expect(renderer.events.count == 0)
    }

    @Test func byteRing_wrapsKeepingEachMessageWhole_andRefusesWhenFull() {
        let queue = EventQueue(capacity: 64, sysExCapacity: 128)
        var expected: [[UInt8]] = []
        var received: [[UInt8]] = []
        for round in 0..<50 {
            let message = (0..<(5 + round % 23)).map { UInt8(($0 + round) & 0x7F) }
            #expect(push(queue, message))
            expected.append(message)
            if round % 2 == 1 {   // drain now and then, so the ring wraps at many offsets
                while let e = queue.peek() {
                    #expect(e.message.isSysEx)
                    received.append(Array(queue.headSysEx()!))
                    queue.pop()
                }
            }
        }
        while queue.peek() != nil { received.append(Array(queue.headSysEx()!)); queue.pop() }
        #expect(received == expected)
        #expect(queue.overflowCount == 0)
        // Full: three 30-byte messages do not fit 64 bytes; too long never does.
        let small = EventQueue(capacity: 64, sysExCapacity: 64)
        let thirty = [UInt8](repeating: 1, count: 30)
        #expect(push(small, thirty) && push(small, thirty))
        #expect(!push(small, thirty))
        #expect(!push(small, [UInt8](repeating: 1, count: 65)))
        #expect(small.overflowCount == 2)
    }

    @Test func score_deliversItsSysExAtItsFrame() {
        let (renderer, instrument) = make()
        var score = Score(events: [
            .init(seconds: 0, message: .sysExPlaceholder(0)),
            .init(seconds: 0.01, message: .noteOn(60, velocity: 90, channel: 9)),
            .init(seconds: 0.02, message: .sysExPlaceholder(1)),
        ], duration: 0.05)
        score.sysExMessages = [Self.gmOn, Self.gsDrums]
        renderer.schedule(score)
        _ = renderAll(renderer, frames: 2_400, block: 256)
        #expect(instrument.sysEx.map(\.bytes) == [Self.gmOn, Self.gsDrums])
        #expect(instrument.sysEx.map(\.atFrame) == [0, 960])
        #expect(instrument.messages.map(\.atFrame) == [480])
    }

    @Test func sysExDelivery_allocatesNothing() {
        let (renderer, instrument) = make(block: 128)
        instrument.records = false
        var events: [Score.Event] = []
        for i in 0..<500 {
            events.append(.init(seconds: Double(i) * 0.002, message: .sysExPlaceholder(i % 2)))
            events.append(.init(seconds: Double(i) * 0.002 + 0.001, message: .noteOn(60, velocity: 90, channel: 0)))
        }
        var score = Score(events: events)
        score.sysExMessages = [Self.gmOn, Self.gsDrums]
        renderer.schedule(score)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 256)
        defer { output.deallocate() }
        renderer.render(frames: 128, into: output)
        let before = instrument.sysExBytesSeen
        carillon_allocations_arm()
        for block in 1..<800 {
            if block % 3 == 0 { _ = Self.gsDrums.withUnsafeBufferPointer { renderer.events.pushSysEx($0) } }
            renderer.render(frames: 128, into: output)
        }
        let calls = carillon_allocations_disarm()
        #expect(calls == 0, "heap calls in 800 blocks: \(calls)")
        #expect(instrument.sysExBytesSeen - before > 500 * 4)
    }
}
