import Testing
import Foundation
import Sampling
import OfflineRender
import Engine
import FluidSynth
import MIDI
import SoundFile
import Threads

/// Samples selected by note (`RenderJob.Options.selectsSamplesByNotes`): a
/// render through the reduced view of the font is the same, byte for byte,
/// as one with the file loaded whole (FluidSynth's default; FluidSynth 2.3's
/// on-demand loader plays 46 words past each sample's end, which the view
/// makes up for: `SoundFontHydra.samplesEndingEarlier`) — real pieces, drums, program changes
/// mid-piece, GS and XG drum parts, mono legato, MIDI tuning, one synth or
/// two, one piece or a batch — and a font this reader cannot take falls
/// back to whole presets.
@Suite(.serialized) struct SampleSelectionTests {
    static let fluidR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"

    /// Renders each of `inputs` in turn with one job; returns each output's bytes (float WAV) and the job's log.
    /// `whole`: the file loaded whole, no samples on demand (and so none selected).
    static func render(_ inputs: [String], font: String = fluidR3, byNotes: Bool, whole: Bool = false, threads: Int = 1,
                       maxDuration: Double? = nil, oscillatorChannels: [Int] = []) throws -> (outputs: [Data], log: [String]) {
        var options = RenderJob.Options()
        options.threads = threads
        options.selectsSamplesByNotes = byNotes
        options.loadsSamplesOnDemand = !whole
        options.maxDuration = maxDuration
        options.host.oscillatorChannels = oscillatorChannels
        let job = try RenderJob(soundFont: font, options: options)
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var outputs: [Data] = []
        for (i, input) in inputs.enumerated() {
            _ = try job.render(input: input, to: .file("\(dir)/\(i).wav", format: .wav, encoding: .float32))
            outputs.append(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(i).wav")))
        }
        return (outputs, job.log.take())
    }

    /// By note and with the file loaded whole, compared; the outputs must not be silent.
    static func expectSameBytes(_ inputs: [String], font: String = fluidR3, threads: Int = 1, maxDuration: Double? = nil,
                                oscillatorChannels: [Int] = [], _ comment: String) throws {
        let byNotes = try render(inputs, font: font, byNotes: true, threads: threads, maxDuration: maxDuration,
                                 oscillatorChannels: oscillatorChannels)
        let loadedWhole = try render(inputs, font: font, byNotes: false, whole: true, threads: threads, maxDuration: maxDuration,
                                     oscillatorChannels: oscillatorChannels)
        #expect(byNotes.log.isEmpty, "\(byNotes.log)")
        for (a, b) in zip(byNotes.outputs, loadedWhole.outputs) {
            // Compared as a Bool: a failure names the first differing byte, not megabytes of diff.
            let identical = a == b
            let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
            #expect(identical, "\(comment): the renders differ from byte \(first) (sizes \(a.count), \(b.count))")
            #expect(a.count > 10_000 && a.dropFirst(100).contains { $0 != 0 }, "\(comment): silent")
        }
    }

    /// Real pieces: drums on every one; busy_schedule, modern_motion and
    /// harp_harmony change programs mid-piece (11, 8 and 1 channels).
    static let pieces = ["linns_basket", "chuggachugga", "busy_schedule", "modern_motion", "harp_harmony"]

    @Test(arguments: pieces, [1, 2])
    func realPiece_byNotes_isTheFileLoadedWhole_byteForByte(piece: String, threads: Int) throws {
        // linns_basket whole with one synth; otherwise the first 30 s (the views still keep what the rest plays).
        let whole = piece == "linns_basket" && threads == 1
        try Self.expectSameBytes(["\(openmsx)/\(piece).mid"], threads: threads, maxDuration: whole ? nil : 30,
                                 "\(piece), \(threads) synths")
    }

    /// One job, several pieces: each piece's view replaces the last in every
    /// synth (the pieces are cut while notes sound, so voices are ended first).
    @Test(arguments: [1, 2])
    func batch_byNotes_isTheFileLoadedWhole_byteForByte(threads: Int) throws {
        let inputs = ["ultimate_run", "no_work_song_redfarn", "tttheme2", "ultimate_run"].map { "\(openmsx)/\($0).mid" }
        try Self.expectSameBytes(inputs, threads: threads, maxDuration: 12, "batch, \(threads) synths")
    }

    // MARK: Files built from real ones

    /// `piece`'s events, each channel moved as `move` says, `setup` events at its start; written to a scratch file.
    static func variant(of piece: String, moving move: [UInt8: UInt8] = [:], setup: [FileEvent], named name: String) throws -> String {
        var file = try StandardMIDIFile(bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(openmsx)/\(piece).mid"))))
        for t in file.tracks.indices {
            file.tracks[t].events = file.tracks[t].events.map { e in
                guard case .midi(let m) = e.event else { return e }
                return TrackEvent(tick: e.tick, event: .midi(Self.moved(m, move)))
            }
        }
        // Setup at tick 0, before the piece's own first events.
        let start = setup.map { TrackEvent(tick: 0, event: $0) }
        file.tracks[0].events = start + file.tracks[0].events
        let path = NSTemporaryDirectory() + "carillon-selection-\(getpid())-\(name).mid"
        FileManager.default.createFile(atPath: path, contents: Data(file.serialized()))
        return path
    }

    static func moved(_ m: MIDIMessage, _ move: [UInt8: UInt8]) -> MIDIMessage {
        func to(_ c: Channel) -> Channel { Channel(move[c.value] ?? c.value) }
        switch m {
        case .noteOn(let x): return .noteOn(x.note, velocity: x.velocity, channel: to(x.channel))
        case .noteOff(let x): return .noteOff(x.note, velocity: x.velocity, channel: to(x.channel))
        case .controlChange(let x): return .controlChange(.init(channel: to(x.channel), controller: x.controller, value: x.value))
        case .programChange(let x): return .programChange(.init(channel: to(x.channel), program: x.program))
        case .pitchBend(let x): return .pitchBend(.init(channel: to(x.channel), value: x.value))
        case .channelPressure(let x): return .channelPressure(.init(channel: to(x.channel), pressure: x.pressure))
        case .polyPressure(let x): return .polyPressure(x.note, pressure: x.pressure, channel: to(x.channel))
        default: return m
        }
    }

    /// What one synth's pass finds in `path` (FluidR3, samples on demand).
    static func selection(_ path: String, skipping: UInt16 = 0) throws -> FluidSynthInstrument.Selection {
        let settings = try Settings.forRendering(sampleRate: 44_100)
        try settings.set("synth.dynamic-sample-loading", true)
        let synth = try Synth(settings: settings)
        let font = try synth.loadSoundFont(at: fluidR3)
        defer { withExtendedLifetime(font) {} }
        return try FluidSynthInstrument(synth: synth).pinPresets(selectedBy: Score(contentsOf: path), skipping: skipping)
    }

    /// chuggachugga's drums moved to channel 11, made a drum part by a Roland
    /// GS DT1 (after a GS reset) or by a Yamaha XG System On and bank 127.
    @Test(arguments: ["GS", "XG"])
    func drumPartBySysEx_byNotes_isTheFileLoadedWhole_byteForByte(standard: String) throws {
        let gsReset: [UInt8] = [0x41, 0x10, 0x42, 0x12, 0x40, 0x00, 0x7F, 0x00, 0x41]
        let gsDrumPart11: [UInt8] = [0x41, 0x10, 0x42, 0x12, 0x40, 0x1A, 0x15, 0x02, 0x0F]
        let xgSystemOn: [UInt8] = [0x43, 0x10, 0x4C, 0x00, 0x00, 0x7E, 0x00]
        let setup: [FileEvent] = standard == "GS"
            ? [.midi(.sysEx(gsReset)), .midi(.sysEx(gsDrumPart11))]
            : [.midi(.sysEx(xgSystemOn)), .midi(.cc(0, value: 127, channel: Channel(10)))]
        let path = try Self.variant(of: "chuggachugga", moving: [9: 10], setup: setup, named: standard)
        defer { unlink(path) }
        let selection = try Self.selection(path)
        #expect(selection.percussionChannels & 1 << 10 != 0, "channel 11 plays no drums")
        #expect(selection.notes.plays(bank: 128, program: 0) || selection.notes.plays(bank: 128, program: 16)
                || selection.notes.presetCount > 0)
        try Self.expectSameBytes([path], threads: 2, maxDuration: 30, "\(standard) drum part")
    }

    /// TimGM6mb does not pad its samples with zeros, so FluidSynth 2.3's
    /// on-demand loader, left to itself, plays into the next sample (-11.6 dB
    /// in harp_harmony's worst second): every General MIDI program at a low, a
    /// middle and a high key, released to its end, and the drum kit, then a real
    /// piece. Seven of its samples (single-cycle waves of 16–39 words, under
    /// leads, reeds and the bagpipe) are too short for their ends to move; they
    /// loop, so the voice never reaches the end the loader gave them.
    @Test func timGM6mb_everyProgram_andARealPiece_byNotes_isTheFileLoadedWhole() throws {
        var events: [(UInt64, MIDIMessage)] = []
        for program in 0..<129 {
            let at = UInt64(program) * 240, drums = program == 128
            let ch = Channel(drums ? 9 : 0)
            if !drums { events.append((at, .programChange(UInt7(program), channel: ch))) }
            for key: UInt7 in drums ? [36, 38, 42, 49] : [36, 60, 84] {
                events.append((at + 1, .noteOn(key, velocity: 100, channel: ch)))
                events.append((at + 120, .noteOff(key, channel: ch)))
            }
        }
        let file = StandardMIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(480),
                                    tracks: [Track(events: events.map { TrackEvent(tick: $0.0, event: .midi($0.1)) })])
        let path = NSTemporaryDirectory() + "carillon-selection-\(getpid())-programs.mid"
        FileManager.default.createFile(atPath: path, contents: Data(file.serialized()))
        defer { unlink(path) }
        try Self.expectSameBytes([path], font: timGM, "TimGM6mb, every program")
        try Self.expectSameBytes(["\(openmsx)/harp_harmony.mid"], font: timGM, maxDuration: 30, "TimGM6mb, harp_harmony")
    }

    /// A mono legato channel returns to the note still held, at its velocity,
    /// on the preset the channel has then (here one it has not played yet).
    @Test(arguments: [68, 126])
    func monoLegato_returnToAHeldNote_byNotes_isTheFileLoadedWhole(controller: UInt8) throws {
        let ch = Channel(0)
        let events: [(UInt64, MIDIMessage)] = [
            (0, .cc(UInt7(controller), value: controller == 68 ? 127 : 1, channel: ch)),
            (0, .programChange(0, channel: ch)),                       // piano
            (100, .noteOn(48, velocity: 40, channel: ch)),
            (600, .noteOn(72, velocity: 120, channel: ch)),             // legato from 48
            (900, .programChange(48, channel: ch)),                    // strings, 48 still held
            (1_200, .noteOff(72, channel: ch)),                        // back to 48 at 40, on the strings
            (2_400, .noteOff(48, channel: ch)),
        ]
        let file = StandardMIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(480),
                                    tracks: [Track(events: events.map { TrackEvent(tick: $0.0, event: .midi($0.1)) })])
        let path = NSTemporaryDirectory() + "carillon-selection-\(getpid())-mono\(controller).mid"
        FileManager.default.createFile(atPath: path, contents: Data(file.serialized()))
        defer { unlink(path) }
        let notes = try Self.selection(path).notes
        #expect(notes.contains(bank: 0, program: 48, keys: 48...48, velocities: 40...40))
        try Self.expectSameBytes([path], "mono via CC \(controller)")
    }

    /// MIDI Tuning moves the key FluidSynth picks zones by: +63 cents on
    /// every note of every channel makes each key pick the zones of the next.
    @Test func midiTuning_byNotes_isTheFileLoadedWhole() throws {
        let tuning: [UInt8] = [0x7E, 0x7F, 0x08, 0x08, 0x03, 0x7F, 0x7F] + [UInt8](repeating: 0x7F, count: 12)
        let path = try Self.variant(of: "linns_basket", setup: [.midi(.sysEx(tuning))], named: "tuned")
        defer { unlink(path) }
        // The whole piece: the notes whose shifted keys pick zones of their own come late.
        try Self.expectSameBytes([path], "MIDI tuning")
    }

    /// Oscillator channels never reach the synths: their notes keep no zone.
    @Test func oscillatorChannels_keepNoZones_andRenderTheSame() throws {
        let path = "\(openmsx)/chuggachugga.mid"
        let all = try Self.selection(path), skipping = try Self.selection(path, skipping: 0xFFFF & ~(1 << 9))
        #expect(all.notes.presetCount > 2)
        #expect(skipping.notes.presetCount == 1)   // the drum kit only
        try Self.expectSameBytes([path], maxDuration: 30, oscillatorChannels: [0, 1, 2], "oscillator channels")
    }

    // MARK: SF3

    static let museScoreLite = "/usr/share/sounds/sf3/MuseScore_General_Lite.sf3"
    static let fluidR3Mono = "/usr/share/sounds/sf3/FluidR3Mono_GM.sf3"

    /// SF3 (Ogg Vorbis samples: FluidSynth decodes those the piece's notes
    /// sound, each from its byte range) by note is the font loaded whole (every
    /// sample decoded at load), byte for byte, on one synth or two.
    @Test(arguments: [museScoreLite, fluidR3Mono], [1, 2])
    func sf3_realPiece_byNotes_isTheFontLoadedWhole(font: String, threads: Int) throws {
        try Self.expectSameBytes(["\(openmsx)/busy_schedule.mid"], font: font, threads: threads, maxDuration: 30,
                                 "\(font), busy_schedule, \(threads) synths")
    }

    /// Every openmsx piece, whole, with MuseScore_General_Lite.sf3: by note
    /// (one job, a view per piece) is the font loaded whole (another job),
    /// byte for byte, piece after piece. Minutes on a debug build: kept out of the
    /// test command (busy_schedule above stands for it there) and run on demand:
    ///     CARILLON_SF3_CORPUS=1 swift test --skip-build --filter sf3_everyOpenmsxPiece
    @Test(.enabled(if: ProcessInfo.processInfo.environment["CARILLON_SF3_CORPUS"] != nil))
    func sf3_everyOpenmsxPiece_byNotes_isTheFontLoadedWhole() throws {
        let pieces = try FileManager.default.contentsOfDirectory(atPath: openmsx).filter { $0.hasSuffix(".mid") }.sorted()
        #expect(pieces.count == 31)
        func job(byNotes: Bool) throws -> RenderJob {
            var options = RenderJob.Options()
            options.selectsSamplesByNotes = byNotes
            options.loadsSamplesOnDemand = byNotes
            return try RenderJob(soundFont: Self.museScoreLite, options: options)
        }
        let byNotes = try job(byNotes: true), loadedWhole = try job(byNotes: false)
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var same = 0
        for piece in pieces {
            func render(_ job: RenderJob, _ name: String) throws -> Data {
                _ = try job.render(input: "\(openmsx)/\(piece)", to: .file("\(dir)/\(name).wav", format: .wav, encoding: .float32))
                return try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(name).wav"))
            }
            let a = try render(byNotes, "notes"), b = try render(loadedWhole, "whole")
            let identical = a == b
            let first = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
            #expect(identical, "\(piece): the renders differ from byte \(first) (sizes \(a.count), \(b.count))")
            #expect(a.count > 10_000 && a.dropFirst(100).contains { $0 != 0 }, "\(piece): silent")
            if identical { same += 1 }
        }
        let log = byNotes.log.take()
        #expect(log.isEmpty, "\(log)")
        print("MuseScore_General_Lite.sf3: \(same) of \(pieces.count) openmsx pieces by note byte for byte the font loaded whole")
    }

    /// The by-preset warning only for a damaged font: Debian's SF3 fonts
    /// select by note, saying nothing; a copy cut short (the first half of
    /// FluidR3Mono_GM.sf3) is refused here, with the warning naming why, and
    /// FluidSynth refuses it too, so the job fails as it does by preset.
    @Test func sf3_onlyADamagedFont_warns() throws {
        for font in [Self.museScoreLite, Self.fluidR3Mono] {
            let log = HostLog()
            let selection = SampleSelection(soundFont: SharedSoundFont(path: font), byNotes: true, log: log)
            #expect(selection.byNotes)
            #expect(log.take().isEmpty)
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.fluidR3Mono))
        let cut = NSTemporaryDirectory() + "carillon-selection-\(getpid())-cut.sf3"
        FileManager.default.createFile(atPath: cut, contents: bytes.prefix(bytes.count / 2))
        defer { unlink(cut) }
        let log = HostLog()
        let selection = SampleSelection(soundFont: SharedSoundFont(path: cut), byNotes: true, log: log)
        #expect(!selection.byNotes)
        let lines = log.take()
        #expect(lines.count == 1)
        #expect(lines.first?.contains("samples loaded by preset, not by note (unexpected SoundFont structure: RIFF size is not the file's)") == true,
                "\(lines)")
        func failure(_ byNotes: Bool) -> String? {
            var options = RenderJob.Options()
            options.selectsSamplesByNotes = byNotes
            do { _ = try RenderJob(soundFont: cut, options: options); return nil } catch { return "\(error)" }
        }
        #expect(failure(true) != nil)
        #expect(failure(true) == failure(false))
    }

    // MARK: Fallback

    /// A font this reader refuses and FluidSynth loads (bytes after its
    /// sample headers, which FluidSynth never reads): whole presets, said in
    /// the job's log, the same sound.
    @Test func unreadableFont_fallsBackToPresets() throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: carillonTestFont)))
        // The pdta list is the font's last chunk: 4 more bytes in it, and in the RIFF.
        var at = 12
        while at + 8 + Self.word32(bytes, at + 4) < bytes.count { at += 8 + Self.word32(bytes, at + 4) }
        #expect(Array(bytes[at + 8..<at + 12]) == Array("pdta".utf8))
        bytes += [0, 0, 0, 0]
        Self.put32(&bytes, at + 4, Self.word32(bytes, at + 4) + 4)
        Self.put32(&bytes, 4, bytes.count - 8)
        let font = NSTemporaryDirectory() + "carillon-selection-\(getpid())-extra.sf2"
        FileManager.default.createFile(atPath: font, contents: Data(bytes))
        defer { unlink(font) }
        let input = "\(openmsx)/chuggachugga.mid"
        let byNotes = try Self.render([input], font: font, byNotes: true, maxDuration: 20)
        let byPresets = try Self.render([input], font: font, byNotes: false, maxDuration: 20)
        #expect(byNotes.log.count == 1)
        #expect(byNotes.log.first?.contains("samples loaded by preset, not by note") == true, "\(byNotes.log)")
        let identical = byNotes.outputs == byPresets.outputs
        #expect(identical)
        #expect(byNotes.outputs[0].dropFirst(100).contains { $0 != 0 })
    }

    static func word32(_ b: [UInt8], _ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 | Int(b[at + 3]) << 24 }
    static func put32(_ b: inout [UInt8], _ at: Int, _ v: Int) { for i in 0..<4 { b[at + i] = UInt8(v >> (8 * i) & 0xFF) } }

    /// A cut font: FluidSynth cannot load it either, and the job says so as before.
    @Test func truncatedFont_failsAsByPresets() throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: carillonTestFont)))
        bytes.removeLast(100)
        Self.put32(&bytes, 4, bytes.count - 8)
        let font = NSTemporaryDirectory() + "carillon-selection-\(getpid())-cut.sf2"
        FileManager.default.createFile(atPath: font, contents: Data(bytes))
        defer { unlink(font) }
        func failure(_ byNotes: Bool) -> String? {
            var options = RenderJob.Options()
            options.selectsSamplesByNotes = byNotes
            do { _ = try RenderJob(soundFont: font, options: options); return nil } catch { return "\(error)" }
        }
        #expect(failure(true) != nil)
        #expect(failure(true) == failure(false))
    }

    /// What the pass before a piece costs, and what it keeps (printed for the record).
    @Test func selectionCost_linnsBasket() throws {
        let input = "\(openmsx)/linns_basket.mid"
        let clock = ContinuousClock()
        let file = try SoundFontFile(path: Self.fluidR3)
        var selection: FluidSynthInstrument.Selection!
        let pass = try clock.measure { selection = try Self.selection(input) }
        var zones: SoundFontHydra.ZoneSelection!
        let choose = clock.measure { zones = file.hydra.zones(playing: selection.notes) }
        var view: VirtualSoundFont!
        let build = clock.measure { view = file.view(keeping: zones) }
        var whole = PlayedNotes()
        for p in selection.presets {
            for key in 0..<128 { for v in 1..<128 { whole.insert(bank: Int(p.bank), program: Int(p.program), key: key, velocity: v) } }
        }
        let kept = file.hydra.sampleBytes(keeping: zones), presets = file.hydra.sampleBytes(keeping: file.hydra.zones(playing: whole))
        print("linns_basket on FluidR3: \(selection.presets.count) presets, \(selection.notes.count) (preset, key, velocity); "
              + "pass (with FluidR3 loaded whole) \(pass), zones \(choose), view \(build) (\(view.presetData.count) bytes of pdta); "
              + "sample bytes \(kept) by note, \(presets) by preset")
        #expect(kept > 0 && kept * 2 < presets)
    }
}
