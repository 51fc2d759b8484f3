import Engine
import Testing

/// `framesUntilNextEvent` and `skip`: jumping the sample clock over a silent
/// stretch without rendering it.
@Suite struct RendererSkipTests {
    func makeRenderer() -> Renderer {
        let renderer = Renderer(instrument: FakeInstrument())
        renderer.prepare(sampleRate: 48_000, maxFrames: 256)
        return renderer
    }

    @Test func framesUntilNextEvent_countsToTheNextScoreEvent_thenToThePiecesEnd() {
        let renderer = makeRenderer()
        renderer.schedule(Score(events: [
            .init(seconds: 0, message: .noteOn(60, velocity: 100, channel: 0)),
            .init(seconds: 0.01, message: .noteOff(60, channel: 0)),
            .init(seconds: 1, message: .noteOn(62, velocity: 100, channel: 0)),
        ], duration: 3))
        _ = renderAll(renderer, frames: 1024, block: 256)
        #expect(renderer.framesUntilNextEvent == 48_000 - 1024)
        renderer.skip(frames: 48_000 - 1024)
        #expect(renderer.sampleTime == 48_000)
        _ = renderAll(renderer, frames: 256, block: 256)
        #expect(renderer.framesUntilNextEvent == 3 * 48_000 - 48_256)   // no event left: the piece's end
    }

    @Test func skip_keepsTheNextEventOnItsFrame() {
        let skipped = makeRenderer(), rendered = makeRenderer()
        let score = Score(events: [
            .init(seconds: 0, message: .noteOn(60, velocity: 100, channel: 0)),
            .init(seconds: 0.001, message: .noteOff(60, channel: 0)),
            .init(seconds: 2.345678, message: .noteOn(64, velocity: 127, channel: 0)),
        ], duration: 3)
        skipped.schedule(score); rendered.schedule(score)
        _ = renderAll(skipped, frames: 256, block: 256)
        let jump = skipped.framesUntilNextEvent - 300
        skipped.skip(frames: jump)
        let after = renderAll(skipped, frames: 1024, block: 256)
        let whole = renderAll(rendered, frames: 256 + Int(jump) + 1024, block: 256)
        let expected = Int((2.345678 * 48_000).rounded())
        #expect(onset(whole, after: 1000) == expected)
        #expect(onset(after).map { $0 + 256 + Int(jump) } == expected)
    }

    @Test func aQueuedMessage_meansNoSkip() {
        let renderer = makeRenderer()
        renderer.schedule(Score(events: [.init(seconds: 2, message: .noteOn(60, velocity: 100, channel: 0))], duration: 3))
        #expect(renderer.framesUntilNextEvent == 96_000)
        renderer.events.push(TimedMessage(frame: 10, message: .noteOn(61, velocity: 100, channel: 1)))
        #expect(renderer.framesUntilNextEvent == 0)
    }
}
