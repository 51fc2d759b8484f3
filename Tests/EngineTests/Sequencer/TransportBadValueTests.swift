import Testing
import Engine

/// Bad values given to the transport while rendering runs: NaN, ±inf, huge,
/// negative times and scales are clamped or refused at the API, and the
/// render thread (which turns times into sample frames) never traps.
@Suite struct TransportBadValueTests {
    static let rate = 48_000.0
    static let piece = Score(events: [
        .init(seconds: 0.1, message: .noteOn(60, velocity: 127, channel: 0)),
        .init(seconds: 0.4, message: .noteOff(60, channel: 0)),
    ], duration: 1.0)

    func makeRenderer() -> Renderer {
        let renderer = Renderer(instrument: FakeInstrument())
        renderer.prepare(sampleRate: Self.rate, maxFrames: 240)
        renderer.schedule(Self.piece)
        return renderer
    }

    @Test func seek_nan_isRefusedAndCounted_thePositionGoesOn() {
        let r = makeRenderer()
        _ = renderAll(r, frames: 24_000, block: 240)       // 0.5 s
        r.transport.seek(to: .nan)
        _ = renderAll(r, frames: 2_400, block: 240)
        #expect(r.transport.refusedCommands == 1)
        #expect(abs(r.transport.position - 0.55) < 1e-9)
    }

    @Test(arguments: [Double.infinity, 1e300, Double.greatestFiniteMagnitude, 5])
    func seek_pastTheEnd_clampsToTheEnd(seconds: Double) {
        let r = makeRenderer()
        r.transport.seek(to: seconds)
        _ = renderAll(r, frames: 480, block: 240)
        #expect(r.isScoreFinished)
        #expect(r.transport.position == 1.0)
        #expect(r.transport.refusedCommands == 0)
    }

    @Test(arguments: [-Double.infinity, -1e300, -2])
    func seek_negative_goesToTheStart(seconds: Double) {
        let r = makeRenderer()
        _ = renderAll(r, frames: 24_000, block: 240)
        r.transport.seek(to: seconds)
        let out = renderAll(r, frames: 9_600, block: 240)
        #expect(onset(out) == 4_800)   // note 60 at 0.1 s again
        #expect(r.transport.refusedCommands == 0)
    }

    @Test func setLoop_infiniteOrHugeEnd_loopsToThePiecesEnd() {
        for end in [Double.infinity, 1e300, 7] {
            let r = makeRenderer()
            r.transport.setLoop(true, start: 0.5, end: end)
            #expect(r.transport.loopRegion.start == 0.5)
            _ = renderAll(r, frames: 2 * 48_000, block: 240)
            // 0 → 1.0, then 0.5 → 1.0: wraps at 1.0 and 1.5 s (the one at 2.0 s is the next block's).
            #expect(r.transport.loopWraps == 2, "end \(end)")
            #expect(r.transport.refusedCommands == 0)
        }
        let r = makeRenderer()
        r.transport.setLoop(true, start: 0, end: .infinity)
        #expect(r.transport.loopRegion.end == nil)
    }

    @Test func setLoop_negativeStart_clampsToZero() {
        let r = makeRenderer()
        r.transport.setLoop(true, start: -.infinity, end: 0.5)
        #expect(r.transport.loopRegion.start == 0 && r.transport.loopRegion.end == 0.5)
        r.transport.setLoop(true, start: -3, end: 0.5)
        #expect(r.transport.loopRegion.start == 0)
        _ = renderAll(r, frames: 48_000, block: 240)
        #expect(r.transport.loopWraps == 1)   // at 0.5 s (the one at 1.0 s is the next block's)
        #expect(r.transport.refusedCommands == 0)
    }

    @Test func setLoop_hugeStart_isClamped_andTheLoopIsIgnored() {
        let r = makeRenderer()
        r.transport.setLoop(true, start: 1e300)
        #expect(r.transport.loopRegion.start == Transport.maximumSeconds)
        _ = renderAll(r, frames: 48_000 + 240, block: 240)
        #expect(r.transport.loopWraps == 0)
        #expect(r.isScoreFinished)
    }

    @Test func setLoop_badRegion_isRefusedAndCounted_nothingChanges() {
        let r = makeRenderer()
        r.transport.setLoop(true, start: 0.2, end: 0.6)
        let bad: [(Double, Double?)] = [
            (.nan, nil), (.nan, 0.5), (0.1, .nan), (.infinity, nil), (.infinity, .infinity),
            (0.8, 0.3), (0.5, 0.5), (0.5, -1), (0, -.infinity), (0, 0),
        ]
        for (start, end) in bad { r.transport.setLoop(false, start: start, end: end) }
        #expect(r.transport.refusedCommands == bad.count)
        #expect(r.transport.isLooping)
        #expect(r.transport.loopRegion.start == 0.2 && r.transport.loopRegion.end == 0.6)
        _ = renderAll(r, frames: 48_000, block: 240)
        #expect(r.transport.loopWraps == 1)   // at 0.6 s (the one at 1.0 s is the next block's)
    }

    @Test func setTempoScale_clampsInfinitiesAndZero_refusesNaN() {
        let t = Transport()
        t.setTempoScale(2)
        t.setTempoScale(.nan)
        #expect(t.tempoScale == 2)
        #expect(t.refusedCommands == 1)
        let cases: [(Double, Double)] = [(.infinity, 20), (1e300, 20), (-.infinity, 0.05), (0, 0.05), (-4, 0.05),
                                         (.leastNonzeroMagnitude, 0.05)]
        for (given, stored) in cases {
            t.setTempoScale(given)
            #expect(t.tempoScale == stored, "\(given)")
        }
        #expect(t.refusedCommands == 1)
    }

    @Test func tempoScaleExtremes_renderWithoutATrap() {
        let r = makeRenderer()
        r.transport.setTempoScale(.infinity)
        _ = renderAll(r, frames: 2_400, block: 240)   // 20 × 0.05 s: the whole piece
        #expect(r.isScoreFinished)
        r.transport.setTempoScale(-.infinity)
        r.transport.seek(to: 0)
        _ = renderAll(r, frames: 48_000, block: 240)  // 0.05 × 1 s of piece
        #expect(abs(r.transport.position - 0.05) < 1e-6)
    }

    /// A score time of +inf (or past 2^62 frames) is 2^62 score frames; at the
    /// slowest tempo scale that is 20 × 2^62 sample frames, past UInt64: the
    /// conversion saturates instead of trapping.
    @Test(arguments: [Double.infinity, 1e300, 1e14])
    func scoreTimeAtInfinity_atTheSlowestTempoScale_rendersWithoutATrap(seconds: Double) {
        let renderer = Renderer(instrument: FakeInstrument())
        renderer.prepare(sampleRate: Self.rate, maxFrames: 240)
        renderer.schedule(Score(events: [
            .init(seconds: 0.01, message: .noteOn(60, velocity: 127, channel: 0)),
            .init(seconds: seconds, message: .noteOff(60, channel: 0)),
        ], duration: seconds))
        renderer.transport.setTempoScale(0.05)
        let out = renderAll(renderer, frames: 48_000, block: 240)
        #expect(onset(out) == 9_600)   // 0.01 s of piece at 0.05: 0.2 s
        #expect(!renderer.isScoreFinished)
    }
}
