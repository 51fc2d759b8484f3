import Engine
import Foundation
import MIDI
import OfflineRender
import SoundFile
import Testing

/// No limit changes a piece whose notes are music, and damaged files stay
/// bounded (issue 38): real files (Tests/Fixtures/MusicMIDI, sources in its
/// README) render at their written tempo with every limit on, exactly as with
/// every limit off; damage made from a real performance (a 12-bar crawl,
/// stretched silence, absurd tempos) is cut and renders in seconds; what was
/// rendered and its labels and stems agree whatever a limit does.
@Suite(.serialized) struct MusicUnderTheLimitsTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/MusicMIDI").path

    /// pretty_midi's end time of each fixture (`end-times.tsv`, written by `end_times.py`).
    static let endTimes: [String: Double] = {
        let text = (try? String(contentsOfFile: "\(folder)/end-times.tsv", encoding: .utf8)) ?? ""
        var times: [String: Double] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: "\t")
            if fields.count == 2, let t = Double(fields[1]) { times[String(fields[0])] = t }
        }
        return times
    }()

    static let music = ["asap-beethoven-3-2-score.mid", "asap-beethoven-21-2-score.mid", "asap-beethoven-21-2-YOO05M.mid",
                        "krueger-waldstein_2.mid", "krueger-ty_maerz.mid", "krueger-mz_311_3.mid", "krueger-alb_esp3.mid",
                        "krueger-bach_847.mid", "krueger-grieg_brooklet.mid"]

    static func render(_ input: String, _ output: String, _ change: (inout RenderJob.Options) -> Void = { _ in },
                       stems: String? = nil) throws -> (RenderJob.Summary, [Float]) {
        var options = RenderJob.Options()
        options.sampleRate = 8_000
        change(&options)
        let job = try RenderJob(soundFont: timGM, options: options)
        let summary = try job.render(input: input, to: .file(output, format: .wav, encoding: .float32, stems: stems.map { RenderJob.StemFolder($0) }))
        return (summary, try AudioFileReader(path: output).samples)
    }

    /// Every limit off: the file as written, to its end of track.
    static func noLimit(_ o: inout RenderJob.Options) {
        o.limits = nil; o.maxGap = nil; o.maxDuration = nil; o.keepsEndOfTrack = true
    }

    @Test(arguments: music) func realMusic_rendersAtItsWrittenTempo_noLimitTouchingIt(name: String) throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = "\(Self.folder)/\(name)"
        let file = try StandardMIDIFile(contentsOf: input)
        #expect(file.damagedTempos().isEmpty)
        let (s, samples) = try Self.render(input, "\(dir)/limits.wav")
        #expect(s.limits.isEmpty && s.shortenedGaps.isEmpty && !s.truncated, "\(s.limits)")
        // The piece lasts to its end as pretty_midi reads it (its last event, a tempo change included),
        // or to the end of track when that comes later within `endOfTrackGrace` (a deliberate ending).
        let end = try #require(Self.endTimes[name], "end-times.tsv has \(name)")
        #expect(abs(s.pieceDuration - max(end, file.duration)) < 1e-3, "\(s.pieceDuration) vs pretty_midi \(end), end of track \(file.duration)")
        #expect(file.duration - end <= RenderJob.Options.endOfTrackGrace)
        // Every limit off renders the same sound, to the sample. Where the end of track comes long after the
        // last sound (a stray tempo event 240 s on in mz_311_3, 12 s of rest at 10 BPM in ty_maerz), the
        // render stops where the sound has died away: what it leaves out is silence.
        let (raw, rawSamples) = try Self.render(input, "\(dir)/raw.wav", Self.noLimit)
        #expect(raw.pieceDuration == s.pieceDuration && raw.deadAir == 0)
        #expect(raw.duration >= raw.pieceDuration && raw.duration <= raw.pieceDuration + TailPolicy.default.maxTail)
        #expect(Array(rawSamples.prefix(samples.count)) == samples)
        if s.deadAir > 0 {
            #expect(abs(s.duration + s.deadAir - s.pieceDuration) < 1e-3, "\(s.duration) + \(s.deadAir)")
            let left = rawSamples.dropFirst(samples.count).map { abs($0) }.max() ?? 0
            #expect(left < 1e-4, "what was left out is silence: peak \(left)")
        } else {
            #expect(rawSamples == samples)
        }
    }

    /// The performance of the Waldstein's Introduzione (120 BPM written, 212 s) with damage written into its tempo map.
    static func damaged(_ tempos: [(seconds: Double, microseconds: UInt32)], quarters: UInt64 = 48,
                        _ edit: (inout StandardMIDIFile) -> Void = { _ in }) throws -> StandardMIDIFile {
        var file = try StandardMIDIFile(contentsOf: "\(folder)/asap-beethoven-21-2-YOO05M.mid")
        guard case .ticksPerQuarterNote(let ppqn) = file.division else { throw CocoaError(.fileReadCorruptFile) }
        let map = file.tempoMap
        for t in tempos {
            let tick = UInt64(map.tick(atSeconds: t.seconds).rounded())
            file.tracks[0].events.append(TrackEvent(tick: tick, event: .meta(.tempo(microsecondsPerQuarterNote: t.microseconds))))
            // Back to the file's tempo after `quarters`.
            file.tracks[0].events.append(TrackEvent(tick: tick + quarters * UInt64(ppqn), event: .meta(.tempo(microsecondsPerQuarterNote: 500_000))))
        }
        edit(&file)
        for t in file.tracks.indices { file.tracks[t].events.sort { $0.tick < $1.tick } }
        return file
    }

    @Test func damagedFiles_areCut_renderInSeconds_andRerunsAreByteIdentical() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let original = try StandardMIDIFile(contentsOf: "\(Self.folder)/asap-beethoven-21-2-YOO05M.mid")
        // A crawl at 10 BPM for 12 bars from 60 s; at 16.7 s a quarter (the most 3 bytes hold); at 1 µs and 0 (squashed).
        var cases: [(String, StandardMIDIFile)] = try [
            ("crawl", Self.damaged([(60, 6_000_000)])),
            ("slowest", Self.damaged([(60, 0xFF_FFFF)])),
            ("one-microsecond", Self.damaged([(60, 1)])),
            ("zero", Self.damaged([(60, 0)])),
            ("two-crawls", Self.damaged([(30, 6_000_000), (120, 6_000_000)])),
        ]
        // Stretched silence: 10 BPM from the last note to a pedal event 20 quarters on (two minutes).
        cases.append(("silence", try Self.damaged([]) { file in
            guard case .ticksPerQuarterNote(let ppqn) = file.division else { return }
            let last = file.tracks.flatMap(\.events).filter { if case .midi(.noteOn) = $0.event { true } else { false } }.map(\.tick).max() ?? 0
            file.tracks[0].events.append(TrackEvent(tick: last + 1, event: .meta(.tempo(microsecondsPerQuarterNote: 6_000_000))))
            file.tracks[1].events.append(TrackEvent(tick: last + 20 * UInt64(ppqn), event: .midi(.cc(64, value: 0, channel: 0))))
        }))
        for (name, file) in cases {
            FileManager.default.createFile(atPath: "\(dir)/\(name).mid", contents: Data(file.serialized()))
            let start = ContinuousClock.now
            let (s, _) = try Self.render("\(dir)/\(name).mid", "\(dir)/\(name).wav")
            let elapsed = ContinuousClock.now - start
            #expect(elapsed < .seconds(60), "\(name): \(elapsed)")
            let cut = try #require(s.limits.first, "\(name)")
            guard case .tempo = cut.reason else { Issue.record("\(name): \(cut)"); continue }
            // The music plays at its own tempo: the piece lasts what the original lasts (to the silence's pedal event).
            #expect(s.pieceDuration < original.duration + 11 && s.pieceDuration > original.duration - 1, "\(name): \(s.pieceDuration)")
            let bytes = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(name).wav"))
            _ = try Self.render("\(dir)/\(name).mid", "\(dir)/\(name)-again.wav")
            let again = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(name)-again.wav"))
            #expect(again == bytes, "\(name) rerun")
        }
    }

    /// A limit that cuts: the labels, stems and sound are those of the file as played (its
    /// damaged stretch at the tempo around it), rendered with every limit off.
    @Test func aCutPiece_labelsStemsAndSound_areWhatWasRendered() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let crawl = try Self.damaged([(60, 6_000_000)])
        FileManager.default.createFile(atPath: "\(dir)/crawl.mid", contents: Data(crawl.serialized()))
        let played = crawl.replacingTempos(crawl.damagedTempos())
        FileManager.default.createFile(atPath: "\(dir)/played.mid", contents: Data(played.serialized()))
        let options: (inout RenderJob.Options) -> Void = { $0.labels = true; $0.stems = true }
        let (cut, cutSamples) = try Self.render("\(dir)/crawl.mid", "\(dir)/crawl.wav", options, stems: "\(dir)/crawl-stems")
        let (raw, rawSamples) = try Self.render("\(dir)/played.mid", "\(dir)/played.wav", { options(&$0); Self.noLimit(&$0) },
                                                stems: "\(dir)/played-stems")
        #expect(cut.limits.count == 1 && raw.limits.isEmpty)
        #expect(abs(cut.limits[0].seconds - 48 * 5.5) < 0.01, "\(cut.limits[0].seconds)")
        #expect(cut.duration == raw.duration && cutSamples == rawSamples)
        let labels = try #require(cut.labels), rawLabels = try #require(raw.labels)
        #expect(labels.notes == rawLabels.notes && labels.beats == rawLabels.beats)
        #expect(labels.tempos.map(\.beatsPerMinute).allSatisfy { abs($0 - 120) < 1e-9 }, "\(labels.tempos)")
        #expect(labels.notes.allSatisfy { $0.offset <= cut.duration })
        let stems = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/crawl-stems").sorted()
        let playedStems = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/played-stems").sorted()
        #expect(!stems.isEmpty && stems == playedStems)
        for stem in stems {
            let a = try AudioFileReader(path: "\(dir)/crawl-stems/\(stem)"), b = try AudioFileReader(path: "\(dir)/played-stems/\(stem)")
            #expect(a.samples == b.samples && a.frames * 2 == cutSamples.count, "\(stem)")
        }
    }
}
