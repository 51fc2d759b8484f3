import Testing
import Foundation
@testable import OfflineRender
@testable import MappingFiles
import Engine
import MIDI
import Parameters

/// `--timbres`: each track's instrument drawn (`TimbreDraw`), its pool file (`TimbrePoolFile`).
@Suite(.serialized) struct TimbreDrawTests {
    static func job() throws -> RenderJob {
        var options = RenderJob.Options()
        options.labels = true
        options.maxDuration = 20
        return try RenderJob(soundFont: timGM, options: options)
    }

    static func draw(_ source: TimbreSource = .perTrack, seed: UInt64 = 1, key: String) -> Augmentation.Draw {
        var a = Augmentation()
        a.timbres = source
        a.seed = seed
        return a.draw(forKey: key)
    }

    /// keep_on_rolling has two tracks on channel 5: they are moved apart and each plays what it drew.
    @Test func tracksSharingAChannel_areMovedApart_andEachNotePlaysItsTracksDraw() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = "\(openmsx)/keep_on_rolling.mid"
        let plain = try Self.job().render(input: file, to: .file("\(dir)/plain.wav", format: .wav, encoding: .float32))
        let shared = Dictionary(grouping: try #require(plain.labels).notes.filter { !$0.drum }, by: \.channel)
            .filter { Set($0.value.map(\.track)).count > 1 }
        #expect(!shared.isEmpty, "keep_on_rolling has a channel with two tracks")
        let summary = try Self.job().render(input: file, to: .file("\(dir)/drawn.wav", format: .wav, encoding: .float32),
                                            augmentation: Self.draw(key: "keep_on_rolling.mid"))
        let notes = try #require(summary.labels).notes
        #expect(!summary.timbres.isEmpty)
        for (_, sharing) in shared {
            let tracks = Set(sharing.map(\.track))
            let channels = Set(notes.filter { tracks.contains($0.track) }.map(\.channel))
            #expect(channels.count == tracks.count, "tracks \(tracks.sorted()) sound on channels \(channels.sorted())")
        }
        for note in notes {
            let picks = summary.timbres.filter { $0.track == note.track && $0.channel == note.channel }
            #expect(picks.contains { $0.bank == note.bank && $0.program == note.program && $0.preset == note.preset },
                    "track \(note.track) plays \(note.bank):\(note.program) \(note.preset), drew \(picks)")
            if let pick = picks.first {
                #expect(pick.family == (note.drum ? "Drums" : GeneralMIDI.className(program: note.program)))
            }
        }
    }

    /// The split that moves tracks apart before the draw is in the stems report's `moves`: with
    /// `--stems-by track` the same moves as without `--timbres` (the stems' own split then finds
    /// nothing to move), with `--stems-by program` before the stems' own.
    @Test(arguments: [StemGrouping.track, .program])
    func timbreSplitsMoves_areInTheStemsReport(_ grouping: StemGrouping) throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Piano and Bass share channel 1 (`StemGroupsTests.song`).
        FileManager.default.createFile(atPath: "\(dir)/song.mid", contents: Data(StemGroupsTests.song()))
        let bassMove = StemReport.Move(group: "track02-bass", fromChannel: 1, toChannel: 4, notes: 6)
        let plain = try StemGroupsTests.job(grouping, maxDuration: nil)
            .render(input: "\(dir)/song.mid", to: .file("\(dir)/plain.wav", format: .wav, encoding: .float32,
                                                      stems: RenderJob.StemFolder("\(dir)/plain")))
        let drawn = try StemGroupsTests.job(grouping, maxDuration: nil)
            .render(input: "\(dir)/song.mid", to: .file("\(dir)/drawn.wav", format: .wav, encoding: .float32,
                                                      stems: RenderJob.StemFolder("\(dir)/drawn")),
                    augmentation: Self.draw(key: "song.mid"))
        let before = try #require(plain.stemReport), after = try #require(drawn.stemReport)
        #expect(drawn.timbres.contains { $0.trackName == "Bass" && $0.channel == 4 }, "\(drawn.timbres)")
        #expect(after.moves.first == bassMove, "\(after.moves)")
        if grouping == .track {
            #expect(before.moves == [bassMove] && after.moves == before.moves && after.kept == before.kept)
        } else {
            // Program: the draw's split first, then the stems' own moves of the drawn programs.
            #expect(after.moves.dropFirst().allSatisfy { $0.group.hasPrefix("prog") }, "\(after.moves)")
        }
    }

    /// A pool's presets against the fonts: each in none of them is a mistake at its place, with the
    /// closest they have (the same program in the nearest bank, else the nearest of its class; none of another class).
    @Test func poolPresetsInNoFont_areMistakesAtTheirPlace_withTheClosest() throws {
        let pool = try TimbrePoolFile.parse(yaml: "piano: [0, \"8:4\", \"1:5\"]\ndrums: [0, 99]\n40: [\"16:40\"]\n", file: "p.yaml")
        let a = TimbrePool.Font(name: "a.sf2", presets: [FontPreset(bank: 0, program: 0, name: "Grand"), FontPreset(bank: 0, program: 4, name: "EP"),
                                                         FontPreset(bank: 0, program: 6, name: "Harpsichord"), FontPreset(bank: 128, program: 0, name: "Standard"),
                                                         FontPreset(bank: 128, program: 96, name: "Jazz")])
        let b = TimbrePool.Font(name: "b.sf2", presets: [FontPreset(bank: 8, program: 4, name: "Detuned EP"), FontPreset(bank: 8, program: 40, name: "Slow Violin")])
        let missing = try #require(pool.missing(from: [a]))
        #expect(missing.diagnostics.map(\.description) == [
            "p.yaml:1:12: error: preset 8:4 is in none of the fonts (a.sf2); did you mean 0:4 (EP)? (`carillon presets FONT` lists a font's presets)",
            "p.yaml:1:19: error: preset 1:5 is in none of the fonts (a.sf2); did you mean 0:4 (EP)? (`carillon presets FONT` lists a font's presets)",
            "p.yaml:2:12: error: preset 128:99 is in none of the fonts (a.sf2); did you mean 128:96 (Jazz)? (`carillon presets FONT` lists a font's presets)",
            "p.yaml:3:6: error: preset 16:40 is in none of the fonts (a.sf2) (`carillon presets FONT` lists a font's presets)",
        ])
        // With b, 8:4 is there, and 16:40's closest is b's 8:40, named with its font.
        let two = try #require(pool.missing(from: [a, b])).diagnostics.map(\.description)
        #expect(two.count == 3 && !two.contains { $0.contains("preset 8:4 ") }, "\(two)")
        #expect(two.last?.contains("preset 16:40 is in none of the fonts (a.sf2, b.sf2); did you mean 8:40 (Slow Violin, in b.sf2)?") == true, "\(two)")
        #expect(try TimbrePoolFile.parse(yaml: "piano: [0, 4]\ndrums: [0]\n").missing(from: [a]) == nil)
    }

    /// A GS reset at the start sets every program back to 0: the draw comes after it, before the first note.
    @Test func aResetAtTheStart_doesNotUndoTheDraw() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let gsReset: [UInt8] = [0x00, 0xF0, 0x0A, 0x41, 0x10, 0x42, 0x12, 0x40, 0x00, 0x7F, 0x00, 0x41, 0xF7]
        let notes: [UInt8] = [0x00, 0x90, 60, 100, 0x83, 0x60, 0x80, 60, 0, 0x00, 0x90, 64, 100, 0x83, 0x60, 0x80, 64, 0]
        let track = gsReset + notes + [0x00, 0xFF, 0x2F, 0x00]
        let bytes = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0] + Array("MTrk".utf8) + [0, 0, 0, UInt8(track.count)] + track
        FileManager.default.createFile(atPath: "\(dir)/reset.mid", contents: Data(bytes))
        let pool = try TimbrePoolFile.parse(yaml: "piano: [5]")
        let summary = try Self.job().render(input: "\(dir)/reset.mid", to: .file("\(dir)/out.wav", format: .wav, encoding: .float32),
                                            augmentation: Self.draw(.pool(pool, name: "pool"), key: "reset.mid"))
        let notesPlayed = try #require(summary.labels).notes
        #expect(notesPlayed.count == 2 && notesPlayed.allSatisfy { $0.program == 5 && $0.bank == 0 }, "\(notesPlayed)")
        #expect(summary.timbres.map(\.program) == [5] && summary.timbres.first?.fromProgram == 0)
    }

    /// A type 0 file: one track, its parts on channels. Two piano channels draw apart for some seed.
    @Test func aType0FilesChannels_drawApart() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var track: [UInt8] = []
        for c: UInt8 in [0, 1] { track += [0x00, 0x90 | c, 60 + c * 4, 100] }
        track += [0x83, 0x60, 0x80, 60, 0, 0x00, 0x81, 64, 0, 0x00, 0xFF, 0x2F, 0x00]
        let bytes = Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0] + Array("MTrk".utf8) + [0, 0, 0, UInt8(track.count)] + track
        FileManager.default.createFile(atPath: "\(dir)/type0.mid", contents: Data(bytes))
        var apart = false
        for seed: UInt64 in 1...6 where !apart {
            let summary = try Self.job().render(input: "\(dir)/type0.mid", to: .file("\(dir)/out.wav", format: .wav, encoding: .float32),
                                                augmentation: Self.draw(seed: seed, key: "type0.mid"))
            let picks = summary.timbres
            #expect(picks.count == 2 && Set(picks.map(\.channel)) == [1, 2] && picks.allSatisfy { $0.track == 0 && $0.family == "Piano" })
            apart = Set(picks.map(\.program)).count == 2
        }
        #expect(apart, "the two piano channels of one track drew the same preset for every seed 1...6")
    }

    /// A track's draw depends on the seed, the key and the track only, and spreads over the class.
    @Test func aDraw_isTheSeedKeyAndTracks_andSpreadsOverTheClass() throws {
        let font: [TimbreDraw.FontPreset] = (0..<128).map { (0, $0, "p\($0)") } + [(128, 0, "Standard"), (128, 8, "Room")]
        let draw = TimbreDraw(source: .perTrack, seed: 7, key: "a/song.mid")
        let (key, pianos) = draw.candidates(program: 3, font: font)
        #expect(pianos.map(\.program) == Array(0...7))
        let first = draw.pick(track: 2, key: key, among: pianos)
        #expect(TimbreDraw(source: .perTrack, seed: 7, key: "a/song.mid").pick(track: 2, key: key, among: pianos)?.program == first?.program)
        var seen = Set<Int>()
        for track in 0..<64 { seen.insert(draw.pick(track: track, key: key, among: pianos)!.program) }
        #expect(seen == Set(0...7), "64 tracks drew \(seen.sorted())")
        #expect(draw.candidates(program: nil, font: font).presets.map(\.name) == ["Standard", "Room"])
        var keys = Set<Int>()
        for k in 0..<32 { keys.insert(TimbreDraw(source: .perTrack, seed: 7, key: "song\(k).mid").pick(track: 2, key: key, among: pianos)!.program) }
        #expect(keys.count > 4, "the key moves the draw")
    }

    @Test func poolFile_readsClassesProgramsAndDrums_unquotedBankProgramToo() throws {
        let pool = try TimbrePoolFile.parse(yaml: "piano: [0, 1, 8:4]\n40: [0:40, \"0:41\"]\nSynth Lead: 80\ndrums: [0, 128:8]\n")
        #expect(pool.byClass[0] == [.init(bank: 0, program: 0), .init(bank: 0, program: 1), .init(bank: 8, program: 4)])
        #expect(pool.byProgram[40] == [.init(bank: 0, program: 40), .init(bank: 0, program: 41)])
        #expect(pool.byClass[10] == [.init(bank: 0, program: 80)])
        #expect(pool.drums == [.init(bank: 128, program: 0), .init(bank: 128, program: 8)])
        #expect(pool.candidates(program: 40).count == 2 && pool.candidates(program: 41).isEmpty && pool.candidates(program: 5).count == 3)
        let json = try TimbrePoolFile.parse(yaml: #"{"strings": [40, "0:41"], "drums": [0]}"#)
        #expect(json.byClass[5]?.count == 2 && json.drums == [.init(bank: 128, program: 0)])
    }

    @Test func poolFile_reportsEveryMistakeAtOnce() {
        do {
            _ = try TimbrePoolFile.parse(yaml: "pianos: [0]\nguitar: [0, 300]\ndrums: [\"0:1\"]\npiano: x\n", file: "p.yaml")
            Issue.record("no error")
        } catch {
            let lines = error.description.split(separator: "\n").map(String.init)
            #expect(lines.count == 4, "\(lines)")
            #expect(lines[0].hasPrefix("p.yaml:1:1: error: 'pianos' is no General MIDI class"))
            #expect(lines[1].hasPrefix("p.yaml:2:13: error: program 300 is out of range"))
            #expect(lines[2].hasPrefix("p.yaml:3:9: error: drums draw among drum kits"))
            #expect(lines[3].hasPrefix("p.yaml:4:8: error: expected a preset as BANK:PROGRAM"))
        }
    }
}
