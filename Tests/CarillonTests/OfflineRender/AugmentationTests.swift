import OfflineRender
import RenderBatch
import Engine
import Foundation
import MIDI
import Testing

/// `render --transpose`, `--tempo`, `--velocity-scale`, `--program-map`, `--seed`:
/// the draws, and the piece the labels show as rendered.
@Suite struct AugmentationTests {
    // MARK: Draws

    static func ranges(seed: UInt64) -> Augmentation {
        var a = Augmentation()
        a.transpose = .range(-2...2); a.tempo = .range(0.8...1.25); a.velocityScale = .range(0.7...1.3)
        a.seed = seed
        return a
    }

    @Test func draw_dependsOnTheSeedAndTheKeyOnly() {
        let keys = (0..<200).map { "sub\($0 % 7)/song\($0).mid" }
        let a = Self.ranges(seed: 7)
        let forward = keys.map { a.draw(forKey: $0) }
        let backward = keys.reversed().map { a.draw(forKey: $0) }
        #expect(forward == backward.reversed())
        #expect(forward.allSatisfy { (-2...2).contains($0.transpose) && (0.8...1.25).contains($0.tempo) && (0.7...1.3).contains($0.velocityScale) })
        // Every whole number of the range comes up; reals in steps of 0.001, not all alike.
        #expect(Set(forward.map(\.transpose)) == [-2, -1, 0, 1, 2])
        #expect(forward.allSatisfy { abs($0.tempo * 1000 - ($0.tempo * 1000).rounded()) < 1e-6 })
        #expect(Set(forward.map(\.tempo)).count > 150)
        // Another seed, other draws.
        let other = keys.map { Self.ranges(seed: 8).draw(forKey: $0) }
        #expect(zip(forward, other).filter { $0.0.tempo != $0.1.tempo }.count > 190)
        // Each option has its own stream: fixing one leaves the others' draws.
        var fixedTempo = a
        fixedTempo.tempo = .fixed(1.5)
        #expect(keys.map { fixedTempo.draw(forKey: $0).transpose } == forward.map(\.transpose))
    }

    /// The same seed and key give these numbers in every process and on every machine
    /// (FNV-1a and SplitMix64, no per-process hashing): a dataset made today is made again tomorrow.
    @Test func draw_isTheSameInEveryProcess() {
        let d = Self.ranges(seed: 7).draw(forKey: "sub/song.mid")
        #expect([Double(d.transpose), d.tempo, d.velocityScale] == Self.goldenDraw)
    }
    static let goldenDraw: [Double] = [0, 0.946, 0.802]

    @Test func values_readAsNumbersOrRanges() {
        #expect(Augmentation.integers("-2..2") == .range(-2...2))
        #expect(Augmentation.integers("-3") == .fixed(-3))
        #expect(Augmentation.integers("-3..-1") == .range(-3...(-1)))
        #expect(Augmentation.reals("0.9..1.1") == .range(0.9...1.1))
        #expect(Augmentation.reals("2") == .fixed(2))
        for bad in ["2..-2", "1...2", "..2", "2..", "a", "1.5"] { #expect(Augmentation.integers(bad) == nil, "\(bad)") }
        for bad in ["1.1..0.9", "nan", "inf", "1..x", ""] { #expect(Augmentation.reals(bad) == nil, "\(bad)") }
        #expect(Augmentation.isBackwards("2..-2") && !Augmentation.isBackwards("-2..2") && !Augmentation.isBackwards("x"))
    }

    // MARK: The manifest

    /// The `augment` object is JSON, present only with augmentation; lines with and
    /// without it are read back alike when a batch is resumed.
    @Test func manifestLine_carriesTheDraw_andOlderLinesStayReadable() throws {
        var entry = ManifestEntry(input: "in/a.mid", output: "out/a.wav", status: .ok, carillonVersion: "1", soundFont: "f.sf2", soundFontBytes: 3)
        let old = entry.jsonLine
        #expect(!old.contains("augment"))
        entry.augmentation = Augmentation.Draw(seed: 7, transpose: -1, tempo: 1.083, velocityScale: 0.9, programMapName: "pianos.yaml")
        entry.notesDropped = 2
        let line = entry.jsonLine
        #expect(line.hasPrefix("{\"augment\":{\"notes_dropped\":2,\"program_map\":\"pianos.yaml\",\"seed\":7,\"tempo\":1.083,\"transpose\":-1,\"velocity_scale\":0.9},"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect((object["augment"] as? [String: Any])?["tempo"] as? Double == 1.083)
        let b = old.replacingOccurrences(of: "a.", with: "b.")
        let items = [BatchItem(input: "in/a.mid", key: "a.mid", output: "out/a.wav"), BatchItem(input: "in/b.mid", key: "b.mid", output: "out/b.wav")]
        let kept = ManifestWriter.reconcile(line + "\n" + b + "\n", items: items, skipped: { _ in true })
        #expect(kept.unreadable == 0 && kept.recorded == ["in/a.mid", "in/b.mid"] && kept.lines == [line, b])
    }

    // MARK: The piece as rendered

    static func render(_ input: String, _ draw: Augmentation.Draw?, maxDuration: Double? = nil) throws -> RenderJob.Summary {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = RenderJob.Options()
        options.labels = true
        options.maxDuration = maxDuration
        let job = try RenderJob(soundFont: timGM, options: options)
        return try job.render(input: input, to: .file("\(dir)/out.wav", format: .wav, encoding: .pcm16), augmentation: draw)
    }

    static var pianos: ProgramMap {
        var map = ProgramMap()
        for p in 0...7 { map[UInt7(p)] = 5 }
        map[40] = 41
        return map
    }

    /// A real General MIDI file (channel 4 on program 0 then 5, channel 9 on 7, drums on 10):
    /// every non-drum pitch moved by exactly 2, drums left, velocities scaled, pianos mapped to 5.
    @Test func transposeVelocityAndProgramMap_showInTheLabels_drumsLeft() throws {
        let input = "\(openmsx)/tttheme2.mid"
        let plain = try #require(try Self.render(input, nil, maxDuration: 15).labels).notes
        let draw = Augmentation.Draw(transpose: 2, velocityScale: 0.7, programMap: Self.pianos, programMapName: "pianos.yaml")
        let summary = try Self.render(input, draw, maxDuration: 15)
        let notes = try #require(summary.labels).notes
        #expect(summary.augmentation == draw && summary.notesDropped == 0)
        #expect(plain.count > 300 && notes.count == plain.count)
        #expect(plain.contains { $0.drum } && plain.contains { !$0.drum && $0.program <= 7 })
        func row(_ n: RenderLabels.Note) -> [Double] {
            [n.onset, n.offset, Double(n.channel), Double(n.pitch), Double(n.velocity), Double(n.program), Double(n.bank), n.drum ? 1 : 0]
        }
        // What each note should become: pitch + 2 but drums, velocity × 0.7 rounded, programs 0...7 → 5 but drums.
        let expected = plain.map { n -> [Double] in
            var n = n
            if !n.drum { n.pitch += 2; if n.program <= 7 { n.program = 5 } }
            n.velocity = max(1, min(127, Int((Double(n.velocity) * 0.7).rounded())))
            return row(n)
        }
        func sorted(_ rows: [[Double]]) -> [[Double]] { rows.sorted { $0.lexicographicallyPrecedes($1) } }
        #expect(sorted(expected) == sorted(notes.map(row)))
        #expect(notes.contains { $0.channel == 4 && $0.program == 5 } && !notes.contains { !$0.drum && $0.program < 5 })
    }

    /// Tempo 2: the piece lasts half as long, every note at half its time (within a block).
    @Test func tempo2_halvesThePieceAndItsNoteTimes() throws {
        let input = "\(openmsx)/harp_harmony.mid"
        let plain = try Self.render(input, nil, maxDuration: 20)
        let fast = try Self.render(input, Augmentation.Draw(tempo: 2), maxDuration: 10)
        let block = 64.0 / 44_100
        #expect(abs(fast.pieceDuration - plain.pieceDuration / 2) <= block)
        let a = try #require(plain.labels), b = try #require(fast.labels)
        func times(_ notes: [RenderLabels.Note]) -> [String: [Double]] {
            Dictionary(grouping: notes, by: { "\($0.channel) \($0.pitch)" }).mapValues { $0.map(\.onset).sorted() }
        }
        let slow = times(a.notes.filter { $0.onset < 19.9 }), quick = times(b.notes)
        #expect(slow.keys.sorted() == quick.keys.sorted() && b.notes.count > 50)
        for (key, onsets) in quick {
            for (t, t0) in zip(onsets, slow[key]!) { #expect(abs(t - t0 / 2) <= block, "\(key)") }
        }
        // The tempo map and the beats are the file's, twice as fast.
        #expect(zip(a.tempos, b.tempos).allSatisfy { abs($1.beatsPerMinute - 2 * $0.beatsPerMinute) < 0.01 })
        #expect(zip(a.beats.prefix(20), b.beats.prefix(20)).allSatisfy { abs($1.time - $0.time / 2) < 1e-5 })
    }

    /// A file written here: a channel with no program change, a note pushed past 127,
    /// a velocity-0 note-on, a GS drum part on channel 11, the Power kit on 10, a GS reset first.
    static func song() -> [UInt8] {
        let gsReset: [UInt8] = [0x41, 0x10, 0x42, 0x12, 0x40, 0x00, 0x7F, 0x00, 0x41]
        let gsDrumPart11: [UInt8] = [0x41, 0x10, 0x42, 0x12, 0x40, 0x1A, 0x15, 0x02, 0x0F]
        var events: [TrackEvent] = [
            TrackEvent(tick: 0, event: .midi(.sysEx(.init(data: gsReset)))),
            TrackEvent(tick: 10, event: .midi(.sysEx(.init(data: gsDrumPart11)))),
            TrackEvent(tick: 20, event: .midi(.programChange(40, channel: 1))),
            TrackEvent(tick: 20, event: .midi(.programChange(16, channel: 9))),   // the Power kit
            TrackEvent(tick: 20, event: .midi(.programChange(0, channel: 10))),
        ]
        func note(_ tick: UInt64, _ key: UInt7, _ velocity: UInt7, _ channel: Channel, velocityZeroOff: Bool = false) {
            events.append(TrackEvent(tick: tick, event: .midi(.noteOn(key, velocity: velocity, channel: channel))))
            events.append(TrackEvent(tick: tick + 200, event: velocityZeroOff ? .midi(.noteOn(key, velocity: 0, channel: channel))
                                                                             : .midi(.noteOff(key, channel: channel))))
        }
        note(480, 60, 100, 0, velocityZeroOff: true)
        note(960, 126, 1, 0)
        note(1440, 64, 90, 1)
        note(1920, 36, 120, 9)
        note(2400, 38, 80, 10)
        events.sort { $0.tick < $1.tick }
        return StandardMIDIFile(format: .singleTrack, division: .ticksPerQuarterNote(480), tracks: [Track(events: events)]).serialized()
    }

    @Test func notesPastTheRange_areDropped_drumsFoundAsFluidSynthPlaysThem() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(FileManager.default.createFile(atPath: "\(dir)/song.mid", contents: Data(Self.song())))
        let plain = try #require(try Self.render("\(dir)/song.mid", nil).labels).notes
        #expect(plain.map(\.drum) == [false, false, false, true, true])   // the GS drum part makes channel 11 drums
        var map = Self.pianos
        map[16] = 24   // Drawbar Organ → Nylon Guitar; on drums it would pick the Electronic kit
        let draw = Augmentation.Draw(transpose: 3, velocityScale: 0.5, programMap: map)
        let summary = try Self.render("\(dir)/song.mid", draw)
        let notes = try #require(summary.labels).notes
        #expect(summary.notesDropped == 1)
        func row(_ n: RenderLabels.Note) -> [Int] { [n.channel, n.pitch, n.velocity, n.program, n.bank, n.drum ? 1 : 0] }
        #expect(notes.map(row) == [
            [1, 63, 50, 5, 0, 0],      // no program change: program 0, mapped to 5
            [2, 67, 45, 41, 0, 0],     // 40 → 41; 126 + 3 was dropped
            [10, 36, 60, 16, 128, 1],  // drums: the kit and the key kept, the velocity scaled
            [11, 38, 40, 0, 128, 1],
        ])
        // The velocity-0 note-on still ends its note (at the file's 200 ticks), and the dropped note left nothing.
        #expect(abs(notes[0].offset - notes[0].onset - 200.0 / 960) < 64.0 / 44_100)
        #expect(!notes.contains { $0.pitch > 127 || $0.pitch == 126 })
    }
}
