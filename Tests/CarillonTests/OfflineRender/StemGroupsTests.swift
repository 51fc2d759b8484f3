import Testing
import Foundation
@testable import OfflineRender
import Engine
import MIDI
import Parameters
import SoundFile

/// `--stems-by channel|track|program`: the score split so each channel holds
/// one group, the group stems adding up to the mixdown, `NAME.stems.json`.
@Suite(.serialized) struct StemGroupsTests {
    static func job(_ grouping: StemGrouping, settings: [ParameterChange] = [], maxDuration: Double? = 30) throws -> RenderJob {
        var options = RenderJob.Options()
        options.stems = true
        options.stemsBy = grouping
        options.labels = true
        options.maxDuration = maxDuration
        options.host.settings = settings
        return try RenderJob(soundFont: timGM, options: options)
    }

    /// The worst difference between the stems' sum and the mixdown, in dB below the mix's peak.
    static func residual(mix path: String, stems dir: String) throws -> (dB: Double, names: [String]) {
        let names = try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
        let mix = try AudioFileReader(path: path)
        var sum = [Double](repeating: 0, count: mix.samples.count)
        for name in names {
            let stem = try AudioFileReader(path: "\(dir)/\(name)")
            let sameLength = stem.frames == mix.frames
            #expect(sameLength, "\(name): \(stem.frames) frames, mix \(mix.frames)")
            for i in 0..<min(sum.count, stem.samples.count) { sum[i] += Double(stem.samples[i]) }
        }
        var worst = 0.0, peak = 0.0
        for i in sum.indices {
            worst = max(worst, abs(sum[i] - Double(mix.samples[i])))
            peak = max(peak, Double(abs(mix.samples[i])))
        }
        #expect(peak > 0.01, "the mix sounds")
        return (worst > 0 ? 20 * log10(worst / peak) : -.infinity, names)
    }

    /// Every stem's note count in the report is the labels' count of notes naming it.
    static func checkCounts(_ report: StemReport, _ labels: RenderLabels) {
        var counts: [String: Int] = [:]
        for n in labels.notes { counts[n.stem, default: 0] += 1 }
        for stem in report.stems {
            #expect(stem.notes == counts[stem.name] ?? 0, "\(stem.name): report \(stem.notes), labels \(counts[stem.name] ?? 0)")
        }
        #expect(Set(counts.keys).isSubset(of: Set(report.stems.map(\.name))), "every labelled stem is in the report")
        #expect(report.stems.reduce(0) { $0 + $1.notes } == labels.notes.count)
    }

    // MARK: Real files

    @Test(arguments: [StemGrouping.channel, .track, .program])
    func realFiles_stemsAddUpToTheMixdown_andTheReportCountsTheLabels(_ grouping: StemGrouping) throws {
        // Files where a channel carries two tracks (keep_on_rolling: channel 5; modern_motion: drums on
        // channel 10, kept) or two programs (no_work_song_redfarn: channel 1), or both (tttheme2).
        var moves = 0
        for file in ["tttheme2.mid", "keep_on_rolling.mid", "no_work_song_redfarn.mid", "modern_motion.mid"] {
            let dir = scratchDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let summary = try Self.job(grouping).render(input: "\(openmsx)/\(file)", to: .file("\(dir)/mix.wav", format: .wav, encoding: .float32, stems: RenderJob.StemFolder("\(dir)/stems")))
            let (dB, names) = try Self.residual(mix: "\(dir)/mix.wav", stems: "\(dir)/stems")
            let report = try #require(summary.stemReport)
            let labels = try #require(summary.labels)
            moves += report.moves.count
            print("stems-by \(grouping) \(file): \(names.count) stems, \(report.moves.count) moves, \(report.kept.count) kept, worst stem-sum residual \(dB) dB")
            #expect(dB < -60, "\(file): stems differ from the mix by \(dB) dB")
            #expect(report.stems.filter { !$0.silent }.map { $0.name + ".wav" }.sorted() == names)
            Self.checkCounts(report, labels)
            for note in labels.notes {
                switch grouping {
                case .channel:
                    #expect(note.stem == ParameterAddress.StripID.channel(note.channel - 1).fileStem())
                case .track:
                    #expect(note.stem.hasPrefix(String(format: "track%02d", note.track)), "\(note.stem) holds track \(note.track)")
                case .program:
                    let kept = report.kept.contains { $0.channel == note.channel }
                    if !kept {
                        #expect(note.stem == (note.drum ? "drums" : StemGroups.programStem(note.program)), "\(note.stem): \(note.program)")
                    }
                }
            }
            if grouping == .channel { #expect(report.moves.isEmpty && names.allSatisfy { $0.hasPrefix("ch") }) }
            for stem in report.stems where !stem.silent {
                #expect(stem.peakDBFS != nil && stem.loudness != nil, "\(stem.name) has a peak and a loudness")
            }
        }
        #expect(grouping == .channel ? moves == 0 : moves > 0, "notes moved: \(moves)")
    }

    // MARK: A file written here

    /// Format 1, 480 ticks a beat at 120 bpm: Piano (8 notes) and Bass (6) share
    /// channel 1; Strings on channel 2 plays 4 notes on program 48, then 4 on 40
    /// (violin) after a program change and a pitch bend; Drums on channel 10 (6);
    /// Mute on channel 3 (program 71, 3 notes), whose strip is muted.
    /// `drumPart4`: a GS SysEx makes part 4 (channel 4, the first the piece leaves free) a drum part.
    static func song(drumPart4: Bool = false) -> [UInt8] {
        func vlq(_ v: Int) -> [UInt8] {
            var out = [UInt8(v & 0x7F)], v = v >> 7
            while v > 0 { out.insert(UInt8(v & 0x7F) | 0x80, at: 0); v >>= 7 }
            return out
        }
        func be(_ v: Int, _ n: Int) -> [UInt8] { (0..<n).map { UInt8((v >> (8 * (n - 1 - $0))) & 0xFF) } }
        func track(_ name: String, _ events: [(Int, [UInt8])]) -> [UInt8] {
            var t: [UInt8] = vlq(0)
            t += [0xFF, 0x03, UInt8(name.utf8.count)]
            t += Array(name.utf8)
            var now = 0
            for (tick, bytes) in events.enumerated().sorted(by: { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }).map(\.element) {
                t += vlq(tick - now) + bytes
                now = tick
            }
            t += vlq(0) + [0xFF, 0x2F, 0]
            return Array("MTrk".utf8) + be(t.count, 4) + t
        }
        func notes(_ channel: UInt8, _ count: Int, start: Int = 0, offset: Int = 0, length: Int = 400, key: (Int) -> Int) -> [(Int, [UInt8])] {
            var out: [(Int, [UInt8])] = []
            for i in 0..<count {
                let at: Int = (start + i) * 480 + offset
                let k = UInt8(key(i))
                let on: [UInt8] = [0x90 | channel, k, 100]
                let off: [UInt8] = [0x80 | channel, k, 0]
                out.append((at, on))
                out.append((at + length, off))
            }
            return out
        }
        typealias Events = [(Int, [UInt8])]
        var conductor: Events = [(0, [0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20])]
        if drumPart4 { conductor.append((0, [0xF0, 10, 0x41, 0x10, 0x42, 0x12, 0x40, 0x14, 0x15, 0x02, 0x15, 0xF7])) }
        let piano: Events = [(0, [0xC0, 0])] + notes(0, 8) { 60 + $0 % 5 }
        let bass: Events = notes(0, 6, offset: 240, length: 200) { 36 + $0 }
        var strings: Events = [(0, [0xC1, 48]), (0, [0xB1, 7, 100])]
        strings += notes(1, 4) { _ in 67 }
        strings += [(8 * 480, [0xC1, 40]), (9 * 480 - 10, [0xE1, 0, 0x48])]
        strings += notes(1, 4, start: 8) { _ in 72 }
        let drums: Events = notes(9, 6, length: 100) { $0 % 2 == 0 ? 36 : 38 }
        let mute: Events = [(0, [0xC2, 71])] + notes(2, 3, start: 2) { _ in 65 }   // after the first block: the mute is ramped in
        let tracks: [[UInt8]] = [track("Conductor", conductor), track("Piano", piano), track("Bass", bass),
                                 track("Strings", strings), track("Drums", drums), track("Mute", mute)]
        return Array("MThd".utf8) + be(6, 4) + be(1, 2) + be(tracks.count, 2) + be(480, 2) + tracks.flatMap { $0 }
    }

    static let muteChannel3 = [ParameterChange(.strip(.channel(Channel(truncatingIfNeeded: 2)), .mute), 1)]

    @Test func writtenFile_byTrack_movesBassToAFreeChannel_andListsTheMutedTrackSilent() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(atPath: "\(dir)/song.mid", contents: Data(Self.song()))
        let summary = try Self.job(.track, settings: Self.muteChannel3, maxDuration: nil)
            .render(input: "\(dir)/song.mid", to: .file("\(dir)/mix.wav", format: .wav, encoding: .float32, stems: RenderJob.StemFolder("\(dir)/stems")))
        let report = try #require(summary.stemReport)
        let labels = try #require(summary.labels)
        #expect(report.moves == [StemReport.Move(group: "track02-bass", fromChannel: 1, toChannel: 4, notes: 6)])
        #expect(report.kept.isEmpty)
        #expect(report.silent == ["track05-mute"])
        let (dB, names) = try Self.residual(mix: "\(dir)/mix.wav", stems: "\(dir)/stems")
        print("stems-by track, written file: worst stem-sum residual \(dB) dB")
        #expect(dB < -60)
        #expect(names == ["track01-piano.wav", "track02-bass.wav", "track03-strings.wav", "track04-drums.wav"])
        Self.checkCounts(report, labels)
        let bass = labels.notes.filter { $0.trackName == "Bass" }
        #expect(bass.count == 6 && bass.allSatisfy { $0.channel == 4 && $0.stem == "track02-bass" && $0.program == 0 })
        #expect(labels.notes.filter { $0.trackName == "Piano" }.allSatisfy { $0.channel == 1 && $0.stem == "track01-piano" })
        let drums = try #require(report.stems.first { $0.name == "track04-drums" })
        #expect(drums.drums && drums.notes == 6 && drums.channels == [10] && drums.trackNames == ["Drums"])
        let mute = try #require(report.stems.first { $0.name == "track05-mute" })
        #expect(mute.silent && mute.file == nil && mute.notes == 3 && mute.programs == [71] && mute.gmClasses == ["Reed"])

        // The JSON beside the output loads, and says the same.
        let path = try report.write(beside: "\(dir)/mix.wav")
        #expect(path == "\(dir)/mix.stems.json")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        #expect(json["grouping"] as? String == "track")
        #expect(json["silent"] as? [String] == ["track05-mute"])
        let stems = try #require(json["stems"] as? [[String: Any]])
        #expect(stems.count == 5)
        #expect(stems.compactMap { $0["notes"] as? Int }.reduce(0, +) == labels.notes.count)
        let moves = try #require(json["moves"] as? [[String: Any]])
        #expect(moves.first?["to_channel"] as? Int == 4)
    }

    @Test func writtenFile_byProgram_movesTheViolinNotes_andTheSplitPieceSoundsTheSame() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(atPath: "\(dir)/song.mid", contents: Data(Self.song()))
        let summary = try Self.job(.program, settings: Self.muteChannel3, maxDuration: nil)
            .render(input: "\(dir)/song.mid", to: .file("\(dir)/mix.wav", format: .wav, encoding: .float32, stems: RenderJob.StemFolder("\(dir)/stems")))
        let report = try #require(summary.stemReport)
        let labels = try #require(summary.labels)
        #expect(report.moves == [StemReport.Move(group: "prog040-violin", fromChannel: 2, toChannel: 4, notes: 4)])
        #expect(report.silent == ["prog071-clarinet"])
        let (dB, names) = try Self.residual(mix: "\(dir)/mix.wav", stems: "\(dir)/stems")
        print("stems-by program, written file: worst stem-sum residual \(dB) dB")
        #expect(dB < -60)
        #expect(names == ["drums.wav", "prog000-acoustic-grand-piano.wav", "prog040-violin.wav", "prog048-string-ensemble-1.wav"])
        Self.checkCounts(report, labels)
        let piano = try #require(report.stems.first { $0.name == "prog000-acoustic-grand-piano" })
        #expect(piano.notes == 14 && piano.trackNames == ["Piano", "Bass"] && piano.gmClasses == ["Piano"])
        let violin = labels.notes.filter { $0.stem == "prog040-violin" }
        #expect(violin.count == 4 && violin.allSatisfy { $0.channel == 4 && $0.program == 40 && $0.pitch == 72 })

        // The same piece without grouping: the moved notes sound as they did (same program, same bend).
        var options = RenderJob.Options()
        options.stems = true
        options.host.settings = Self.muteChannel3
        _ = try RenderJob(soundFont: timGM, options: options)
            .render(input: "\(dir)/song.mid", to: .file("\(dir)/plain.wav", format: .wav, encoding: .float32, stems: RenderJob.StemFolder("\(dir)/plain")))
        let a = try AudioFileReader(path: "\(dir)/mix.wav").samples, b = try AudioFileReader(path: "\(dir)/plain.wav").samples
        #expect(a.count == b.count)
        var worst: Float = 0, peak: Float = 0
        for i in 0..<min(a.count, b.count) { worst = max(worst, abs(a[i] - b[i])); peak = max(peak, abs(b[i])) }
        let db = 20 * log10(Double(worst) / Double(peak))
        print("stems-by program, written file: split mix against the unsplit mix \(db) dB")
        #expect(db < -60)
    }

    /// A free channel a SysEx made a drum part would play the violin notes as drums: they stay.
    @Test func writtenFile_aFreeChannelMadeDrumsBySysEx_takesNoNotes() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(atPath: "\(dir)/song.mid", contents: Data(Self.song(drumPart4: true)))
        let job = try Self.job(.program, settings: Self.muteChannel3, maxDuration: nil)
        let summary = try job.render(input: "\(dir)/song.mid", to: .file("\(dir)/mix.wav", format: .wav, encoding: .float32, stems: RenderJob.StemFolder("\(dir)/stems")))
        let report = try #require(summary.stemReport)
        let labels = try #require(summary.labels)
        #expect(report.moves.isEmpty)
        #expect(report.kept.map(\.group) == ["prog040-violin"] && report.kept.first?.stem == "prog048-string-ensemble-1")
        #expect(job.log.take().contains { $0.contains("prog040-violin stay on channel 2") })
        let violin = labels.notes.filter { $0.program == 40 }
        #expect(violin.count == 4 && violin.allSatisfy { $0.channel == 2 && !$0.drum && $0.stem == "prog048-string-ensemble-1" })
        let (dB, _) = try Self.residual(mix: "\(dir)/mix.wav", stems: "\(dir)/stems")
        #expect(dB < -60)
    }

    // MARK: The split itself

    /// Two groups on one channel: the second's notes on a free channel, every
    /// other event of the channel copied there, drums and pinned channels kept.
    @Test func split_movesNotes_copiesChannelEvents_keepsDrumsAndPinned() {
        func e(_ t: Double, _ status: UInt8, _ d1: UInt8, _ d2: UInt8 = 0, track: UInt16) -> Score.Event {
            Score.Event(seconds: t, message: ChannelMessage(status: status, data1: d1, data2: d2), track: track)
        }
        let score = Score(events: [
            e(0, 0xC0, 5, track: 1), e(0, 0xB0, 7, 90, track: 1),
            e(1, 0x90, 60, 100, track: 1), e(1, 0x90, 40, 100, track: 2), e(1.5, 0xE0, 0, 0x50, track: 1),
            e(2, 0x80, 60, track: 1), e(2, 0x80, 40, track: 2),
            e(1.8, 0x90, 60, 100, track: 2), e(3.5, 0x80, 60, track: 2),   // the key track 1 holds, taken by track 2
            e(1, 0x99, 36, 100, track: 3), e(1, 0x99, 38, 100, track: 4), e(2, 0x89, 36, track: 3), e(2, 0x89, 38, track: 4),
            e(1, 0x92, 50, 100, track: 5), e(1, 0x92, 52, 100, track: 6),
        ])
        let presets: [(bank: Int, program: Int)?] = [(0, 5), (0, 5), (128, 0), (128, 0), (0, 0), (0, 0), (0, 5)]
        // Note-ons in score order: t=1 ch0 60, ch0 40, ch9 36, ch9 38, ch2 50, ch2 52; t=1.8 ch0 60.
        // Channel 1: track 2 has 2 notes, track 1 one: track 1 moves to the first free channel (2; 3 is pinned).
        let ordered: [(bank: Int, program: Int)?] = [presets[0], presets[1], presets[2], presets[3], presets[4], presets[5], presets[6]]
        let split = StemGroups.split(score, by: .track, notePresets: ordered, skipping: 0, pinned: 1 << 2,
                                     trackNames: ["", "A", "B", "Kick", "Snare", "P", "Q"])
        #expect(split.moves == [StemGroups.Move(from: 0, to: 1, group: "track01-a", notes: 1)])
        #expect(split.kept.map(\.reason) == ["the channel has settings of its own (--set, --insert)", "drum notes stay on their channel"])
        #expect(split.kept.map(\.stem) == ["track05-p", "track03-kick"])
        #expect(split.stemOfChannel[0] == "track02-b" && split.stemOfChannel[1] == "track01-a" && split.stemOfChannel[9] == "track03-kick")
        // Channel 2 (0-based 1): the copies of channel 1's program, volume and bend, track 1's note, and
        // its note-off where track 2 takes the key (FluidSynth would have released it there).
        let moved = split.score.events.filter { $0.message.channel == 1 }.map { [Int($0.message.status), Int($0.message.data1), Int($0.message.data2)] }
        #expect(moved == [[0xC1, 5, 0], [0xB1, 7, 90], [0x91, 60, 100], [0xE1, 0, 0x50], [0x81, 60, 0]])
        let ch0 = split.score.events.filter { $0.message.channel == 0 && $0.message.kind != 0xC0 && $0.message.kind != 0xB0 && $0.message.kind != 0xE0 }
        #expect(ch0.map { [Int($0.message.status), Int($0.message.data1)] } == [[0x90, 40], [0x90, 60], [0x80, 60], [0x80, 40], [0x80, 60]])
        #expect(split.score.events.filter { $0.message.channel == 0 }.count == 8, "the original channel keeps its events")
    }
}
