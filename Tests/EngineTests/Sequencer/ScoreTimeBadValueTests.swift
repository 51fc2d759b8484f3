import Engine
import MIDI
import Testing

/// A score built through the public API with times no file could give
/// (infinite, NaN, astronomically late) schedules and plays without a trap.
@Suite struct ScoreTimeBadValueTests {
    @Test(arguments: [Double.infinity, .nan, 1e300, -5])
    func schedule_badEventTimeAndDuration_rendersWithoutATrap(_ time: Double) {
        let renderer = Renderer(instrument: FakeInstrument())
        renderer.prepare(sampleRate: 48_000, maxFrames: 256)
        renderer.schedule(Score(events: [
            .init(seconds: 0, message: .noteOn(60, velocity: 100, channel: 0)),
            .init(seconds: time, message: .noteOff(60, channel: 0)),
        ], duration: time))
        renderer.transport.setLoop(true)
        renderer.transport.seek(to: time)
        let out = renderAll(renderer, frames: 1_024, block: 256)
        #expect(out.allSatisfy { $0.isFinite })
    }
}
