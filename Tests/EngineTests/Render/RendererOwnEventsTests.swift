import Testing
import Engine
import CAllocationCounter

/// The render thread's own queue (JACK MIDI read in the process callback):
/// its events land at their frames, merged in time order with the other
/// thread's queue and the score, SysEx included, with no heap call.
@Suite struct RendererOwnEventsTests {
    func makeRenderer(_ fake: FakeInstrument = FakeInstrument(), block: Int = 256) -> Renderer {
        let renderer = Renderer(instrument: fake)
        renderer.prepare(sampleRate: 48_000, maxFrames: block)
        return renderer
    }

    @Test func ownEvents_applyAtTheirFrame_mergedWithTheOtherQueue() {
        let fake = FakeInstrument()
        let renderer = makeRenderer(fake)
        renderer.events.push(TimedMessage(frame: 100, message: .noteOn(60, velocity: 127, channel: 0)))
        renderer.events.push(TimedMessage(frame: 700, message: .noteOff(60, channel: 0)))
        renderer.ownEvents.push(TimedMessage(frame: 50, message: .noteOn(62, velocity: 127, channel: 1)))
        renderer.ownEvents.push(TimedMessage(frame: 400, message: .noteOff(62, channel: 1)))
        let out = renderAll(renderer, frames: 1024, block: 256)
        #expect(onset(out) == 50)
        // Time order across both queues: own 50, other 100, own 400, other 700.
        #expect(fake.received.map(\.data1) == [62, 60, 62, 60])
        #expect(renderer.events.count == 0 && renderer.ownEvents.count == 0)
    }

    @Test func ownEvent_pastTheBlock_waitsForItsBlock() {
        let renderer = makeRenderer()
        renderer.ownEvents.push(TimedMessage(frame: 600, message: .noteOn(60, velocity: 127, channel: 0)))
        let first = renderAll(renderer, frames: 512, block: 256)
        #expect(onset(first) == nil)
        #expect(renderer.ownEvents.count == 1)
        let second = renderAll(renderer, frames: 256, block: 256)
        #expect(onset(second) == 600 - 512)
    }

    @Test func ownSysEx_reachesTheInstrument() {
        let fake = FakeInstrument()
        let renderer = makeRenderer(fake)
        let gmOn: [UInt8] = [0x7E, 0x7F, 0x09, 0x01]
        gmOn.withUnsafeBufferPointer { _ = renderer.ownEvents.pushSysEx($0, frame: 10) }
        _ = renderAll(renderer, frames: 256, block: 256)
        #expect(fake.receivedSysEx == [gmOn])
    }

    @Test func pushAndRender_allocateNothing() {
        let fake = FakeInstrument()
        fake.recordsMessages = false
        let renderer = makeRenderer(fake, block: 128)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 256)
        defer { output.deallocate() }
        let sysEx: [UInt8] = [0x41, 0x10, 0x42, 0x12]
        // As JACK MIDI delivers them: wire bytes (a note-on, a program change, a whole SysEx).
        let wire: [UInt8] = [0x91, 64, 100, 0xC1, 5, 0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7]
        sysEx.withUnsafeBufferPointer { sysEx in
            wire.withUnsafeBufferPointer { wire in
                let base = wire.baseAddress!
                // As the JACK process callback does: this cycle's events at their frames, then render.
                func cycle(_ block: Int) {
                    let start = renderer.sampleTime
                    renderer.ownEvents.push(TimedMessage(frame: start + 17, message: .noteOn(UInt8(block % 128), velocity: 90, channel: 0)))
                    renderer.ownEvents.push(TimedMessage(frame: start + 90, message: .noteOff(UInt8(block % 128), channel: 0)))
                    if block % 50 == 0 { renderer.ownEvents.pushSysEx(sysEx, frame: start + 100) }
                    renderer.ownEvents.push(midiBytes: UnsafeBufferPointer(start: base, count: 3), frame: start + 40)
                    renderer.ownEvents.push(midiBytes: UnsafeBufferPointer(start: base + 3, count: 2), frame: start + 41)
                    if block % 50 == 25 { renderer.ownEvents.push(midiBytes: UnsafeBufferPointer(start: base + 5, count: 6), frame: start + 42) }
                    renderer.render(frames: 128, into: output)
                }
                // Steady state first: every kind of event once (runtime metadata, debug builds).
                for block in 0..<60 { cycle(block) }
                carillon_allocations_arm()
                for block in 60..<1_060 { cycle(block) }
            }
        }
        let calls = carillon_allocations_disarm()
        #expect(calls == 0, "heap calls in 1000 blocks: \(calls)")
    }

    @Test func midiBytes_becomeChannelMessagesAndSysEx_othersSkipped() {
        let fake = FakeInstrument()
        let renderer = makeRenderer(fake)
        let messages: [[UInt8]] = [[0x90, 60, 100], [0xC3, 7], [0xF8], [0xB0, 7], [0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7], [0xE2, 0, 64]]
        var results: [Bool] = []
        for (i, m) in messages.enumerated() {
            results.append(m.withUnsafeBufferPointer { renderer.ownEvents.push(midiBytes: $0, frame: UInt64(i)) })
        }
        // The clock byte is skipped (true, nothing queued); the CC cut short is refused.
        #expect(results == [true, true, true, false, true, true])
        _ = renderAll(renderer, frames: 256, block: 256)
        #expect(fake.received == [.noteOn(60, velocity: 100, channel: 0), .programChange(7, channel: 3),
                                  ChannelMessage(status: 0xE2, data1: 0, data2: 64)])
        #expect(fake.receivedSysEx == [[0x7E, 0x7F, 0x09, 0x01]])
    }
}
