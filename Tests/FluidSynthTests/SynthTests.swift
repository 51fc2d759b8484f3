import Testing
import FluidSynth
#if canImport(Glibc)
import Glibc
#endif

let timGM = "/usr/share/sounds/sf2/TimGM6mb.sf2"

func temporaryFile(_ name: String, contents: [UInt8]) -> String {
    let path = "/tmp/carillon-fs-\(getpid())-\(name)"
    let file = fopen(path, "wb")!
    _ = contents.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
    fclose(file)
    return path
}

@Suite struct SoundFontLoadingTests {
    func makeSynth() throws -> Synth {
        try Synth(settings: Settings.forRendering(sampleRate: 44_100))
    }

    @Test func load_realSoundFont_listsGeneralMIDIPresets() throws {
        let synth = try makeSynth()
        let font = try synth.loadSoundFont(at: timGM)
        let presets = font.presets
        #expect(presets.count >= 128)
        #expect(presets.contains { $0.bank == 0 && $0.program == 0 })
        #expect(presets.contains { $0.bank == 128 })   // drum kits
        #expect(presets.first { $0.bank == 0 && $0.program == 0 }!.name.isEmpty == false)
    }

    @Test func load_missingFile_throwsNotFound() throws {
        let synth = try makeSynth()
        #expect(throws: FluidSynthError.soundFontNotFound(path: "/nonexistent/x.sf2")) {
            try synth.loadSoundFont(at: "/nonexistent/x.sf2")
        }
    }

    @Test func load_textFile_throwsNotASoundFont() throws {
        let path = temporaryFile("text.sf2", contents: Array("hello, not a soundfont\n".utf8))
        defer { unlink(path) }
        let synth = try makeSynth()
        #expect(throws: FluidSynthError.notASoundFont(path: path)) { try synth.loadSoundFont(at: path) }
    }

    @Test func load_truncatedSoundFont_throwsUnreadable() throws {
        // A real SF2's first 4 KiB: RIFF/sfbk header intact, the rest missing.
        let file = fopen(timGM, "rb")!
        var head = [UInt8](repeating: 0, count: 4096)
        _ = head.withUnsafeMutableBytes { fread($0.baseAddress, 1, 4096, file) }
        fclose(file)
        let path = temporaryFile("truncated.sf2", contents: head)
        defer { unlink(path) }
        let synth = try makeSynth()
        #expect(throws: FluidSynthError.soundFontUnreadable(path: path, reason: "damaged or truncated (FluidSynth could not load it)")) {
            try synth.loadSoundFont(at: path)
        }
    }

    @Test func load_directory_throwsUnreadable() throws {
        let synth = try makeSynth()
        #expect(throws: FluidSynthError.soundFontUnreadable(path: "/tmp", reason: "is a directory")) {
            try synth.loadSoundFont(at: "/tmp")
        }
    }

    @Test func settings_unknownName_isRejected() throws {
        let settings = try Settings()
        #expect(throws: FluidSynthError.settingRejected(name: "synth.no-such-thing", value: "3")) {
            try settings.set("synth.no-such-thing", 3)
        }
    }
}

@Suite struct SynthProcessTests {
    @Test(arguments: [0, 3, 9, 15])
    func sixteenGroups_eachMIDIChannelSoundsInItsOwnStrip(channel: Int) throws {
        let synth = try Synth(settings: Settings.forRendering(sampleRate: 44_100))
        let font = try synth.loadSoundFont(at: timGM)
        defer { withExtendedLifetime(font) {} }
        try synth.setReverb(on: false)
        try synth.setChorus(on: false)
        #expect(synth.audioGroupCount == 16)
        #expect(synth.audioChannelCount == 16)
        let frames = 4096
        do {
            var storage = [[Float]](repeating: [Float](repeating: 0, count: frames), count: 32)
            #expect(synth.noteOn(channel: Int32(channel), key: 60, velocity: 120))
            var energies = [Float](repeating: 0, count: 16)
            var pointers = storage.indices.map { i in storage[i].withUnsafeMutableBufferPointer { $0.baseAddress } }
            var fx: [UnsafeMutablePointer<Float>?] = [nil, nil, nil, nil]
            #expect(synth.process(frames: frames, fx: &fx, fxCount: 4, out: &pointers, outCount: 32))
            for strip in 0..<16 {
                energies[strip] = (0..<frames).reduce(0) { $0 + pointers[2 * strip]![$1] * pointers[2 * strip]![$1] }
            }
            #expect(energies[channel] > 0.01)
            #expect(energies.enumerated().allSatisfy { $0.offset == channel || $0.element == 0 })
            _ = storage.count
            storage = []
        }
    }

    @Test func effects_goToTheirOwnBuffers() throws {
        let synth = try Synth(settings: Settings.forRendering(sampleRate: 44_100))
        let font = try synth.loadSoundFont(at: timGM)
        defer { withExtendedLifetime(font) {} }
        let frames = 8192
        let buffers = (0..<36).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: frames) }
        defer { buffers.forEach { $0.deallocate() } }
        buffers.forEach { $0.initialize(repeating: 0, count: frames) }
        var out: [UnsafeMutablePointer<Float>?] = Array(buffers[0..<32])
        var fx: [UnsafeMutablePointer<Float>?] = Array(buffers[32..<36])
        #expect(synth.controlChange(channel: 0, controller: 91, value: 127))   // reverb send
        #expect(synth.noteOn(channel: 0, key: 64, velocity: 127))
        #expect(synth.process(frames: frames, fx: &fx, fxCount: 4, out: &out, outCount: 32))
        let reverbEnergy = (0..<frames).reduce(Float(0)) { $0 + buffers[32][$1] * buffers[32][$1] }
        #expect(reverbEnergy > 0)
    }
}
