import ALSA
import Engine
import Hosting
import MIDI
@testable import LiveSession
@testable import Sampling
import Sync
import Testing

/// `play --sync clock`: the master's Start takes effect at the frame its first clock was
/// stamped at (one period after its arrival, as `--timing stamped` places notes), not at
/// the next block — through the real sampler, with a fake master's clock stream.
@Suite struct ClockFollowingStartTests {
    static let rate = 48_000.0, period = 1024
    static let base: UInt64 = 7_000_000_000_000
    static func due(_ frame: UInt64) -> UInt64 { base + UInt64(Double(frame) / rate * 1e9) }

    @Test(arguments: [100, 500, 900])
    func start_firstNoteAtTheFrameItsClockWasStamped(arrivalOffset: Int) throws {
        let sampler = try Sampler(soundFont: timGM, sampleRate: Self.rate, options: SamplerOptions())
        let renderer = Renderer(instrument: sampler.instrument, eventCapacity: 64)
        renderer.prepare(sampleRate: Self.rate, maxFrames: Self.period)
        renderer.schedule(Score(events: [.init(seconds: 0, message: .noteOn(76, velocity: 127, channel: 9))], duration: 4))
        renderer.transport.stop()   // waiting for the master, as `startSync` leaves it
        let clock = OutputClock(sampleRate: Self.rate, periodFrames: Self.period)
        let follower = ClockFollowing(source: nil, sourceName: "test master", transport: renderer.transport,
                                      beats: BeatMap(beatsPerMinute: 120), clock: clock)
        let master = SeqAddress(client: 30, port: 0)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * Self.period)
        defer { output.deallocate() }
        var onset: Int?
        for k in 0..<12 {
            let start = renderer.sampleTime
            clock.publish(blockStart: start, at: Self.due(start))
            if k == 3 {
                // Start, then its first clock, arriving `arrivalOffset` frames into this block.
                let at = Self.due(start + UInt64(arrivalOffset))
                #expect(follower.take(.message(.start, source: master, arrival: at - 1_000_000)))
                #expect(follower.take(.message(.timingClock, source: master, arrival: at)))
            }
            renderer.render(frames: Self.period, into: output)
            if onset == nil, let i = (0..<Self.period).first(where: { abs(output[2 * $0]) > 1e-3 }) { onset = Int(start) + i }
        }
        // The clock's arrival one period on; the sampler's 64-frame grid (FluidSynth's block) rounds it.
        let expected = 3 * Self.period + arrivalOffset + Self.period
        let got = try #require(onset)
        #expect(got >= expected - 64 && got <= expected + 64, "onset \(got), stamped \(expected)")
    }
}
