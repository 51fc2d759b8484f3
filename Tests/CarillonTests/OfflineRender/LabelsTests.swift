import OfflineRender
import Engine
import Foundation
import MIDI
import SoundFile
import Testing

/// `--labels`: the notes where the synth applied them (found again in the
/// rendered stems), their presets as FluidSynth chose them, beats and tempo
/// from the file's maps, and what --max-gap cut.
@Suite struct LabelsTests {
    static let ppqn: UInt64 = 480

    static func name(_ text: String) -> TrackEvent { TrackEvent(tick: 0, event: .meta(.text(.trackName, Array(text.utf8)))) }

    /// Two tracks: "Piano, left hand" (channel 1, a program change to 24 half way)
    /// and "Drums" (channel 10); notes a second apart at ticks off FluidSynth's
    /// grid, at 120 bpm then 90 bpm, in 3/4.
    static func song() -> (bytes: [UInt8], pianoTicks: [UInt64], drumTicks: [UInt64]) {
        let conductor = Track(events: [
            TrackEvent(tick: 0, event: .meta(.tempo(microsecondsPerQuarterNote: 500_000))),
            TrackEvent(tick: 0, event: .meta(.timeSignature(.init(numerator: 3, denominatorPower: 2)))),
            TrackEvent(tick: 2880, event: .meta(.tempo(microsecondsPerQuarterNote: 666_667))),
        ])
        let pianoTicks: [UInt64] = [37, 997, 1955, 2917, 3893, 4855]
        let drumTicks: [UInt64] = [501, 1481, 2411, 3371]
        var piano = [name("Piano, left hand"), TrackEvent(tick: 0, event: .midi(.programChange(0, channel: 0)))]
        for (i, t) in pianoTicks.enumerated() {
            if i == 3 { piano.append(TrackEvent(tick: t - 10, event: .midi(.programChange(24, channel: 0)))) }
            piano.append(TrackEvent(tick: t, event: .midi(.noteOn(UInt7(60 + i), velocity: 100, channel: 0))))
            piano.append(TrackEvent(tick: t + 120, event: .midi(.noteOff(UInt7(60 + i), channel: 0))))
        }
        var drums = [name("Drums")]
        for t in drumTicks {
            drums.append(TrackEvent(tick: t, event: .midi(.noteOn(75, velocity: 110, channel: 9))))
            drums.append(TrackEvent(tick: t + 60, event: .midi(.noteOff(75, channel: 9))))
        }
        piano.sort { $0.tick < $1.tick }
        let smf = StandardMIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(UInt16(ppqn)),
                                   tracks: [conductor, Track(events: piano), Track(events: drums)])
        return (smf.serialized(), pianoTicks, drumTicks)
    }

    /// Seconds at a tick, from the tempo list above (not by the MIDI module).
    static func exact(_ tick: UInt64) -> Double {
        tick <= 2880 ? Double(tick) / 960 : 3 + Double(tick - 2880) / 480 * 0.666667
    }

    static func render(_ bytes: [UInt8], in dir: String, rate: Int = 44_100) throws -> (RenderJob.Summary, String) {
        let input = "\(dir)/song.mid", output = "\(dir)/song.wav"
        FileManager.default.createFile(atPath: input, contents: Data(bytes))
        var options = RenderJob.Options()
        options.sampleRate = rate
        options.host.sampler.reverb = false; options.host.sampler.chorus = false
        options.stems = true
        options.labels = true
        let job = try RenderJob(soundFont: timGM, options: options)
        let summary = try job.render(input: input, to: .file(output, format: .wav, encoding: .float32, stems: RenderJob.StemFolder("\(dir)/stems")))
        return (summary, output)
    }

    @Test func onsets_areFoundInTheirStems_withinOneBlock_andTimesAreTheFilesOnTheGrid() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (bytes, pianoTicks, drumTicks) = Self.song()
        let (summary, _) = try Self.render(bytes, in: dir)
        let labels = try #require(summary.labels)
        let piano = labels.notes.filter { $0.channel == 1 }, drums = labels.notes.filter { $0.channel == 10 }
        #expect(piano.count == pianoTicks.count && drums.count == drumTicks.count)
        // Each onset is the file's time moved to the nearest 64-frame block (the grid), and within half a block of it.
        let pairs: [(RenderLabels.Note, UInt64)] = Array(zip(piano, pianoTicks)) + Array(zip(drums, drumTicks))
        for (note, tick) in pairs {
            let frame = (Self.exact(tick) * 44_100).rounded()
            let onGrid = ((frame + 32) / 64).rounded(.down) * 64
            #expect(abs(note.onset * 44_100 - onGrid) < 0.5, "note \(note.pitch) at tick \(tick)")
            #expect(abs(note.onset - Self.exact(tick)) <= 33.0 / 44_100)
        }
        // Found in the audio: in the note's own stem, sound starts in the block the label names.
        for note in labels.notes {
            let stem = try AudioFileReader(path: "\(dir)/stems/\(note.stem).wav")
            let onset = Int((note.onset * 44_100).rounded())
            let heard = stem.samples.withUnsafeBufferPointer { s -> Int? in
                for f in max(0, onset - 2048)..<min(stem.frames, onset + 2048) where abs(s[2 * f]) + abs(s[2 * f + 1]) > 1e-4 {
                    // The start of this note's sound: silence in the 1000 frames before it.
                    if (max(0, f - 1000)..<f).allSatisfy({ abs(s[2 * $0]) + abs(s[2 * $0 + 1]) <= 1e-4 }) { return f }
                }
                return nil
            }
            let found = try #require(heard, "no onset near \(note.onset) s in \(note.stem)")
            #expect(found >= onset && found < onset + 64, "\(note.stem) note \(note.pitch): label frame \(onset), sound from \(found)")
        }
        // What the notes are: presets as FluidSynth chose them, tracks, drums, stems.
        #expect(piano.prefix(3).allSatisfy { $0.program == 0 && $0.bank == 0 } && piano.suffix(3).allSatisfy { $0.program == 24 })
        #expect(Set(piano.map(\.preset)).count == 2 && !piano.contains { $0.preset.isEmpty })
        #expect(piano.allSatisfy { $0.track == 1 && $0.trackName == "Piano, left hand" && !$0.drum && $0.stem == "ch01" })
        #expect(drums.allSatisfy { $0.track == 2 && $0.trackName == "Drums" && $0.drum && $0.bank == 128 && $0.stem == "ch10" })
        // Offsets: the note-off's time on the grid.
        for (note, tick) in zip(piano, pianoTicks) {
            #expect(abs(note.offset - Self.exact(tick + 120)) <= 33.0 / 44_100)
        }
    }

    @Test func beatsAndTempo_followTheFilesMaps() throws {
        let (bytes, _, _) = Self.song()
        let file = try StandardMIDIFile(bytes: bytes)
        let score = Score(file)
        let labels = RenderLabels(.init(file, score: score, gaps: [], maxGap: nil), score: score, rendering: Self.plain)
        // 3/4: a bar is three quarter notes; 0.5 s a beat, then 0.666667 s from tick 2880 (bar 3).
        let first = labels.beats.prefix(8).map { [$0.time, Double($0.bar), Double($0.beat)] }
        #expect(first.map { $0[1] } == [1, 1, 1, 2, 2, 2, 3, 3] && first.map { $0[2] } == [1, 2, 3, 1, 2, 3, 1, 2])
        for (i, beat) in labels.beats.enumerated() {
            let tick = UInt64(i) * 480
            #expect(abs(beat.time - Self.exact(tick)) < 1e-6, "beat \(i)")
            #expect(beat.isDownbeat == (i % 3 == 0) && beat.numerator == 3 && beat.denominator == 4)
        }
        #expect(labels.beats.last!.time <= file.duration + 1e-9)
        #expect(labels.tempos.map(\.tick) == [0, 2880])
        #expect(abs(labels.tempos[1].time - 3) < 1e-9 && abs(labels.tempos[1].beatsPerMinute - 90) < 1e-3)
    }

    static let plain = RenderLabels.Rendering(sampleRate: 44_100, grid: 64, oscillatorChannels: [], presets: [], notePresets: [])

    @Test func endsAsFluidSynthEndsThem() {
        func on(_ t: Double, _ key: UInt8) -> Score.Event { .init(seconds: t, message: .noteOn(key, velocity: 90, channel: 2)) }
        func off(_ t: Double, _ key: UInt8) -> Score.Event { .init(seconds: t, message: .noteOff(key, channel: 2)) }
        let score = Score(events: [
            on(0, 60), on(1, 60), off(1.5, 60),                 // a key struck again ends its older note
            on(2, 62), off(2.001, 62),                          // shorter than 10 ms: lasts 10 ms, to the block
            on(3, 64), on(3, 65), .init(seconds: 3.5, message: .controlChange(123, value: 0, channel: 2)),   // All Notes Off
            on(4, 67),                                          // never released: to the piece's end
        ], duration: 6)
        let notes = RenderLabels.playedNotes(score, trackNames: [], rendering: Self.plain)
        let frames: [[Int]] = notes.map { n -> [Int] in [Int((n.onset * 44_100).rounded()), Int((n.offset * 44_100).rounded()), n.pitch] }
        let expected: [[Int]] = [
            [0, 44_096, 60], [44_096, 66_176, 60],
            [88_192, 88_640, 62],           // 88,192 + 441 = 88,633, up to the block at 88,640
            [132_288, 154_368, 64], [132_288, 154_368, 65],
            [176_384, 264_576, 67],
        ]
        #expect(frames == expected)
        #expect(notes.allSatisfy { $0.channel == 3 && $0.stem == "ch03" && $0.preset == "" && $0.bank == -1 })
    }

    @Test func aCutGap_movesLaterNotesAndBeatsEarlier_andDropsTheBeatsInIt() throws {
        // Two notes 100 s apart at 120 bpm, cut with --max-gap 5.
        var track = [TrackEvent(tick: 0, event: .midi(.noteOn(60, velocity: 80, channel: 0))),
                     TrackEvent(tick: 480, event: .midi(.noteOff(60, channel: 0)))]
        track.append(TrackEvent(tick: 960 * 100, event: .midi(.noteOn(62, velocity: 80, channel: 0))))
        track.append(TrackEvent(tick: 960 * 100 + 480, event: .midi(.noteOff(62, channel: 0))))
        let file = StandardMIDIFile(format: .singleTrack, division: .ticksPerQuarterNote(480), tracks: [Track(events: track)])
        var score = Score(file)
        let gaps = score.shortenGaps(longerThan: 5)
        #expect(gaps.count == 1)
        let labels = RenderLabels(.init(file, score: score, gaps: gaps, maxGap: 5), score: score, rendering: Self.plain)
        // The gap ran from 0.5 s (the first note-off) to 100 s: 94.5 s came out.
        #expect(abs(labels.notes[1].onset - (100 - 94.5)) <= 33.0 / 44_100)
        #expect(labels.beats.allSatisfy { $0.time <= score.duration + 1e-9 })
        // Beats 0 … 5 s before the cut (the one at 5.5 s falls in it), then those at 100 and 100.5 s, now 5.5 and 6 s.
        let times = labels.beats.map(\.time)
        #expect(times == (0...10).map { Double($0) * 0.5 } + [5.5, 6])
        #expect(labels.beats.suffix(2).map(\.bar) == [51, 51])   // bars keep the file's count
    }

    @Test func files_csvAndJSONLines_loadAsTheyAre() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (bytes, _, _) = Self.song()
        let (summary, output) = try Self.render(bytes, in: dir)
        let labels = try #require(summary.labels)
        let csv = try labels.write(beside: output, format: .csv)
        #expect(csv == ["\(dir)/song.notes.csv", "\(dir)/song.beats.csv", "\(dir)/song.tempo.csv"])
        let lines = try String(contentsOfFile: csv[0], encoding: .utf8).split(separator: "\n")
        #expect(lines[0] == "onset,offset,pitch,velocity,channel,program,bank,preset,track,track_name,drum,stem,soundfont")
        #expect(lines.count == labels.notes.count + 1)
        #expect(lines.contains { $0.contains(",\"Piano, left hand\",false,ch01,TimGM6mb.sf2") })
        let jsonl = try labels.write(beside: output, format: .jsonl)
        let objects = try String(contentsOfFile: jsonl[0], encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        #expect(objects.count == labels.notes.count)
        #expect(objects[0]["track_name"] as? String == labels.notes[0].trackName)
        #expect(objects.allSatisfy { $0["soundfont"] as? String == "TimGM6mb.sf2" })
        #expect(objects.allSatisfy { ($0["onset"] as? Double ?? -1) >= 0 && $0["drum"] is Bool })
    }

    @Test func realFile_everyNoteOnIsOneLabel_asMidicsvCountsThem() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(openmsx)/train_filled_with_cash.mid"
        let csv = "\(dir)/song.csv"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "midicsv '\(path)' > '\(csv)'"]
        try p.run(); p.waitUntilExit()
        // (midicsv passes text bytes through as they are: not always UTF-8.)
        let noteOns = String(decoding: try Data(contentsOf: URL(fileURLWithPath: csv)), as: UTF8.self).split(separator: "\n").filter { line in
            let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            return f.count >= 6 && f[2] == "Note_on_c" && f[5] != "0"
        }.count
        var options = RenderJob.Options()
        options.labels = true
        let job = try RenderJob(soundFont: timGM, options: options)
        let summary = try job.render(input: path, to: .file("\(dir)/song.wav", format: .wav, encoding: nil))
        let labels = try #require(summary.labels)
        #expect(noteOns > 100 && labels.notes.count == noteOns)
        #expect(labels.notes.allSatisfy { $0.offset >= $0.onset && !$0.preset.isEmpty })
    }
}
