import Testing
import Foundation
import Engine
import CAllocationCounter

@Suite struct RendererTests {
    func makeRenderer(_ fake: FakeInstrument = FakeInstrument(), block: Int = 256) -> Renderer {
        let renderer = Renderer(instrument: fake)
        renderer.prepare(sampleRate: 48_000, maxFrames: block)
        return renderer
    }

    @Test func scoreEvents_applyAtTheirExactFrame() {
        let renderer = makeRenderer()
        // 1.0 s = frame 48000: not a multiple of the 256-frame block.
        let times = [0.0, 0.0104, 0.5, 1.0, 1.7777]
        var events: [Score.Event] = []
        for (i, t) in times.enumerated() {
            events.append(.init(seconds: t, message: .noteOn(60, velocity: 127, channel: 0)))
            events.append(.init(seconds: t + 0.002, message: .noteOff(60, channel: 0)))
            _ = i
        }
        renderer.schedule(Score(events: events))
        let out = renderAll(renderer, frames: 96_000, block: 256)
        var start = 0
        for t in times {
            let expected = Int((t * 48_000).rounded())
            let found = onset(out, after: start)
            #expect(found == expected)
            start = expected + 200
        }
    }

    /// A control move timed for frame 300 (`ParameterStore.set(_:_:atFrame:)`)
    /// changes the mix from the start of the block 300 falls in (256), as a
    /// take's render applies it, and nothing before (heap calls: the test below).
    @Test func timedParameterChange_landsAtItsBlocksStart() {
        func render(timed: Bool) -> [Float] {
            let renderer = makeRenderer()
            renderer.events.push(TimedMessage(frame: 0, message: .noteOn(60, velocity: 127, channel: 0)))
            if timed { renderer.parameters.set(.masterGain, -20, atFrame: 300) }
            return renderAll(renderer, frames: 1024, block: 256)
        }
        let plain = render(timed: false), moved = render(timed: true)
        let firstDifference = (0..<1024).first { plain[2 * $0] != moved[2 * $0] }
        #expect(firstDifference == 256)
        #expect(abs(moved[2 * 1000] - plain[2 * 1000] * 0.1) < 1e-5)   // ramped to -20 dB by then
    }

    @Test func queuedEvents_applyAtTheirFrameInsideTheBlock() {
        let renderer = makeRenderer()
        renderer.events.push(TimedMessage(frame: 300, message: .noteOn(60, velocity: 127, channel: 2)))
        renderer.events.push(TimedMessage(frame: 301, message: .noteOff(60, channel: 2)))
        renderer.events.push(TimedMessage(frame: 1000, message: .noteOn(61, velocity: 127, channel: 2)))
        let out = renderAll(renderer, frames: 2048, block: 256)
        #expect(onset(out) == 300)
        #expect(out[2 * 301] == 0)
        #expect(onset(out, after: 301) == 1000)
        #expect(renderer.events.count == 0)
    }

    @Test func lateQueuedEvent_appliesAtBlockStart() {
        let renderer = makeRenderer()
        _ = renderAll(renderer, frames: 512, block: 256)
        renderer.events.push(.now(.noteOn(60, velocity: 127, channel: 0)))
        let out = renderAll(renderer, frames: 256, block: 256)
        #expect(onset(out) == 0)
    }

    @Test func isScoreFinished_afterLastEventAndDuration() {
        let renderer = makeRenderer()
        renderer.schedule(Score(events: [.init(seconds: 0.01, message: .noteOn(60, velocity: 1, channel: 0))], duration: 0.1))
        _ = renderAll(renderer, frames: 4_608, block: 256)   // 0.096 s
        #expect(!renderer.isScoreFinished)
        _ = renderAll(renderer, frames: 256, block: 256)
        #expect(renderer.isScoreFinished)
    }

    /// Every strip kind sounding (channels with their own effects, the
    /// oscillator, the tone, two tracks), stems captured: still no heap call.
    @Test func renderLoop_allocatesNothing_withFakeInstrument() {
        let fake = FakeInstrument(effectsGroups: 16)
        fake.recordsMessages = false
        fake.reverbLevel = 0.1
        let renderer = Renderer(instrument: fake, tracks: [ConstantTrack(name: "a", left: 0.1, right: 0.2),
                                                           ConstantTrack(name: "b", left: 0.3, right: 0)])
        renderer.capturesStems = true
        renderer.route(channel: 14, to: .oscillator)
        renderer.prepare(sampleRate: 48_000, maxFrames: 128)
        renderer.parameters.set(.tone(.enabled), 1)
        renderer.parameters.set(.strip(.track(1), .solo), 1)
        renderer.parameters.set(.strip(.channel(2), .solo), 1)
        renderer.parameters.set(.strip(.oscillator, .solo), 1)
        var events: [Score.Event] = []
        for i in 0..<2_000 {
            events.append(.init(seconds: Double(i) * 0.001, message: .noteOn(UInt8(i % 128), velocity: 100, channel: i % 16)))
            events.append(.init(seconds: Double(i) * 0.001 + 0.0005, message: .noteOff(UInt8(i % 128), channel: i % 16)))
        }
        renderer.schedule(Score(events: events))
        renderer.parameters.set(.strip(.channel(3), .gain), 20 * log10(0.5))
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 256)
        defer { output.deallocate() }
        // Steady state: a first block may instantiate Swift runtime metadata (once per process, debug builds).
        renderer.events.push(.now(.controlChange(7, value: 100, channel: 1)))
        renderer.render(frames: 128, into: output)
        let oscillator = renderer.meters.index(of: .oscillator)!, trackB = renderer.meters.index(of: .track(1))!
        var stemsSounded = false
        carillon_allocations_arm()
        for block in 1..<1_000 {
            if block % 10 == 0 { renderer.events.push(.now(.controlChange(7, value: 100, channel: 1))) }
            if block % 10 == 5 { renderer.parameters.set(.strip(.track(0), .pan), Double(block % 3) - 1) }
            // A control move timed for the next block (live's input thread pushes it; stored at that block's start).
            if block % 10 == 7 { renderer.parameters.set(.strip(.channel(1), .pan), Double(block % 3) - 1, atFrame: UInt64(block + 1) * 128 + 5) }
            renderer.render(frames: 128, into: output)
            if block == 500 { stemsSounded = renderer.stem(oscillator) != nil && renderer.stem(trackB) != nil }
        }
        let calls = carillon_allocations_disarm()
        #expect(calls == 0, "heap calls in 1000 blocks: \(calls)")
        #expect(stemsSounded)
    }

    @Test func allocationCounter_countsAnAllocation() {
        carillon_allocations_arm()
        let array = [Int](repeating: 1, count: Int.random(in: 100...200))
        let calls = carillon_allocations_disarm()
        #expect(array.count >= 100)
        #expect(calls >= 1)
    }
}

@Suite struct TailTrackerTests {
    @Test func stopsAfterHoldOfSilence() {
        var tracker = TailTracker(policy: TailPolicy(silenceThreshold: -60, silenceHold: 0.01, maxTail: 10), sampleRate: 1000)
        do { let done = tracker.observe(peak: 0.5, frames: 5); #expect(!done) }
        do { let done = tracker.observe(peak: 0.0001, frames: 5); #expect(!done) }
        do { let done = tracker.observe(peak: 0.0001, frames: 5); #expect(done) }
    }

    @Test func loudBlock_restartsTheHold() {
        var tracker = TailTracker(policy: TailPolicy(silenceThreshold: -60, silenceHold: 0.01, maxTail: 10), sampleRate: 1000)
        do { let done = tracker.observe(peak: 0, frames: 8); #expect(!done) }
        do { let done = tracker.observe(peak: 0.01, frames: 8); #expect(!done) }
        do { let done = tracker.observe(peak: 0, frames: 8); #expect(!done) }
        do { let done = tracker.observe(peak: 0, frames: 8); #expect(done) }
    }

    @Test func stopsAtMaxTail_evenWhenLoud() {
        var tracker = TailTracker(policy: TailPolicy(silenceThreshold: -60, silenceHold: 0.5, maxTail: 0.02), sampleRate: 1000)
        do { let done = tracker.observe(peak: 1, frames: 10); #expect(!done) }
        #expect(tracker.remainingFrames == 10)
        do { let done = tracker.observe(peak: 1, frames: 10); #expect(done) }
    }
}
