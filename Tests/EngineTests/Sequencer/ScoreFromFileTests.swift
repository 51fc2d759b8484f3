import Testing
import Engine
import MIDI

/// A Standard MIDI File turned into a score: SysEx divided across events
/// (F0 packet, F7 continuations) reaches the instrument as one message.
@Suite struct ScoreFromFileTests {
    /// MThd (format 1, 96 PPQN, 120 BPM by default) and one MTrk per body.
    static func file(_ bodies: [[UInt8]]) -> [UInt8] {
        func be32(_ v: Int) -> [UInt8] { [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        var out = Array("MThd".utf8) + be32(6) + [0, 1, 0, UInt8(bodies.count), 0, 96]
        for body in bodies { out += Array("MTrk".utf8) + be32(body.count) + body }
        return out
    }
    static let endOfTrack: [UInt8] = [0x00, 0xFF, 0x2F, 0x00]
    static let gmReset: [UInt8] = [0x7E, 0x7F, 0x09, 0x01]

    func score(_ bodies: [[UInt8]]) throws -> Score { Score(try StandardMIDIFile(bytes: Self.file(bodies))) }

    /// What the instrument receives when the whole score is rendered.
    func rendered(_ score: Score, seconds: Double = 1) -> FakeInstrument {
        let fake = FakeInstrument()
        let renderer = Renderer(instrument: fake)
        renderer.prepare(sampleRate: 48_000, maxFrames: 240)
        renderer.schedule(score)
        _ = renderAll(renderer, frames: Int(seconds * 48_000), block: 240)
        return fake
    }

    @Test func splitGMReset_reachesInstrumentWhole() throws {
        let body: [UInt8] = [
            0x00, 0xF0, 0x03, 0x7E, 0x7F, 0x09,        // F0 packet, no F7: to be continued
            0x30, 0xF7, 0x02, 0x01, 0xF7,              // 48 ticks later: final packet, ends in F7
            0x00, 0x90, 60, 100,
        ] + Self.endOfTrack
        let score = try score([body])
        #expect(score.sysExMessages == [Self.gmReset])
        // Sent at the final packet's time (48 ticks at 96 PPQN, 120 BPM = 0.25 s), before the note there.
        #expect(score.events.first == Score.Event(seconds: 0.25, message: .sysExPlaceholder(0)))
        #expect(score.events.dropFirst().first?.message == .noteOn(60, velocity: 100, channel: 0))
        #expect(rendered(score).receivedSysEx == [Self.gmReset])
    }

    @Test func splitTuningMessage_threePacketsWithOtherTrackBetween() throws {
        // MIDI Tuning Standard single-note tuning change (real time): F0 7F 7F 08 02 00 01 45 45 10 20 F7.
        let tuning: [UInt8] = [0x7F, 0x7F, 0x08, 0x02, 0x00, 0x01, 0x45, 0x45, 0x10, 0x20]
        let conductor: [UInt8] = [0x05, 0x90, 40, 90, 0x05, 0x80, 40, 0] + Self.endOfTrack
        let body: [UInt8] = [
            0x00, 0xF0, 0x04, 0x7F, 0x7F, 0x08, 0x02,
            0x04, 0xF7, 0x03, 0x00, 0x01, 0x45,
            0x04, 0xF7, 0x04, 0x45, 0x10, 0x20, 0xF7,
            0x00, 0x90, 69, 100,
        ] + Self.endOfTrack
        let score = try score([conductor, body])
        #expect(score.sysExMessages == [tuning])
        let fake = rendered(score)
        #expect(fake.receivedSysEx == [tuning])
        // The tuning is in place before the note it retunes.
        let order = score.events.map(\.message)
        let tuningAt = try #require(order.firstIndex(of: .sysExPlaceholder(0)))
        let noteAt = try #require(order.firstIndex(of: .noteOn(69, velocity: 100, channel: 0)))
        #expect(tuningAt < noteAt)
    }

    @Test func completeSysEx_stillSentAlone() throws {
        let body: [UInt8] = [0x00, 0xF0, 0x05, 0x7E, 0x7F, 0x09, 0x01, 0xF7] + Self.endOfTrack
        #expect(rendered(try score([body])).receivedSysEx == [Self.gmReset])
    }

    @Test func unfinishedSysEx_andEscapes_notSent() throws {
        let body: [UInt8] = [
            0x00, 0xF7, 0x02, 0xF3, 0x01,              // escape continuing nothing: raw song select
            0x00, 0xF0, 0x02, 0x7E, 0x7F,              // never finished: a new F0 follows
            0x00, 0xF0, 0x05, 0x7E, 0x7F, 0x09, 0x01, 0xF7,
            0x00, 0xF7, 0x02, 0x09, 0x02,              // an escape after a complete SysEx
            0x00, 0xF0, 0x02, 0x7E, 0x7F,              // cut short by the track's end
        ] + Self.endOfTrack
        let score = try score([body])
        #expect(score.sysExMessages == [Self.gmReset])
        #expect(rendered(score).receivedSysEx == [Self.gmReset])
    }

    @Test func continuationInAnotherTrack_doesNotFinishThePacket() throws {
        let first: [UInt8] = [0x00, 0xF0, 0x03, 0x7E, 0x7F, 0x09] + Self.endOfTrack
        let second: [UInt8] = [0x10, 0xF7, 0x02, 0x01, 0xF7] + Self.endOfTrack
        #expect(try score([first, second]).sysExMessages.isEmpty)
    }
}
