import ClockOutRig
import Engine
import Hosting
import JACK
import MIDI
import Parameters
import Sync
import Testing
@testable import LiveSession

/// `live -a jack --transport-master` without a server: the BBT the timebase
/// callback gives is read from the session's transport piece (120 bpm in 4/4,
/// scaled by `transport.tempo`), and counts the same beats as the MIDI clock
/// `--clock-out` sends from the same transport.
@Suite struct LiveTransportMasterTests {
    static let rate = 48_000
    static let block = 480

    /// Live's transport piece (`LiveOutput.loadTransportPiece`): empty, a day long, at 120 bpm.
    struct Session {
        var rig = ClockOutRig(score: Score(events: [], duration: 24 * 3600), beats: BeatMap(beatsPerMinute: 120),
                              sampleRate: Double(LiveTransportMasterTests.rate), block: LiveTransportMasterTests.block)
        let routing: ParameterRouting
        var renderer: Renderer { rig.renderer }
        /// The clock out, as `ClockOutTap` collects it after each block.
        var sent: [ClockEvent] { rig.events }

        init() {
            routing = ParameterRouting(parameters: rig.renderer.parameters, events: nil, transport: rig.renderer.transport, pieceTempo: 120)
        }

        mutating func play(seconds: Double) { rig.render(seconds: seconds) }

        /// What a JACK client reads at the frame the leader puts the transport at for where the piece is now.
        var bbtNow: JACKTransportPosition.BBT {
            let transport = renderer.transport
            let frame = JACKTransportLeading.frame(ofSeconds: transport.position, scale: transport.tempoScale,
                                                   rate: Double(LiveTransportMasterTests.rate))
            return JACKTransportLeading.bbt(atFrame: frame, sampleRate: LiveTransportMasterTests.rate,
                                            beats: BeatMap(beatsPerMinute: 120), tempoScale: transport.tempoScale)
        }

        /// Beats from the top by the BBT (4/4).
        static func beats(_ b: JACKTransportPosition.BBT) -> Double {
            Double(b.bar - 1) * b.beatsPerBar + Double(b.beat - 1) + Double(b.tick) / b.ticksPerBeat
        }
    }

    @Test func bbtFollowsTransportTempo_andCountsTheClockOutsBeats() {
        var session = Session()
        session.play(seconds: 2)
        // 2 s at 120 bpm: 4 beats, the top of bar 2.
        var bbt = session.bbtNow
        #expect((bbt.bar, bbt.beat) == (2, 1))
        #expect(abs(bbt.beatsPerMinute - 120) < 1e-9)
        #expect(bbt.beatsPerBar == 4 && bbt.beatType == 4)

        // The player's tempo fader to 90 bpm (transport.tempo): the BBT's tempo is the control's.
        session.routing.apply(ParameterChange(.transport(.tempo), 90))
        session.play(seconds: 2)
        bbt = session.bbtNow
        #expect(abs(bbt.beatsPerMinute - 90) < 1e-6, "\(bbt)")
        // 2 s more at 90 bpm: 3 beats, 7 in all → bar 2, beat 4.
        #expect((bbt.bar, bbt.beat) == (2, 4), "\(bbt)")
        #expect(bbt.tick <= 1 || bbt.tick >= 1919, "\(bbt)")

        // The clock out, from the same transport: 24 clocks a beat, as many as the BBT's beats.
        let clockCount = session.sent.filter { $0.kind == .clock }.count
        #expect(session.sent.first?.kind == .start)
        #expect(abs(Double(clockCount) - 24 * Session.beats(bbt)) <= 1, "\(clockCount) clocks for \(Session.beats(bbt)) beats")
        #expect(clockCount == 168, "4 beats at 120 bpm, then 3 at 90: 7 × 24")
    }

    @Test func tempoChange_doesNotMoveTheBar() {
        // A tempo change relocates the JACK frame (frame = position ÷ scale), never the bar it reads.
        var session = Session()
        session.play(seconds: 3)    // 6 beats: bar 2, beat 3
        let before = session.bbtNow
        session.routing.apply(ParameterChange(.transport(.tempo), 150))
        let after = session.bbtNow
        #expect((before.bar, before.beat) == (2, 3))
        #expect((after.bar, after.beat) == (before.bar, before.beat))
        #expect(abs(after.tick - before.tick) <= 1)
        #expect(abs(after.beatsPerMinute - 150) < 1e-6)
    }
}
