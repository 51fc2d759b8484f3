import Testing
import Foundation
import FluidSynth

/// `SoundFontFile`, `SoundFontHydra` and `VirtualSoundFont`: real fonts read
/// and rebuilt byte for byte, reduced views that FluidSynth loads with the
/// same presets and that sound the notes they keep exactly as the file does.
@Suite(.serialized) struct SoundFontFileTests {
    static let fluidR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"
    static let projectFont = GeneratedSoundFontTests.font

    /// Every SoundFont of the system, SF2 and SF3 (links resolved, each once), and the project's.
    static let fonts: [String] = {
        var seen = Set<String>(), fonts: [String] = []
        for (folder, suffix) in [("/usr/share/sounds/sf2", ".sf2"), ("/usr/share/sounds/sf3", ".sf3")] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            for name in names.sorted() where name.hasSuffix(suffix) {
                let real = URL(fileURLWithPath: "\(folder)/\(name)").resolvingSymlinksInPath().path
                if seen.insert(real).inserted { fonts.append(real) }
            }
        }
        return fonts + [projectFont]
    }()

    /// Debian's SF3 fonts (Ogg Vorbis samples; an sdta list of odd length, with no pad byte after it).
    static let sf3Fonts = ["/usr/share/sounds/sf3/MuseScore_General_Lite.sf3", "/usr/share/sounds/sf3/FluidR3Mono_GM.sf3"]

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    static func word32(_ b: [UInt8], _ at: Int) -> Int { Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16 | Int(b[at + 3]) << 24 }
    static func put32(_ b: inout [UInt8], _ at: Int, _ v: Int) { for i in 0..<4 { b[at + i] = UInt8(v >> (8 * i) & 0xFF) } }

    /// Where the `LIST pdta` chunk of a RIFF file starts and how long it is (header included), read here
    /// independently: each chunk right after the one before, no pad byte, as FluidSynth reads them.
    static func presetDataRange(_ path: String) throws -> Range<Int> {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let size = Int(try handle.seekToEnd())
        var at = 12
        while at + 12 <= size {
            try handle.seek(toOffset: UInt64(at))
            let head = [UInt8](handle.readData(ofLength: 12))
            let length = word32(head, 4)
            if Array(head[0..<4]) == Array("LIST".utf8) && Array(head[8..<12]) == Array("pdta".utf8) { return at..<(at + 8 + length) }
            at += 8 + length
        }
        throw SoundFontFileError.malformed("no pdta in \(path)")
    }

    static func read(_ view: VirtualSoundFont, _ range: Range<Int>) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: range.count)
        let ok = bytes.withUnsafeMutableBytes { view.read(into: $0.baseAddress!, count: range.count, at: range.lowerBound) }
        return ok ? bytes : nil
    }

    /// A font's bytes as a view keeping every zone serves them: its preset data (at `range`) with
    /// the sample ends FluidSynth's on-demand loader needs.
    static func asView(_ bytes: [UInt8], _ range: Range<Int>, _ file: SoundFontFile) -> [UInt8] {
        var view = bytes
        view.replaceSubrange(range, with: file.hydra.serialized(keeping: file.hydra.allZones,
                                                                  forOnDemandPadding: SoundFontHydra.onDemandPadding))
        return view
    }

    static func write(_ bytes: [UInt8], named name: String) -> String {
        let path = NSTemporaryDirectory() + "carillon-sffile-\(getpid())-\(name)"
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    @Test(arguments: fonts)
    func keepingEveryZone_rebuildsThePresetData_byteForByte(font: String) throws {
        let file = try SoundFontFile(path: font)
        let range = try Self.presetDataRange(font)
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: font))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(range.lowerBound))
        let original = [UInt8](handle.readData(ofLength: range.count))
        let rebuilt = file.hydra.serialized(keeping: file.hydra.allZones)
        print("\(font): \(file.hydra.presets.count) presets, \(file.hydra.presets.zoneCount) preset zones, "
              + "\(file.hydra.instruments.count) instruments, \(file.hydra.instruments.zoneCount) instrument zones, "
              + "\(file.hydra.sampleCount) samples, pdta \(original.count) bytes")
        let difference = zip(rebuilt, original).enumerated().first { $0.element.0 != $0.element.1 }?.offset
        let identical = rebuilt == original
        #expect(identical, "rebuilt pdta differs at byte \(difference ?? min(rebuilt.count, original.count)) (sizes \(rebuilt.count), \(original.count))")
        // The view keeping everything is the file: its start, its preset data (with the sample
        // ends FluidSynth 2.3's on-demand loader needs: `samplesEndingEarlier`) and its end.
        let view = file.view(keeping: file.hydra.allZones)
        #expect(view.size == file.size)
        try handle.seek(toOffset: 0)
        let head = [UInt8](handle.readData(ofLength: 65_536))
        let forLoader = file.hydra.serialized(keeping: file.hydra.allZones, forOnDemandPadding: SoundFontHydra.onDemandPadding)
        let sameHead = Self.read(view, 0..<head.count) == head, samePresetData = Self.read(view, range) == forLoader
        #expect(sameHead && samePresetData)
        try handle.seek(toOffset: 0)
        let tail = (file.size - 1000)..<file.size
        #expect(Self.read(view, tail) == Array(Self.asView([UInt8](handle.readData(ofLength: file.size)), range, file)[tail]))
        #expect(Self.read(view, (file.size - 10)..<(file.size + 1)) == nil)
    }

    /// Debian's SF3 fonts read as FluidSynth reads them — the lists one
    /// after the other, no pad byte after the odd-length sdta, sample headers
    /// as byte offsets into the Ogg Vorbis data — and one note keeps a few
    /// of their compressed samples, each a byte range within the sample data.
    @Test(arguments: sf3Fonts)
    func sf3_isRead_andOneNoteKeepsAFewCompressedSamples(font: String) throws {
        let file = try SoundFontFile(path: font)
        #expect(file.hydra.presets.count > 128 && file.hydra.sampleCount > 1000)
        var note = PlayedNotes(), piano = PlayedNotes()
        note.insert(bank: 0, program: 0, key: 60, velocity: 100)
        for key in 0..<128 { for velocity in 1..<128 { piano.insert(bank: 0, program: 0, key: key, velocity: velocity) } }
        let one = file.hydra.zones(playing: note), all = file.hydra.zones(playing: piano)
        let oneBytes = file.hydra.sampleBytes(keeping: one), allBytes = file.hydra.sampleBytes(keeping: all)
        print("\(font) piano: key 60 keeps \(one.keptInstrumentZones) instrument zones, \(oneBytes) compressed bytes; "
              + "every note \(all.keptInstrumentZones), \(allBytes) bytes of \(file.size)")
        #expect(one.keptInstrumentZones >= 1 && one.keptInstrumentZones < all.keptInstrumentZones)
        #expect(oneBytes > 0 && oneBytes * 4 < allBytes && allBytes < file.size / 2)
        // SF3's sample ends are its own: the view serves the sample headers unchanged.
        #expect(file.hydra.serialized(keeping: file.hydra.allZones, forOnDemandPadding: 46)
                == file.hydra.serialized(keeping: file.hydra.allZones))
    }

    /// SF3: notes played through a view keeping their zones (their samples
    /// decoded on demand, each from its own byte range) sound exactly as
    /// through the font loaded whole (every sample decoded at load).
    @Test(arguments: sf3Fonts)
    func sf3_reducedView_soundsItsNotes_likeTheFontLoadedWhole(font: String) throws {
        let notes: [(bank: Int, program: Int, channel: Int32, key: Int32, velocity: Int32)] = [
            (0, 0, 0, 60, 30), (0, 0, 0, 64, 120), (0, 48, 1, 55, 90), (0, 73, 2, 84, 70),
            (128, 0, 9, 36, 110), (128, 0, 9, 38, 60), (128, 0, 9, 42, 100),
        ]
        var played = PlayedNotes()
        for n in notes { played.insert(bank: n.bank, program: n.program, key: Int(n.key), velocity: Int(n.velocity)) }
        let file = try SoundFontFile(path: font)
        let view = file.view(keeping: file.hydra.zones(playing: played))
        func render(onDemand: Bool, _ load: (Synth) throws -> SoundFont) throws -> [Float] {
            let settings = try Settings.forRendering(sampleRate: 44_100, audioGroups: 1)
            try settings.set("synth.dynamic-sample-loading", onDemand)
            let synth = try Synth(settings: settings)
            let loaded = try load(synth)
            for n in notes {
                if onDemand { try synth.pin(Synth.PresetAddress(soundFontID: loaded.id, bank: Int32(n.bank), program: Int32(n.program))) }
                #expect(synth.select(channel: Int(n.channel), bank: n.bank, program: n.program))
            }
            let frames = 44_100 / notes.count
            var out = [Float](repeating: 0, count: 2 * frames * notes.count)
            for (i, n) in notes.enumerated() {
                #expect(synth.noteOn(channel: n.channel, key: n.key, velocity: n.velocity))
                out.withUnsafeMutableBufferPointer { buffer in
                    let half = frames * notes.count
                    var channels: [UnsafeMutablePointer<Float>?] = [buffer.baseAddress! + i * frames, buffer.baseAddress! + half + i * frames]
                    #expect(synth.process(frames: frames, fx: nil, fxCount: 0, out: &channels, outCount: 2))
                }
            }
            withExtendedLifetime(loaded) {}
            return out
        }
        let whole = try render(onDemand: false) { try $0.loadSoundFont(at: font) }
        let reduced = try render(onDemand: true) { try $0.loadSoundFont(view) }
        #expect(whole.contains { $0 != 0 })
        let identical = whole == reduced
        #expect(identical)
    }

    /// A view keeping no zone (what a render starts with) loads in FluidSynth with every preset of the file.
    @Test(arguments: fonts)
    func viewWithoutZones_hasTheFilesPresets(font: String) throws {
        let file = try SoundFontFile(path: font)
        let selection = file.hydra.zones(playing: PlayedNotes())
        #expect(selection.keptPresetZones == 0 && selection.keptInstrumentZones == 0)
        let view = file.view(keeping: selection)
        #expect(view.size < file.size)
        let settings = try Settings.forRendering(sampleRate: 44_100)
        try settings.set("synth.dynamic-sample-loading", true)
        let synth = try Synth(settings: settings)
        let presets = try synth.loadSoundFont(view).presets
        let whole = try Synth(settings: Settings.forRendering(sampleRate: 44_100)).loadSoundFont(at: font).presets
        #expect(presets == whole)
        #expect(presets.count == file.hydra.presets.count)
    }

    /// One note on the piano keeps a sliver of FluidR3's piano: the zones of its key and velocity.
    @Test func oneNote_keepsItsZonesOnly() throws {
        let file = try SoundFontFile(path: Self.fluidR3)
        var note = PlayedNotes(), piano = PlayedNotes()
        note.insert(bank: 0, program: 0, key: 60, velocity: 100)
        for key in 0..<128 { for velocity in 1..<128 { piano.insert(bank: 0, program: 0, key: key, velocity: velocity) } }
        let one = file.hydra.zones(playing: note), all = file.hydra.zones(playing: piano)
        let oneBytes = file.hydra.sampleBytes(keeping: one), allBytes = file.hydra.sampleBytes(keeping: all)
        print("FluidR3 piano: key 60 velocity 100 keeps \(one.keptPresetZones) preset and \(one.keptInstrumentZones) "
              + "instrument zones, \(oneBytes) sample bytes; every note \(all.keptPresetZones) and \(all.keptInstrumentZones), \(allBytes) bytes")
        #expect(one.keptPresetZones >= 1 && one.keptInstrumentZones >= 1)
        #expect(one.keptInstrumentZones < all.keptInstrumentZones)
        #expect(oneBytes > 0 && oneBytes * 5 < allBytes)
        // No other preset keeps anything.
        #expect(file.hydra.zones(playing: PlayedNotes()).keptPresetZones == 0)
    }

    /// Notes played through a view keeping their zones, samples loaded on
    /// demand through the view's callbacks, sound exactly as through the file
    /// loaded whole, FluidSynth's default (FluidR3: a piano at soft and loud
    /// velocities, drums, strings). With the file's own sample ends, FluidSynth
    /// 2.3's on-demand loader plays 46 words past each sample: not the same.
    @Test func reducedView_soundsItsNotes_likeTheFile() throws {
        let notes: [(bank: Int, program: Int, channel: Int32, key: Int32, velocity: Int32)] = [
            (0, 0, 0, 60, 30), (0, 0, 0, 64, 120), (0, 0, 0, 67, 80), (0, 48, 1, 55, 90), (0, 48, 1, 79, 70),
            (128, 0, 9, 36, 110), (128, 0, 9, 38, 60), (128, 0, 9, 42, 100),
        ]
        var played = PlayedNotes()
        for n in notes { played.insert(bank: n.bank, program: n.program, key: Int(n.key), velocity: Int(n.velocity)) }
        let file = try SoundFontFile(path: Self.fluidR3)
        let view = file.view(keeping: file.hydra.zones(playing: played))
        func render(onDemand: Bool = true, _ load: (Synth) throws -> SoundFont) throws -> [Float] {
            let settings = try Settings.forRendering(sampleRate: 44_100, audioGroups: 1)
            try settings.set("synth.dynamic-sample-loading", onDemand)
            let synth = try Synth(settings: settings)
            let font = try load(synth)
            for n in notes {
                try synth.pin(Synth.PresetAddress(soundFontID: font.id, bank: Int32(n.bank), program: Int32(n.program)))
                #expect(synth.select(channel: Int(n.channel), bank: n.bank, program: n.program))
            }
            var out = [Float](repeating: 0, count: 2 * 44_100)
            for (i, n) in notes.enumerated() {
                #expect(synth.noteOn(channel: n.channel, key: n.key, velocity: n.velocity))
                out.withUnsafeMutableBufferPointer { buffer in
                    let frames = 44_100 / notes.count
                    var channels: [UnsafeMutablePointer<Float>?] = [buffer.baseAddress! + i * frames, buffer.baseAddress! + 44_100 + i * frames]
                    #expect(synth.process(frames: frames, fx: nil, fxCount: 0, out: &channels, outCount: 2))
                }
            }
            withExtendedLifetime(font) {}
            return out
        }
        let whole = try render(onDemand: false) { try $0.loadSoundFont(at: Self.fluidR3) }
        let reduced = try render { try $0.loadSoundFont(view) }
        #expect(whole.contains { $0 != 0 })
        let identical = whole == reduced   // a Bool: a failure prints no diff of 88,200 floats
        #expect(identical)
        if SoundFontHydra.onDemandPadding > 0 {
            // The loader's own way, the file's sample ends: it plays past them, and so differs.
            let fileOnDemand = try render { try $0.loadSoundFont(at: Self.fluidR3) }
            #expect(fileOnDemand != whole)
        }
        let kept = file.hydra.zones(playing: played)
        print("8 notes on FluidR3: \(file.hydra.sampleBytes(keeping: kept)) sample bytes kept")
    }

    /// A top-level chunk FluidSynth skips (after the preset data) stays in the view, and the view still loads.
    @Test func extraChunk_afterThePresetData_staysInTheView() throws {
        var bytes = try Self.bytes(Self.projectFont)
        bytes += Array("xtra".utf8) + [3, 0, 0, 0, 1, 2, 3, 0]   // odd length: one pad byte
        Self.put32(&bytes, 4, bytes.count - 8)
        let path = Self.write(bytes, named: "extra.sf2")
        defer { unlink(path) }
        let file = try SoundFontFile(path: path)
        let all = file.view(keeping: file.hydra.allZones)
        let same = Self.read(all, 0..<bytes.count) == Self.asView(bytes, try Self.presetDataRange(path), file)
        #expect(same)
        var played = PlayedNotes()
        played.insert(bank: 0, program: 0, key: 60, velocity: 100)
        let reduced = file.view(keeping: file.hydra.zones(playing: played))
        let synth = try Synth(settings: Settings.forRendering(sampleRate: 44_100))
        #expect(try synth.loadSoundFont(reduced).presets.count == 129)
        let tail = Self.read(reduced, (reduced.size - 16)..<reduced.size)
        #expect(tail.map { Array($0.suffix(16)) } == Array(bytes.suffix(16)))
    }

    /// A cut pdta: refused here and by FluidSynth alike.
    @Test func truncatedPresetData_isRefused() throws {
        var bytes = try Self.bytes(Self.projectFont)
        bytes.removeLast(100)
        Self.put32(&bytes, 4, bytes.count - 8)
        let path = Self.write(bytes, named: "cut.sf2")
        defer { unlink(path) }
        #expect(throws: SoundFontFileError.self) { try SoundFontFile(path: path) }
        let synth = try Synth(settings: Settings.forRendering(sampleRate: 44_100))
        #expect(throws: FluidSynthError.self) { try synth.loadSoundFont(at: path) }
    }

    /// FluidSynth loads a font whose preset generator list lacks its terminal
    /// record; this reader refuses it (a render then loads whole presets).
    @Test func missingTerminalGenerator_isRefusedHere_butLoadsInFluidSynth() throws {
        let path = try Self.withoutTerminalPresetGenerator(Self.projectFont, named: "noterm.sf2")
        defer { unlink(path) }
        #expect(throws: SoundFontFileError.self) { try SoundFontFile(path: path) }
        let synth = try Synth(settings: Settings.forRendering(sampleRate: 44_100))
        #expect(try synth.loadSoundFont(at: path).presets.count == 129)
    }

    /// A copy of `font` without the terminal record of its pgen sub-chunk (sizes patched), written to a scratch file.
    static func withoutTerminalPresetGenerator(_ font: String, named name: String) throws -> String {
        var bytes = try bytes(font)
        let range = try presetDataRange(font)
        var at = range.lowerBound + 12
        while Array(bytes[at..<at + 4]) != Array("pgen".utf8) { at += 8 + word32(bytes, at + 4) }
        let size = word32(bytes, at + 4)
        bytes.removeSubrange((at + 8 + size - 4)..<(at + 8 + size))
        put32(&bytes, at + 4, size - 4)
        put32(&bytes, range.lowerBound + 4, word32(bytes, range.lowerBound + 4) - 4)
        put32(&bytes, 4, bytes.count - 8)
        return write(bytes, named: name)
    }
}
