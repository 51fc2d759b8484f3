import Engine
import Foundation
import MIDI
import OfflineRender
import SoundFile
import Testing

/// No dead air (a late End of Track is not rendered past where the sound dies
/// away, unless `keepsEndOfTrack`), and the damage rules (`PieceLimits`):
/// tempos that stretch the music out of shape played at the tempo around them,
/// a piece that thins out ended.
@Suite struct DeadAirAndLimitsTests {
    /// 480 PPQN, 120 bpm unless `tempo` events say otherwise: 960 ticks a second.
    static func write(_ events: [TrackEvent], endOfTrack: UInt64? = nil, to path: String) {
        var events = events.sorted { $0.tick < $1.tick }
        if let endOfTrack { events.append(TrackEvent(tick: endOfTrack, event: .meta(.endOfTrack))) }
        let smf = StandardMIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(480), tracks: [Track(events: events)])
        FileManager.default.createFile(atPath: path, contents: Data(smf.serialized()))
    }

    /// A piano phrase of `count` half-second notes, one every `every` ticks from `from`.
    static func notes(_ count: Int, from: UInt64 = 0, every: UInt64 = 480, key: Int = 60) -> [TrackEvent] {
        var events = [TrackEvent(tick: 0, event: .midi(.programChange(0, channel: 0)))]
        for i in 0..<count {
            let tick = from + UInt64(i) * every, note = UInt7(UInt8(key + i % 12))
            events.append(TrackEvent(tick: tick, event: .midi(.noteOn(note, velocity: 100, channel: 0))))
            events.append(TrackEvent(tick: tick + 480, event: .midi(.noteOff(note, channel: 0))))
        }
        return events
    }

    static func render(_ input: String, _ output: String, _ change: (inout RenderJob.Options) -> Void = { _ in })
        throws -> (RenderJob.Summary, [Float]) {
        var options = RenderJob.Options()
        options.sampleRate = 22_050
        change(&options)
        let job = try RenderJob(soundFont: timGM, options: options)
        let summary = try job.render(input: input, to: .file(output, format: .wav, encoding: .float32))
        return (summary, try AudioFileReader(path: output).samples)
    }

    @Test func endOfTrackTenMinutesAfterTheLastNote_endsWhereTheSoundDiesAway_keepEndOfTrackKeepsIt() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Four notes, the last released at 2 s; End of Track 10 minutes and half a second later.
        Self.write(Self.notes(4), endOfTrack: 2400 + 600 * 960, to: "\(dir)/late.mid")
        let (cut, samples) = try Self.render("\(dir)/late.mid", "\(dir)/cut.wav")
        // The piece's last event (the note-off at 2 s), then its release and reverb die away below −80 dBFS:
        // the render ends within the tail that the silence rule gives, not 10 minutes on.
        #expect(cut.duration > 2.25 && cut.duration < 2 + TailPolicy.default.maxTail, "\(cut.duration)")
        #expect(samples.count == 2 * Int((cut.duration * 22_050).rounded()))
        #expect(abs(cut.deadAir - (602.5 - cut.duration)) < 0.01, "\(cut.deadAir)")
        #expect(cut.shortenedGaps.isEmpty && cut.secondsCut == 0 && cut.limits.isEmpty)
        let lastQuarter = samples.suffix(2 * 22_050 / 4)
        #expect(lastQuarter.allSatisfy { abs($0) < 1e-4 }, "the end is the silence that ended it")

        let (kept, keptSamples) = try Self.render("\(dir)/late.mid", "\(dir)/kept.wav") { $0.keepsEndOfTrack = true }
        #expect(kept.deadAir == 0 && kept.shortenedGaps.isEmpty)
        #expect(abs(kept.pieceDuration - 602.5) < 0.01)
        #expect(kept.duration >= 602.5 && kept.duration < 602.5 + 1, "\(kept.duration)")
        // The same sound, to the sample, up to where the cut render ended.
        #expect(Array(keptSamples.prefix(samples.count)) == samples)
    }

    @Test func endOfTrackWithinTenSeconds_isADeliberateEnding_renderedTo() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.write(Self.notes(4), endOfTrack: 2400 + 8 * 960, to: "\(dir)/end.mid")
        let (s, _) = try Self.render("\(dir)/end.mid", "\(dir)/end.wav")
        #expect(s.deadAir == 0)
        #expect(abs(s.pieceDuration - 10.5) < 0.01)
        #expect(s.duration >= 10.5, "rendered to the End of Track, then the tail")
    }

    @Test func aHeldNote_isNoDeadAir_itSoundsToTheEndOfTrack() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // An organ (program 19) held from 0 with no note-off, End of Track 40 s later: it sounds all along.
        let events = [TrackEvent(tick: 0, event: .midi(.programChange(19, channel: 0))),
                      TrackEvent(tick: 0, event: .midi(.noteOn(60, velocity: 100, channel: 0)))]
        Self.write(events, endOfTrack: 40 * 960, to: "\(dir)/held.mid")
        let (s, _) = try Self.render("\(dir)/held.mid", "\(dir)/held.wav")
        #expect(s.duration >= 40, "\(s.duration)")
        #expect(s.deadAir == 0)
    }

    @Test func aTempoThatStretchesTheMusic_playsAtTheTempoAround_aShortOneIsMusic() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 32 notes a quarter apart; at the 8th a tempo of 16,000,000 µs (3.75 BPM) for the rest: hours of piece.
        var events = Self.notes(32)
        events.append(TrackEvent(tick: 8 * 480, event: .meta(.tempo(microsecondsPerQuarterNote: 16_000_000))))
        Self.write(events, to: "\(dir)/tempo.mid")
        let (s, _) = try Self.render("\(dir)/tempo.mid", "\(dir)/tempo.wav")
        #expect(abs(s.pieceDuration - 16) < 0.01, "120 BPM goes on: \(s.pieceDuration)")
        let cut = try #require(s.limits.first)
        #expect(s.limits.count == 1 && "\(cut)".contains("3.75 BPM at 4.0 s"), "\(cut)")
        #expect(abs(cut.seconds - (24 * 16 - 24 * 0.5)) < 0.01, "\(cut.seconds)")

        // --no-limit: as the file says.
        let (raw, _) = try Self.render("\(dir)/tempo.mid", "\(dir)/raw.wav") { $0.limits = nil; $0.maxDuration = 30 }
        #expect(raw.truncated && raw.limits.count == 1 && "\(raw.limits[0])".contains("--max-duration 30.0"))

        // A fermata: one very slow quarter, then 120 again.
        events = Self.notes(8)
        events.append(TrackEvent(tick: 4 * 480, event: .meta(.tempo(microsecondsPerQuarterNote: 9_000_000))))
        events.append(TrackEvent(tick: 5 * 480, event: .meta(.tempo(microsecondsPerQuarterNote: 500_000))))
        Self.write(events, to: "\(dir)/fermata.mid")
        let (fermata, _) = try Self.render("\(dir)/fermata.mid", "\(dir)/fermata.wav")
        #expect(fermata.limits.isEmpty)
        #expect(abs(fermata.pieceDuration - (2 + 9 + 1.5)) < 0.01, "\(fermata.pieceDuration)")
    }

    @Test func aPieceThatThinsOut_endsAfterItsLastDenseNote() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // 60 notes (30 s), then a note every 250 s for 3 hours (a corrupt delta just under --max-gap, again and again).
        var events = Self.notes(60)
        events += Self.notes(43, from: 60 * 480, every: 250 * 960, key: 72).dropFirst()
        Self.write(events, to: "\(dir)/thin.mid")
        let (s, _) = try Self.render("\(dir)/thin.mid", "\(dir)/thin.wav")
        // The music's notes follow each other to the one at 30 s (the next comes 250 s on):
        // the piece ends at its last event up to 10 s after that (the note-off at 30.5 s).
        #expect(abs(s.pieceDuration - 30.5) < 0.01, "\(s.pieceDuration)")
        let cut = try #require(s.limits.first)
        #expect("\(cut)".contains("after the note at 30.0 s (2 notes in the 600 s after it)"), "\(cut)")
        #expect(s.shortenedGaps.isEmpty && s.deadAir == 0)

        // Thin against the piece's own music: 600 notes in its first minute, then a corrupt track's
        // note every 12 s for 40 minutes (50 in 10 minutes: under a tenth of the busiest 10 minutes).
        events = Self.notes(600, every: 96)
        events += Self.notes(200, from: 600 * 96, every: 12 * 960, key: 40).dropFirst()
        Self.write(events, to: "\(dir)/corrupt.mid")
        let (corrupt, _) = try Self.render("\(dir)/corrupt.mid", "\(dir)/corrupt.wav") { $0.sampleRate = 8_000 }
        #expect(abs(corrupt.pieceDuration - 60.5) < 0.01, "\(corrupt.pieceDuration)")
        #expect(corrupt.limits.count == 1 && "\(corrupt.limits[0])".contains("after the note at 60.0 s (50 notes"), "\(corrupt.limits)")

        // Music that is merely slow stays whole: a note every 20 s for 15 minutes.
        Self.write(Self.notes(45, every: 20 * 960), to: "\(dir)/slow.mid")
        let (slow, _) = try Self.render("\(dir)/slow.mid", "\(dir)/slow.wav") { $0.sampleRate = 8_000 }
        #expect(slow.limits.isEmpty && abs(slow.pieceDuration - 880.5) < 0.01)
    }

    /// A steady beat of eighth notes (240 ticks at 480 PPQN) over `bars` 4/4 bars, `tempos` (tick, µs a quarter) set on the conductor track.
    static func beat(bars: UInt64, tempos: [(UInt64, UInt32)], tail: UInt64 = 0, endEvent: Bool = false) -> StandardMIDIFile {
        let conductor = Track(events: tempos.map { TrackEvent(tick: $0.0, event: .meta(.tempo(microsecondsPerQuarterNote: $0.1))) })
        var events: [TrackEvent] = []
        for k in 0..<(bars * 8) {
            let note: UInt7 = k % 2 == 0 ? 36 : 42
            events.append(TrackEvent(tick: k * 240, event: .midi(.noteOn(note, velocity: 100, channel: 9))))
            events.append(TrackEvent(tick: k * 240 + 120, event: .midi(.noteOff(note, channel: 9))))
        }
        // A controller after the last note, `tail` ticks on: the piece lasts to it.
        if endEvent { events.append(TrackEvent(tick: bars * 1920 + tail, event: .midi(.cc(64, value: 0, channel: 9)))) }
        return StandardMIDIFile(division: .ticksPerQuarterNote(480), tracks: [conductor, Track(events: events)])
    }

    @Test func damagedTempos_judgeWhatATempoDoesToTheNotes_notItsNumber() {
        let beat196: UInt32 = 306_122, crawl10: UInt32 = 6_000_000
        // 196 BPM for 40 bars, bars 10–21 at 10 BPM and back: the same beat 19.6× sparser, 273 s added.
        let crawl = Self.beat(bars: 40, tempos: [(0, beat196), (10 * 1920, crawl10), (22 * 1920, beat196)])
        let found = crawl.damagedTempos()
        #expect(found.map(\.change.tick) == [10 * 1920] && found.map(\.instead) == [beat196], "\(found)")
        let fixed = crawl.replacingTempos(found)
        #expect(fixed.tempoMap.changes.map(\.microsecondsPerQuarterNote) == [beat196])
        #expect(fixed.tracks.map(\.events.count) == crawl.tracks.map(\.events.count))   // rewritten, not removed
        #expect(abs(fixed.duration - 159.75 * 0.306122) < 1e-6, "\(fixed.duration)")
        #expect(fixed.damagedTempos().isEmpty)
        // Damage in two steps (10, then 9 BPM) is judged against the tempo kept before, 196.
        let twoSteps = Self.beat(bars: 40, tempos: [(0, beat196), (10 * 1920, crawl10), (16 * 1920, 6_666_667), (22 * 1920, beat196)])
        #expect(twoSteps.damagedTempos().map(\.instead) == [beat196, beat196])

        // Stretched silence: 10 BPM from the last note to a controller 8 quarters on (48 s).
        let silence = Self.beat(bars: 16, tempos: [(0, beat196), (16 * 1920 - 120, crawl10)], tail: 8 * 480, endEvent: true)
        #expect(silence.damagedTempos().map(\.change.tick) == [16 * 1920 - 120])
        // Absurd tempos for 8 bars: 16.7 s a quarter (the most 3 bytes hold), 1 µs, 0 (read as 1).
        for absurd: UInt32 in [0xFF_FFFF, 1, 0] {
            let file = Self.beat(bars: 40, tempos: [(0, beat196), (10 * 1920, absurd), (18 * 1920, beat196)])
            #expect(file.damagedTempos().map(\.change.tick) == [10 * 1920], "\(absurd) µs")
        }
        // Damage at the start is judged against the piece's prevailing tempo; a piece's first minute
        // is not judged against a squashed stretch after it.
        let first = Self.beat(bars: 40, tempos: [(0, crawl10), (12 * 1920, beat196)])
        #expect(first.damagedTempos() == [StandardMIDIFile.DamagedTempo(change: first.tempoMap.changes[0], instead: beat196)])
        let squashedLate = Self.beat(bars: 60, tempos: [(0, beat196), (40 * 1920, 1), (48 * 1920, beat196)])
        #expect(squashedLate.damagedTempos().map(\.change.tick) == [40 * 1920])

        // Music, left as written:
        // one tempo, however slow (a movement at 19.99998 BPM, or at 16.7 s a quarter: nothing to compare with);
        #expect(Self.beat(bars: 40, tempos: [(0, 3_000_003)]).damagedTempos().isEmpty)
        #expect(Self.beat(bars: 40, tempos: [(0, 0xFF_FFFF)]).damagedTempos().isEmpty)
        // a final ritardando from 196 to 10 BPM, a bar a step;
        let steps: [UInt32] = [400_000, 550_000, 750_000, 1_000_000, 1_400_000, 1_900_000, 2_600_000, 3_500_000, 4_600_000, crawl10]
        let ritardando = Self.beat(bars: 40, tempos: [(0, beat196)] + steps.enumerated().map { (UInt64(30 + $0.offset) * 1920, $0.element) })
        #expect(ritardando.damagedTempos().isEmpty)
        // a fermata: one quarter at 10 BPM (6 s) in the 196 BPM beat;
        let fermata = Self.beat(bars: 40, tempos: [(0, beat196), (20 * 1920, crawl10), (20 * 1920 + 480, beat196)])
        #expect(fermata.damagedTempos().isEmpty)
        // a slow section written in short notes: 12 bars at 10 BPM whose notes come 8× as often in ticks;
        var section = Self.beat(bars: 40, tempos: [(0, beat196), (10 * 1920, crawl10), (22 * 1920, beat196)])
        for k in 0..<(12 * 64) as Range<UInt64> {
            let tick = 10 * 1920 + k * 30
            section.tracks[1].events.append(TrackEvent(tick: tick, event: .midi(.noteOn(60, velocity: 80, channel: 0))))
            section.tracks[1].events.append(TrackEvent(tick: tick + 15, event: .midi(.noteOff(60, channel: 0))))
        }
        section.tracks[1].events.sort { $0.tick < $1.tick }
        #expect(section.damagedTempos().isEmpty)
        // a short slow stretch after the last note (12 s: the tail and the end-of-track rule see to it).
        #expect(Self.beat(bars: 16, tempos: [(0, beat196), (16 * 1920 - 120, crawl10)], tail: 2 * 480, endEvent: true)
            .damagedTempos().isEmpty)
        #expect(crawl.replacingTempos([]) == crawl)
    }
}
