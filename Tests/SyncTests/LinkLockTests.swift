import Engine
import Sync
import Testing

/// `--link`'s decisions without a network: tempo both ways, phase nudged or sought.
@Suite struct LinkLockTests {
    @Test func theSessionsTempo_setsTheScale_againstTheFilesTempo() {
        var lock = LinkLock(beats: BeatMap(beatsPerMinute: 100))
        let s = lock.step(linkBPM: 120, scale: 1, position: 0, phaseError: nil)
        #expect(s == LinkLock.Step(scale: 1.2, seek: nil, share: nil))
        // The session moves: followed, nothing shared back.
        let t = lock.step(linkBPM: 90, scale: 1.2, position: 1, phaseError: nil)
        #expect(t.scale == 0.9 && t.share == nil)
    }

    @Test func aTempoMovedHere_isShared_andTheSessionWinsATie() {
        var lock = LinkLock(beats: BeatMap(beatsPerMinute: 120))
        _ = lock.step(linkBPM: 120, scale: 1, position: 0, phaseError: nil)
        // transport.tempo → 133 bpm: scale 133/120.
        let s = lock.step(linkBPM: 120, scale: 133.0 / 120, position: 0.5, phaseError: nil)
        #expect(abs((s.share ?? 0) - 133) < 1e-9 && abs(s.scale - 133.0 / 120) < 1e-12)
        #expect(lock.step(linkBPM: 133, scale: s.scale, position: 0.6, phaseError: nil).share == nil)
        // Both moved between two steps: the session's tempo.
        let t = lock.step(linkBPM: 90, scale: 2, position: 0.7, phaseError: nil)
        #expect(t.share == nil && t.scale == 0.75)
    }

    @Test func aSmallPhaseError_isANudge_withinItsBound_aBigOneASeek() {
        var lock = LinkLock(beats: BeatMap(beatsPerMinute: 120))
        _ = lock.step(linkBPM: 120, scale: 1, position: 0, phaseError: nil)
        // 0.01 beat behind at 120 bpm: 0.01 × 60 / (120 × 0.5) = 1 % faster.
        let s = lock.step(linkBPM: 120, scale: 1, position: 1, phaseError: 0.01)
        #expect(abs(s.scale - 1.01) < 1e-12 && s.seek == nil)
        let n = lock.step(linkBPM: 120, scale: s.scale, position: 1, phaseError: -0.1)
        #expect(abs(n.scale - 0.95) < 1e-12)
        // 1 beat behind at 2 s (beat 4): to beat 5, 2.5 s.
        let t = lock.step(linkBPM: 120, scale: n.scale, position: 2, phaseError: 1)
        #expect(t.seek == 2.5 && t.scale == 1)
    }

    @Test func thePhaseError_countsOnlyThePhaseInTheBar() {
        #expect(LinkLock.phaseError(sessionBeat: 17.25, pieceBeat: 1) == 0.25)
        #expect(abs(LinkLock.phaseError(sessionBeat: 16.0, pieceBeat: 3.9) - 0.1) < 1e-12)
        #expect(abs(LinkLock.phaseError(sessionBeat: 3.9, pieceBeat: 8) - -0.1) < 1e-12)
        #expect(LinkLock.phaseError(sessionBeat: 2, pieceBeat: 0) == -2)
    }
}
