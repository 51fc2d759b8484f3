import Testing
import Foundation
@testable import OfflineRender
@testable import MappingFiles
import Engine
import MIDI
import Parameters
import FluidSynth
import Sampling

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
        let font = DrawFont(name: "a.sf2", presets: (0..<128).map { FontPreset(bank: 0, program: $0, name: "p\($0)") }
                            + [FontPreset(bank: 128, program: 0, name: "Standard"), FontPreset(bank: 128, program: 8, name: "Room")])
        let draw = TimbreDraw(source: .perTrack, seed: 7, key: "a/song.mid")
        let (key, pianos) = draw.candidates(program: 3, fonts: [font])
        #expect(pianos.map(\.program) == Array(0...7))
        let first = draw.pick(track: 2, key: key, among: pianos)
        #expect(TimbreDraw(source: .perTrack, seed: 7, key: "a/song.mid").pick(track: 2, key: key, among: pianos)?.program == first?.program)
        var seen = Set<Int>()
        for track in 0..<64 { seen.insert(draw.pick(track: track, key: key, among: pianos)!.program) }
        #expect(seen == Set(0...7), "64 tracks drew \(seen.sorted())")
        #expect(draw.candidates(program: nil, fonts: [font]).presets.map(\.name) == ["Standard", "Room"])
        var keys = Set<Int>()
        for k in 0..<32 { keys.insert(TimbreDraw(source: .perTrack, seed: 7, key: "song\(k).mid").pick(track: 2, key: key, among: pianos)!.program) }
        #expect(keys.count > 4, "the key moves the draw")
    }

    /// Two fonts laid out side by side (`FontBankLayout`): a class draws among both fonts' presets, the
    /// drum kits come from the font at offset 0 only, and a font's presets past bank select's reach are left out.
    static let setFonts = [
        DrawFont(name: "A.sf2", presets: [FontPreset(bank: 0, program: 0, name: "A Grand"), FontPreset(bank: 8, program: 1, name: "A Bright"),
                                          FontPreset(bank: 0, program: 40, name: "A Violin"), FontPreset(bank: 128, program: 0, name: "A Kit")]),
        DrawFont(name: "B.sf2", presets: [FontPreset(bank: 0, program: 0, name: "B Grand"), FontPreset(bank: 0, program: 2, name: "B Upright"),
                                          FontPreset(bank: 0, program: 40, name: "B Violin"), FontPreset(bank: 128, program: 0, name: "B Kit")]),
    ]

    @Test func aDrawAcrossFonts_takesEveryFontsPresetsOfTheClass_andDrumsFromTheHomeFont() throws {
        let layout = try FontBankLayout(melodicBanks: Self.setFonts.map { $0.presets.map(\.bank) }, names: ["A.sf2", "B.sf2"], home: 1)
        #expect(layout.offsets == [1, 0], "B at home takes bank 0, A its banks 0...8 from 1")
        var fonts = Self.setFonts
        for f in fonts.indices { fonts[f].bankOffset = layout.offsets[f] }
        let draw = TimbreDraw(source: .perTrack, seed: 3, key: "song.mid")
        let pianos = draw.candidates(program: 0, fonts: fonts).presets
        #expect(pianos.map(\.name) == ["A Grand", "A Bright", "B Grand", "B Upright"])
        #expect(draw.candidates(program: nil, fonts: fonts).presets.map(\.name) == ["B Kit"])
        // Tracks draw from both fonts for some seed; the same seed, the same draws.
        var fontsDrawn = Set<Int>()
        for track in 0..<16 { fontsDrawn.insert(draw.pick(track: track, key: "class 0", among: pianos)!.font) }
        #expect(fontsDrawn == [0, 1])
        // One font: the draw within it, as before the set.
        let alone = TimbreDraw(source: .perTrack, seed: 3, key: "song.mid").candidates(program: 0, fonts: [Self.setFonts[1]]).presets
        #expect(alone.map(\.name) == ["B Grand", "B Upright"])
        // A font whose banks would pass 127 at its offset loses those presets.
        fonts[0].bankOffset = 120
        #expect(draw.candidates(program: 0, fonts: fonts).presets.map(\.name) == ["A Grand", "B Grand", "B Upright"])
    }

    /// The draw's score selects each drawn preset by its bank plus its font's offset; drums by program alone.
    @Test func aDrawAcrossFonts_selectsByTheFontsOffsetBank_andTheManifestNamesTheFont() throws {
        var fonts = Self.setFonts
        fonts[0].bankOffset = 1
        let pool = try TimbrePoolFile.parse(yaml: "piano: [\"A.sf2:8:1\"]\ndrums: [0]\n")
        let draw = TimbreDraw(source: .pool(pool, name: "pool"), seed: 1, key: "k")
        var score = Score(events: [
            Score.Event(seconds: 0, message: .noteOn(60, velocity: 100, channel: 0), track: 1),
            Score.Event(seconds: 0, message: .noteOn(36, velocity: 100, channel: 9), track: 2),
        ], duration: 1)
        score.duration = 1
        let result = draw.apply(to: score, notePresets: [(0, 0), (128, 0)], skipping: 0, fonts: fonts, trackNames: ["", "Piano", "Drums"])
        let selects = result.score.events.map(\.message).filter { $0.kind == 0xB0 || $0.kind == 0xC0 }
        #expect(selects == [.controlChange(0, value: 9, channel: 0), .programChange(1, channel: 0), .programChange(0, channel: 9)], "\(selects)")
        #expect(result.picks.map(\.soundFont) == ["A.sf2", "B.sf2"], "\(result.picks)")
        #expect(result.picks.map(\.bank) == [8, 128] && result.picks.map(\.preset) == ["A Bright", "B Kit"])
    }

    /// Across a set, a track that draws nothing keeps the home font's preset: a file's own bank
    /// select the home font lacks becomes bank 0 (as FluidSynth falls back with that font alone), never
    /// another font's bank at its offset; one the home font has stays.
    @Test func aSetTrackThatDrawsNothing_keepsTheHomeFontsPreset() throws {
        var fonts = Self.setFonts
        fonts[0].bankOffset = 1   // A from bank 1 on: A's 8:1 at bank 9, and bank 8 is A's 7
        let draw = TimbreDraw(source: .pool(try TimbrePoolFile.parse(yaml: "strings: [40]\n"), name: "pool"), seed: 1, key: "k")
        func selects(bank: UInt8, program: UInt8) -> [ChannelMessage] {
            let score = Score(events: [
                Score.Event(seconds: 0, message: .controlChange(0, value: bank, channel: 0), track: 1),
                Score.Event(seconds: 0, message: .programChange(program, channel: 0), track: 1),
                Score.Event(seconds: 0, message: .noteOn(60, velocity: 100, channel: 0), track: 1),
            ], duration: 1)
            let result = draw.apply(to: score, notePresets: [(0, Int(program))], skipping: 0, fonts: fonts, trackNames: ["", "Piano"])
            #expect(result.picks.isEmpty)
            return result.score.events.map(\.message).filter { $0.kind == 0xB0 || $0.kind == 0xC0 }
        }
        #expect(selects(bank: 8, program: 1) == [.controlChange(0, value: 8, channel: 0), .controlChange(0, value: 0, channel: 0), .programChange(1, channel: 0)])
        #expect(selects(bank: 0, program: 2) == [.controlChange(0, value: 0, channel: 0), .controlChange(0, value: 0, channel: 0), .programChange(2, channel: 0)])
    }

    /// The layout refuses fonts whose banks do not fit side by side in bank select's reach.
    @Test func aLayoutPastBank127_isRefusedWithTheFontsRooms() {
        #expect(throws: FontBankLayoutError.self) {
            try FontBankLayout(melodicBanks: [[0, 100], [0, 40], [128]], names: ["a.sf2", "b.sf2", "c.sf2"], home: 0)
        }
        do {
            _ = try FontBankLayout(melodicBanks: [[0, 100], [0, 40]], names: ["a.sf2", "b.sf2"], home: 0)
        } catch {
            #expect(error.description.hasPrefix("--timbres across the fonts needs 142 banks side by side (a.sf2: banks 0...100, b.sf2: banks 0...40)"))
        }
        #expect((try? FontBankLayout(melodicBanks: [[0, 100], [0, 26], [128]], names: ["a", "b", "c"], home: 2))?.offsets == [0, 101, 0])
    }

    /// FluidSynth itself, with both real fonts in one synth at the layout's offsets: a bank select
    /// plus program change reaches each font's preset, a drum channel the home font's kits.
    @Test func oneSynthWithBothFontsAtTheLayoutsOffsets_reachesEachFontsPresets() throws {
        let paths = ["/usr/share/sounds/sf2/FluidR3_GM.sf2", timGM]
        let presets = try paths.map { try SoundFont.presets(at: $0) }
        for home in 0..<2 {
            let layout = try FontBankLayout(melodicBanks: presets.map { $0.map(\.bank) }, names: paths, home: home)
            let settings = try Settings.forRendering(sampleRate: 44_100, gain: 0.2)
            let synth = try Synth(settings: settings)
            var ids: [Int32] = [0, 0]
            var loaded: [SoundFont] = []   // a SoundFont unloads its font when it goes
            for f in [1 - home, home] {
                let font = f == home ? try synth.loadSoundFont(at: paths[f]) : try synth.loadExtraSoundFont(at: paths[f])
                try synth.setBankOffset(layout.offsets[f], of: font)
                ids[f] = font.id
                loaded.append(font)
            }
            for f in 0..<2 {
                for p in presets[f] where p.bank <= 127 {
                    let bank = p.bank + layout.offsets[f]
                    #expect(synth.controlChange(channel: 0, controller: 0, value: Int32(bank)) && synth.programChange(channel: 0, program: Int32(p.program)))
                    let got = synth.preset(onChannel: 0)
                    #expect(got == Synth.PresetAddress(soundFontID: ids[f], bank: Int32(p.bank), program: Int32(p.program)),
                            "\(paths[f]) \(p.bank):\(p.program) at bank \(bank), home \(home): got \(String(describing: got))")
                }
            }
            for p in presets[home] where p.bank == 128 {
                #expect(synth.programChange(channel: 9, program: Int32(p.program)))
                #expect(synth.preset(onChannel: 9) == Synth.PresetAddress(soundFontID: ids[home], bank: 128, program: Int32(p.program)))
            }
            // Pinning names a preset by its font's own bank (the offset added inside).
            try synth.pin(Synth.PresetAddress(soundFontID: ids[1 - home], bank: 0, program: 0))
            withExtendedLifetime(loaded) {}
        }
    }

    static let fluidR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"

    /// A job drawing across TimGM6mb (its home) and FluidR3_GM.
    static func setJob(maxDuration: Double = 6) throws -> RenderJob {
        var options = RenderJob.Options()
        options.labels = true
        options.maxDuration = maxDuration
        let fonts = [SharedSoundFont(path: timGM), SharedSoundFont(path: fluidR3)]
        return try RenderJob(soundFont: fonts[0], options: options, drawSet: fonts)
    }

    /// Across a set: for some seed harp_harmony's two string tracks play presets of both fonts, each
    /// note's label names its track's font and preset, and the same seed renders the same bytes.
    @Test func aSetDraw_playsTwoFontsInOnePiece_labelsNameEachNotesFont_andRerunsAreTheSameBytes() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = "\(openmsx)/harp_harmony.mid"
        var found: (seed: UInt64, summary: RenderJob.Summary)? = nil
        for seed: UInt64 in 1...30 where found == nil {
            let summary = try Self.setJob().render(input: file, to: .file("\(dir)/a.wav", format: .wav, encoding: .float32),
                                                   augmentation: Self.draw(seed: seed, key: "harp_harmony.mid"))
            let strings = summary.timbres.filter { $0.family == "Strings" }
            if strings.count >= 2 && Set(strings.map(\.soundFont)).count == 2 { found = (seed, summary) }
        }
        let (seed, summary) = try #require(found, "no seed in 1...30 drew the string tracks from both fonts")
        let notes = try #require(summary.labels).notes
        #expect(Set(notes.map(\.soundFont)) == ["TimGM6mb.sf2", "FluidR3_GM.sf2"])
        for note in notes {
            let picks = summary.timbres.filter { $0.track == note.track && $0.channel == note.channel }
            #expect(picks.contains { $0.soundFont == note.soundFont && $0.bank == note.bank && $0.program == note.program && $0.preset == note.preset },
                    "track \(note.track) plays \(note.soundFont) \(note.bank):\(note.program) \(note.preset), drew \(picks)")
        }
        #expect(summary.timbres.filter { $0.family == "Drums" }.allSatisfy { $0.soundFont == "TimGM6mb.sf2" }, "drums come from the home font")
        let again = try Self.setJob().render(input: file, to: .file("\(dir)/b.wav", format: .wav, encoding: .float32),
                                             augmentation: Self.draw(seed: seed, key: "harp_harmony.mid"))
        #expect(again.timbres == summary.timbres)
        #expect(FileManager.default.contents(atPath: "\(dir)/a.wav") == FileManager.default.contents(atPath: "\(dir)/b.wav"))
        // The draw differs from the draw within the home font alone: sounds of the other font are in the audio.
        let alone = try Self.job().render(input: file, to: .file("\(dir)/c.wav", format: .wav, encoding: .float32),
                                          augmentation: Self.draw(seed: seed, key: "harp_harmony.mid"))
        #expect(FileManager.default.contents(atPath: "\(dir)/a.wav") != FileManager.default.contents(atPath: "\(dir)/c.wav"))
        #expect(alone.timbres.allSatisfy { $0.soundFont == "TimGM6mb.sf2" })
    }

    /// A piece whose tracks all draw from the home font renders, with the set's other font loaded beside
    /// it, the same bytes as the home font alone with the same picks (a pool naming only home presets).
    @Test func aSetDrawOfHomePresetsOnly_rendersTheHomeFontsBytes() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = "\(openmsx)/harp_harmony.mid"
        let inSet = try TimbrePoolFile.parse(yaml: "strings: [\"TimGM6mb:40\", \"TimGM6mb:41\", \"TimGM6mb:42\"]\ndrums: [\"TimGM6mb:0\"]\n")
        let alone = try TimbrePoolFile.parse(yaml: "strings: [40, 41, 42]\ndrums: [0]\n")
        let a = try Self.setJob(maxDuration: 20).render(input: file, to: .file("\(dir)/set.wav", format: .wav, encoding: .float32),
                                         augmentation: Self.draw(.pool(inSet, name: "pool"), seed: 4, key: "harp_harmony.mid"))
        let b = try Self.job().render(input: file, to: .file("\(dir)/alone.wav", format: .wav, encoding: .float32),
                                      augmentation: Self.draw(.pool(alone, name: "pool"), seed: 4, key: "harp_harmony.mid"))
        #expect(!a.timbres.isEmpty && a.timbres == b.timbres, "\(a.timbres) against \(b.timbres)")
        let setBytes = try #require(FileManager.default.contents(atPath: "\(dir)/set.wav"))
        let aloneBytes = try #require(FileManager.default.contents(atPath: "\(dir)/alone.wav"))
        let firstDifference = zip(setBytes, aloneBytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        #expect(setBytes.count > 100_000 && setBytes == aloneBytes,
                "\(setBytes.count) bytes against \(aloneBytes.count), first difference at byte \(firstDifference ?? -1)")
        #expect(try #require(a.labels).notes == (try #require(b.labels).notes))
    }

    /// Pool entries may name their font: `FONT:BANK:PROGRAM`, `FONT:PROGRAM`, or a list per font.
    @Test func poolFile_readsPresetsWithTheirFont() throws {
        let pool = try TimbrePoolFile.parse(yaml: "piano: [0, FluidR3_GM:8:4, \"TimGM6mb.sf2:2\"]\nstrings: {FluidR3_GM: [40, \"0:41\"], TimGM6mb: [42]}\ndrums: [\"TimGM6mb:0\"]\n")
        #expect(pool.byClass[0] == [.init(bank: 0, program: 0), .init(bank: 8, program: 4, font: "FluidR3_GM"), .init(bank: 0, program: 2, font: "TimGM6mb.sf2")])
        #expect(pool.byClass[5] == [.init(bank: 0, program: 40, font: "FluidR3_GM"), .init(bank: 0, program: 41, font: "FluidR3_GM"),
                                    .init(bank: 0, program: 42, font: "TimGM6mb")])
        #expect(pool.drums == [.init(bank: 128, program: 0, font: "TimGM6mb")])
        let p = TimbrePool.Preset(bank: 0, program: 0, font: "fluidr3_gm")
        #expect(p.isIn(font: "FluidR3_GM.sf2") && p.isIn(font: "FluidR3_GM") && !p.isIn(font: "TimGM6mb.sf2"))
        #expect(TimbrePool.Preset(bank: 0, program: 0).isIn(font: "TimGM6mb.sf2"))
        do {
            _ = try TimbrePoolFile.parse(yaml: "piano: {FluidR3_GM: [\"TimGM6mb:0:1\"], 3: [0]}\nbass: [\":4\"]\n", file: "p.yaml")
            Issue.record("no error")
        } catch {
            let lines = error.description.split(separator: "\n").map(String.init)
            #expect(lines.count == 3, "\(lines)")
            #expect(lines.first?.hasPrefix("p.yaml:1:22: error: 'TimGM6mb:0:1' names a font in FluidR3_GM's list") == true, "\(lines)")
            #expect(lines.dropFirst().first?.hasPrefix("p.yaml:1:39: error: expected a SoundFont's name as a key") == true, "\(lines)")
            #expect(lines.last?.hasPrefix("p.yaml:2:8: error: expected a preset as BANK:PROGRAM") == true, "\(lines)")
        }
    }

    /// A preset naming a font: a font that is none of the set is a mistake with the closest name;
    /// a preset its font lacks, with the closest of that font.
    @Test func poolPresetsNamingAFont_areCheckedAgainstThatFont() throws {
        let pool = try TimbrePoolFile.parse(yaml: "piano: [\"FluidR3:0:0\", \"b:8:4\", \"a:0:4\"]\n", file: "p.yaml")
        let a = TimbrePool.Font(name: "a.sf2", presets: [FontPreset(bank: 0, program: 4, name: "EP")])
        let b = TimbrePool.Font(name: "b.sf2", presets: [FontPreset(bank: 0, program: 5, name: "EP 2"), FontPreset(bank: 8, program: 5, name: "Detuned EP 2")])
        let fluid = TimbrePool.Font(name: "FluidR3_GM.sf2", presets: [FontPreset(bank: 0, program: 0, name: "Yamaha Grand Piano")])
        let lines = try #require(pool.missing(from: [a, b, fluid])).diagnostics.map(\.description)
        #expect(lines == [
            "p.yaml:1:9: error: font 'FluidR3' is none of the fonts (a.sf2, b.sf2, FluidR3_GM.sf2); did you mean 'FluidR3_GM'?",
            "p.yaml:1:24: error: preset b:8:4 is not in b.sf2; did you mean b:8:5 (Detuned EP 2)? (`carillon presets FONT` lists a font's presets)",
        ], "\(lines)")
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
