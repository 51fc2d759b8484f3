import Testing
import Engine

/// The sequencer's transport while rendering runs: seek with chase, loop,
/// tempo scale, stop — with the fake instrument, whose strip c sounds while
/// a note is on on channel c.
@Suite struct TransportTests {
    static let rate = 48_000.0

    func makeRenderer(_ fake: FakeInstrument, block: Int = 240) -> Renderer {
        let renderer = Renderer(instrument: fake)
        renderer.prepare(sampleRate: Self.rate, maxFrames: block)
        return renderer
    }

    /// Notes sounding after `messages`, as (channel, note): note-ons less
    /// note-offs, all notes off (CC 123) clearing a channel.
    func sounding(_ messages: [ChannelMessage]) -> Set<[Int]> {
        var on: [[Int]: Int] = [:]
        for m in messages {
            let key = [m.channel, Int(m.data1)]
            switch m.kind {
            case 0x90 where m.data2 > 0: on[key, default: 0] += 1
            case 0x80, 0x90: on[key] = nil
            case 0xB0 where m.data1 == 123: on = on.filter { $0.key[0] != m.channel }
            default: break
            }
        }
        return Set(on.keys)
    }

    static let piece = Score(events: [
        .init(seconds: 0, message: .controlChange(0, value: 1, channel: 0)),
        .init(seconds: 0, message: .programChange(5, channel: 0)),
        .init(seconds: 0, message: .controlChange(7, value: 80, channel: 0)),
        .init(seconds: 0.1, message: .noteOn(60, velocity: 100, channel: 0)),
        .init(seconds: 0.5, message: .programChange(10, channel: 0)),
        .init(seconds: 0.5, message: .controlChange(7, value: 50, channel: 0)),
        .init(seconds: 0.5, message: ChannelMessage(status: 0xE0, data1: 0, data2: 80)),
        .init(seconds: 0.9, message: .noteOff(60, channel: 0)),
        .init(seconds: 1.0, message: .noteOn(62, velocity: 100, channel: 0)),
        .init(seconds: 2.0, message: .noteOff(62, channel: 0)),
    ], duration: 2.0)

    @Test func seekForward_releasesHeldNotes_andChasesBankProgramAndControllers() {
        let fake = FakeInstrument()
        let renderer = makeRenderer(fake)
        renderer.schedule(Self.piece)
        _ = renderAll(renderer, frames: 9_600, block: 240)  // 0.2 s: note 60 sounds
        #expect(sounding(fake.received) == [[0, 60]])
        let before = fake.received.count
        renderer.transport.seek(to: 0.6)
        let out = renderAll(renderer, frames: 2_400, block: 240)
        let after = Array(fake.received[before...])
        #expect(sounding(fake.received).isEmpty)
        #expect(out.allSatisfy { $0 == 0 })
        let offIndex = after.firstIndex(of: .noteOff(60, channel: 0))
        let programIndex = after.firstIndex(of: .programChange(10, channel: 0))
        let bankIndex = after.firstIndex(of: .controlChange(0, value: 1, channel: 0))
        #expect(offIndex != nil && programIndex != nil && bankIndex != nil)
        if let offIndex, let programIndex, let bankIndex { #expect(offIndex < bankIndex && bankIndex < programIndex) }
        #expect(after.contains(.controlChange(7, value: 50, channel: 0)))
        #expect(after.contains(.controlChange(64, value: 0, channel: 0)))
        #expect(after.contains(ChannelMessage(status: 0xE0, data1: 0, data2: 80)))
        #expect(abs(renderer.transport.position - 0.65) < 0.01)
        // The piece goes on from there: note 62 at 1.0 s of the piece, 0.4 s after the seek.
        let rest = renderAll(renderer, frames: 19_200, block: 240)
        #expect(onset(rest) == 16_800)
    }

    @Test func seekForward_resendsEarlierSysEx_inOrder_beforeTheChannelState() {
        let gmOn: [UInt8] = [0x7E, 0x7F, 0x09, 0x01]
        let drums: [UInt8] = [0x41, 0x10, 0x42, 0x12, 0x40, 0x1A, 0x15, 0x02, 0x0F]
        var piece = Score(events: [
            .init(seconds: 0, message: .sysExPlaceholder(0)),
            .init(seconds: 0.01, message: .sysExPlaceholder(1)),
            .init(seconds: 0.02, message: .programChange(5, channel: 10)),
            .init(seconds: 0.1, message: .noteOn(36, velocity: 100, channel: 10)),
            .init(seconds: 0.2, message: .noteOff(36, channel: 10)),
        ], duration: 2.0)
        piece.sysExMessages = [gmOn, drums]
        let fake = FakeInstrument()
        let renderer = makeRenderer(fake)
        renderer.schedule(piece)
        _ = renderAll(renderer, frames: 2_400, block: 240)
        #expect(fake.receivedSysEx == [gmOn, drums])
        let before = fake.received.count
        renderer.transport.seek(to: 1.0)
        _ = renderAll(renderer, frames: 2_400, block: 240)
        // Chased: both SysEx again, in order, and the program after them.
        #expect(fake.receivedSysEx == [gmOn, drums, gmOn, drums])
        #expect(fake.received[before...].contains(.programChange(5, channel: 10)))
        // A SysEx is no channel-1 event: nothing is released on channel 1.
        #expect(!fake.received.contains(.controlChange(123, value: 0, channel: 0)))
    }

    @Test func seekBackward_restoresTheEarlierProgramAndDefaults() {
        let fake = FakeInstrument()
        let renderer = makeRenderer(fake)
        renderer.schedule(Self.piece)
        _ = renderAll(renderer, frames: 33_600, block: 240)  // 0.7 s: program 10, bend moved
        let before = fake.received.count
        renderer.transport.seek(to: 0.2)
        _ = renderAll(renderer, frames: 240, block: 240)
        let after = Array(fake.received[before...])
        #expect(after.contains(.programChange(5, channel: 0)))
        #expect(after.contains(.controlChange(7, value: 80, channel: 0)))
        // The bend comes later in the piece: back to centre.
        #expect(after.contains(ChannelMessage(status: 0xE0, data1: 0, data2: 64)))
        #expect(!after.contains(.programChange(10, channel: 0)))
    }

    @Test func loopRegion_wrapsWithoutHangingNotes() {
        let fake = FakeInstrument()
        let renderer = makeRenderer(fake)
        renderer.schedule(Score(events: [
            .init(seconds: 0.1, message: .noteOn(60, velocity: 127, channel: 0)),
            .init(seconds: 0.8, message: .noteOn(64, velocity: 127, channel: 1)),
            .init(seconds: 1.2, message: .noteOff(64, channel: 1)),
            .init(seconds: 1.5, message: .noteOff(60, channel: 0)),
        ], duration: 2))
        renderer.transport.setLoop(true, start: 0.5, end: 1.0)
        let out = renderAll(renderer, frames: 4 * 48_000, block: 240)
        // Starts at 0, plays to 1.0, wraps to 0.5: every pass after the first
        // is silent between 0.5 and 0.8 of the piece (no note carried over).
        #expect(renderer.transport.loopWraps == 6)
        for pass in 1...5 {
            let start = 48_000 + (pass - 1) * 24_000  // wall frame where pass `pass` (at 0.5) starts
            let quiet = (start + 240)..<(start + 14_000)
            #expect(quiet.allSatisfy { out[2 * $0] == 0 }, "pass \(pass)")
            #expect(onset(out, after: start + 240) == start + 14_400)  // note 64 at 0.8
        }
        #expect(renderer.transport.position >= 0.5 && renderer.transport.position <= 1.0)
        #expect(!renderer.isScoreFinished)
        renderer.transport.setLoop(false)
        _ = renderAll(renderer, frames: 48_000 + 240, block: 240)
        #expect(renderer.isScoreFinished)
        #expect(sounding(fake.received).isEmpty)
    }

    @Test func loopWholePiece_startsAgainFromZero() {
        let fake = FakeInstrument()
        let renderer = makeRenderer(fake)
        renderer.schedule(Score(events: [
            .init(seconds: 0.1, message: .noteOn(60, velocity: 127, channel: 0)),
            .init(seconds: 0.4, message: .noteOff(60, channel: 0)),
        ], duration: 0.5))
        renderer.transport.setLoop(true)
        let out = renderAll(renderer, frames: 48_000, block: 240)
        #expect(onset(out) == 4_800)
        #expect(onset(out, after: 20_000) == 24_000 + 4_800)
        #expect(renderer.transport.loopWraps == 1)
    }

    @Test func tempoScale2_halvesTheTime() {
        let fake = FakeInstrument()
        let renderer = makeRenderer(fake)
        renderer.schedule(Score(events: [
            .init(seconds: 1.0, message: .noteOn(60, velocity: 127, channel: 0)),
            .init(seconds: 1.5, message: .noteOff(60, channel: 0)),
        ], duration: 2))
        renderer.transport.setTempoScale(2)
        let out = renderAll(renderer, frames: 48_000, block: 240)
        #expect(onset(out) == 24_000)
        let noteFrames = (0..<48_000).filter { out[2 * $0] != 0 }.count
        #expect(noteFrames == 12_000)
        #expect(renderer.isScoreFinished)
        #expect(abs(renderer.transport.position - 2.0) < 1e-9)
    }

    @Test func tempoScaleChangedMidway_appliesFromThatBlock() {
        let fake = FakeInstrument()
        let renderer = makeRenderer(fake)
        renderer.schedule(Score(events: [.init(seconds: 1.0, message: .noteOn(60, velocity: 127, channel: 0))], duration: 2))
        var out = renderAll(renderer, frames: 24_000, block: 240)  // 0.5 s at scale 1
        renderer.transport.setTempoScale(2)
        out += renderAll(renderer, frames: 24_000, block: 240)
        #expect(onset(out) == 36_000)  // the remaining 0.5 s of the piece in 0.25 s
    }

    @Test func stop_silencesAndKeepsThePosition_playResumes() {
        let fake = FakeInstrument()
        let renderer = makeRenderer(fake)
        renderer.schedule(Self.piece)
        _ = renderAll(renderer, frames: 9_600, block: 240)
        renderer.transport.stop()
        let out = renderAll(renderer, frames: 48_000, block: 240)
        #expect(out.allSatisfy { $0 == 0 })
        #expect(fake.received.contains(.noteOff(60, channel: 0)))
        #expect(fake.received.contains(.controlChange(123, value: 0, channel: 0)))
        #expect(abs(renderer.transport.position - 0.2) < 1e-9)
        #expect(!renderer.isScoreFinished)
        renderer.transport.play()
        let resumed = renderAll(renderer, frames: 48_000, block: 240)
        #expect(onset(resumed) == 38_400)  // note 62 at 1.0 s: 0.8 s after 0.2
    }

    @Test func pieceEnd_releasesHeldNotes_whenAsked() {
        let fake = FakeInstrument()
        let renderer = makeRenderer(fake)
        renderer.releasesNotesAtEnd = true
        renderer.schedule(Score(events: [.init(seconds: 0.1, message: .noteOn(60, velocity: 127, channel: 3))], duration: 0.5))
        let out = renderAll(renderer, frames: 48_000, block: 240)
        #expect(renderer.isScoreFinished)
        #expect(sounding(fake.received).isEmpty)
        #expect(out[2 * 47_000] == 0)
        // Play at the end starts again.
        renderer.transport.play()
        let again = renderAll(renderer, frames: 9_600, block: 240)
        #expect(onset(again) == 4_800)
    }

    @Test func pieceEnd_offline_leavesTheFileAlone() {
        let fake = FakeInstrument()
        let renderer = makeRenderer(fake)
        renderer.schedule(Score(events: [.init(seconds: 0.1, message: .noteOn(60, velocity: 127, channel: 3))], duration: 0.5))
        _ = renderAll(renderer, frames: 48_000, block: 240)
        #expect(fake.received == [.noteOn(60, velocity: 127, channel: 3)])
    }

    @Test func emptyPiece_finishesAtItsDuration() {
        let renderer = makeRenderer(FakeInstrument())
        renderer.schedule(Score(events: [], duration: 0.01))
        _ = renderAll(renderer, frames: 480, block: 240)
        #expect(renderer.isScoreFinished)
        renderer.schedule(Score(events: []))
        _ = renderAll(renderer, frames: 240, block: 240)
        #expect(renderer.isScoreFinished)
    }
}

/// `Transport.play(from:atFrame:)`: a follower's Start or Continue plays from the
/// frame its clock was stamped at, not from the next block's start.
@Suite struct TransportStampedStartTests {
    /// A note at 0 s (off at 0.25 s) and one at 0.5 s.
    static let piece = Score(events: [
        .init(seconds: 0, message: .noteOn(60, velocity: 127, channel: 0)),
        .init(seconds: 0.25, message: .noteOff(60, channel: 0)),
        .init(seconds: 0.5, message: .noteOn(62, velocity: 127, channel: 0)),
    ], duration: 2)

    static func stoppedRenderer(_ fake: FakeInstrument) -> Renderer {
        let renderer = Renderer(instrument: fake)
        renderer.prepare(sampleRate: 48_000, maxFrames: 256)
        renderer.schedule(piece)
        renderer.transport.stop()
        return renderer
    }

    @Test func startStampedInABlockAhead_firstNoteAtThatFrame() {
        let fake = FakeInstrument()
        let renderer = Self.stoppedRenderer(fake)
        var out = renderAll(renderer, frames: 2_560, block: 256)   // stopped: silence
        renderer.transport.play(from: 0, atFrame: 5_000)           // mid-block (4_864…5_120)
        out += renderAll(renderer, frames: 48_000 - 2_560, block: 256)
        #expect(onset(out) == 5_000)
        #expect(onset(out, after: 5_000 + 12_100) == 5_000 + 24_000)   // and the piece runs from there
        #expect(abs(renderer.transport.position - (1.0 - 5_000.0 / 48_000)) < 1e-9)
    }

    @Test func startStampedInAFrameAlreadyRendered_stillOnTheMastersTimeline() {
        let fake = FakeInstrument()
        let renderer = Self.stoppedRenderer(fake)
        var out = renderAll(renderer, frames: 12_800, block: 256)
        renderer.transport.play(from: 0, atFrame: 10_000)   // late: the note due then plays at once
        out += renderAll(renderer, frames: 48_000 - 12_800, block: 256)
        #expect(onset(out) == 12_800)
        #expect(onset(out, after: 10_000 + 12_100) == 10_000 + 24_000)
    }

    @Test func aPlainSeekAfterwards_playsFromItsBlock() {
        let fake = FakeInstrument()
        let renderer = Self.stoppedRenderer(fake)
        renderer.transport.play(from: 0, atFrame: 5_000)
        var out = renderAll(renderer, frames: 10_240, block: 256)   // note 60 ended at 17_000: silent from there
        out += renderAll(renderer, frames: 10_240, block: 256)
        renderer.transport.seek(to: 0.5)    // the stamped frame is not used again
        out += renderAll(renderer, frames: 2_560, block: 256)
        #expect(onset(out, after: 17_100) == 20_480)
    }
}
