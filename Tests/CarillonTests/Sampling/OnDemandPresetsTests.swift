import CAllocationCounter
import Engine
import FluidSynth
import Foundation
import Hosting
import MappingFiles
import Sampling
import Testing
import Threads

/// `live`'s presets on demand (`OnDemandPresets`, `OnDemandInstrument`) with
/// FluidR3 and the stage-piano rig: the rig's presets are in memory at start
/// and sound before the loader ever runs; a preset the rig does not name
/// sounds after its program change, loaded by the loader's thread while the
/// test thread (the render thread here) renders on without a heap call; a
/// note held across the switch keeps sounding.
@Suite(.serialized) struct OnDemandPresetsTests {
    static let fluidR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"
    static let rig = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("mappings/stage-piano.yaml").path

    /// The planar buffers one 64-frame `render` call writes (16 strips, one effects group).
    final class Block {
        static let frames = 64
        let dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
        let effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
        private let storage: UnsafeMutablePointer<Float>
        private let count: Int
        init(strips: Int, effectsGroups: Int) {
            let dryCount = 2 * strips, effectCount = 4 * effectsGroups
            count = (dryCount + effectCount) * Self.frames
            storage = .allocate(capacity: count)
            storage.initialize(repeating: 0, count: count)
            dry = .allocate(capacity: dryCount)
            effects = .allocate(capacity: effectCount)
            for i in 0..<dryCount { dry[i] = storage + i * Self.frames }
            for i in 0..<effectCount { effects[i] = storage + (dryCount + i) * Self.frames }
        }
        deinit { storage.deallocate(); dry.deallocate(); effects.deallocate() }
        func clear() { storage.update(repeating: 0, count: count) }
        /// The peak of strip `strip`'s dry left and right.
        func peak(strip: Int) -> Float {
            var p: Float = 0
            for side in 0..<2 { for f in 0..<Self.frames { p = max(p, abs(dry[2 * strip + side]![f])) } }
            return p
        }
    }

    /// The session's sampler as `live` makes it, the on-demand instrument over it and a
    /// block to render into, in one object that owns them all: the sampler (whose fonts
    /// the instrument plays) lives as long as the instrument does — a tuple whose sampler
    /// a test left out freed the fonts under it. The loader runs from `startLoader` until
    /// the object goes.
    final class LiveRig {
        let sampler: Sampler
        let presets: OnDemandPresets
        let instrument: OnDemandInstrument
        let block: Block
        var synth: Synth { sampler.instrument.synth }

        init(font: String = OnDemandPresetsTests.fluidR3, heldCapacity: Int = 1024, heldReserve: Int = 256) throws {
            let made = try OnDemandPresetsTests.sessionSampler(font: font, onDemand: true)
            sampler = made.sampler
            presets = try #require(made.presets)
            instrument = OnDemandInstrument(base: made.sampler.instrument, presets: presets,
                                            heldCapacity: heldCapacity, heldReserve: heldReserve)
            instrument.prepare(sampleRate: 48_000, maxFrames: Block.frames)
            block = Block(strips: sampler.instrument.stripCount, effectsGroups: sampler.instrument.effectsGroupCount)
        }

        /// Starts the preset loader's thread (stopped when the rig goes).
        func startLoader() throws { try presets.start() }

        deinit { presets.stop() }

        /// Renders blocks at about real time (`OnDemandPresetsTests.render`).
        func render(seconds: Double, each: (Block) -> Void = { _ in }, until stop: () -> Bool) -> (allocations: Int64, frees: Int64, met: Bool) {
            OnDemandPresetsTests.render(instrument, block, seconds: seconds, each: each, until: stop)
        }
    }

    /// The sampler `live --whole-font` makes (or, `onDemand`, the one under the on-demand instrument).
    static func sessionSampler(font: String = fluidR3, onDemand: Bool) throws -> (sampler: Sampler, presets: OnDemandPresets?) {
        let mapping = try ControlMapping.load(path: rig)
        // Reverb and chorus off: with them on, Debian's FluidSynth makes a malloc and a free in
        // its render about once a block with or without a program change (OpenMP's team; the
        // frees scripts/test-jack's rtcheck lets pass), which would hide the calls counted here.
        var options = HostOptions()
        options.sampler.reverb = false
        options.sampler.chorus = false
        let assembly = try HostAssembly(options: options, mapping: mapping)
        let made = try assembly.makeSessionSampler(soundFont: font, sampleRate: 48_000, onDemand: onDemand)
        #expect(made.problems.isEmpty, "\(made.problems)")
        if !onDemand { made.sampler.instrument.prepare(sampleRate: 48_000, maxFrames: Block.frames) }
        return (made.sampler, made.presets)
    }

    /// Renders blocks until `stop` says so or `seconds` of wall time pass, at
    /// about real time; returns the allocations the rendering thread made in
    /// `receive` and `render` calls and whether `stop` was met.
    /// `allocations`: every heap call (`free` too); `frees`: the `free` calls among them.
    static func render(_ instrument: OnDemandInstrument, _ block: Block, seconds: Double,
                       each: (Block) -> Void = { _ in }, until stop: () -> Bool) -> (allocations: Int64, frees: Int64, met: Bool) {
        let end = monotonicNanoseconds() + UInt64(seconds * 1e9)
        var allocations: Int64 = 0, frees: Int64 = 0
        while monotonicNanoseconds() < end {
            block.clear()
            carillon_allocations_arm()
            instrument.render(frames: Block.frames, dry: block.dry, effects: block.effects)
            let calls = carillon_allocations_disarm()
            allocations += calls
            frees += carillon_allocations_frees()
            each(block)
            if stop() { return (allocations, frees, true) }
            usleep(1_333)   // 64 frames at 48 kHz
        }
        return (allocations, frees, false)
    }

    @Test func rigPresets_areLoadedAtStart_andSoundWithoutTheLoader() throws {
        let rig = try LiveRig()
        let presets = rig.presets, instrument = rig.instrument
        // The stage piano: channel 1 piano (0:0), 2 bass (0:33), 3 strings (0:48); the drums every channel 10 has.
        for (bank, program) in [(0, 0), (0, 33), (0, 48), (128, 0)] {
            #expect(presets.isLoaded(bank: bank, program: program), "\(bank):\(program) loaded at start")
        }
        // A preset the rig does not name is not.
        #expect(!presets.isLoaded(bank: 0, program: 40))
        #expect(!presets.isLoaded(bank: 0, program: 73))
        // The loader never started: every rig channel sounds from what start loaded.
        for channel in [0, 1, 2, 9] {
            carillon_allocations_arm()
            instrument.receive(.noteOn(channel == 9 ? 38 : 60, velocity: 100, channel: channel))
            let calls = carillon_allocations_disarm()
            #expect(calls == 0, "channel \(channel + 1)'s note-on: \(calls) heap calls")
            var loudest: Float = 0
            _ = rig.render(seconds: 0.2, each: { loudest = max(loudest, $0.peak(strip: channel)) }) { false }
            #expect(loudest > 0.001, "channel \(channel + 1) sounds (peak \(loudest))")
            instrument.receive(.noteOff(channel == 9 ? 38 : 60, channel: channel))
        }
        #expect(presets.figures.loaded == 0 && presets.figures.unforeseen == 0)
    }

    @Test func aPresetTheRigDoesNotName_soundsAfterItsProgramChange_noHeapCallOnTheRenderThread() throws {
        let rig = try LiveRig()
        try rig.startLoader()
        let presets = rig.presets, instrument = rig.instrument, synth = rig.synth
        // A piano note held across the switch.
        instrument.receive(.noteOn(48, velocity: 100, channel: 0))
        _ = rig.render(seconds: 0.1) { false }
        carillon_allocations_arm()
        instrument.receive(ChannelMessage(status: 0xC0, data1: 40))   // violin
        let callsAtChange = carillon_allocations_disarm()
        #expect(callsAtChange == 0, "the program change: \(callsAtChange) heap calls")
        // It waits: the channel still plays the piano.
        #expect(synth.preset(onChannel: 0)?.program == 0)
        var silentBlocks = 0
        let switched = rig.render(seconds: 10, each: { if $0.peak(strip: 0) < 1e-4 { silentBlocks += 1 } }) {
            synth.preset(onChannel: 0)?.program == 40
        }
        #expect(switched.met, "the violin reached channel 1 within 10 s")
        // The first switch in the process runs code paths for the first time (the Swift runtime's
        // metadata, FluidSynth's): reported; the second, below, must make none.
        #expect(switched.allocations == 0, "the first switch: \(switched.allocations) heap calls (\(switched.frees) free) on the rendering thread")
        #expect(silentBlocks == 0, "the held piano note sounded through the switch (\(silentBlocks) silent blocks)")
        #expect(presets.isLoaded(bank: 0, program: 40))
        let figures = presets.figures
        #expect(figures.loaded == 1 && figures.failed == 0 && figures.unforeseen == 0, "\(figures)")
        #expect(figures.longestLoadSeconds > 0 && figures.longestLoadSeconds < 10)
        // The violin sounds on a new note, with no heap call at its note-on.
        instrument.receive(.noteOff(48, channel: 0))
        _ = rig.render(seconds: 3) { synth.activeVoiceCount == 0 }
        carillon_allocations_arm()
        instrument.receive(.noteOn(67, velocity: 100, channel: 0))
        let callsAtNote = carillon_allocations_disarm()
        #expect(callsAtNote == 0)
        var loudest: Float = 0
        _ = rig.render(seconds: 0.3, each: { loudest = max(loudest, $0.peak(strip: 0)) }) { false }
        #expect(loudest > 0.001, "the violin sounds (peak \(loudest))")
        // A second preset the rig does not name, the violin held across: no heap call at all.
        carillon_allocations_arm()
        instrument.receive(ChannelMessage(status: 0xC0, data1: 73))   // flute
        let callsAtSecond = carillon_allocations_disarm()
        let second = rig.render(seconds: 10, each: { if $0.peak(strip: 0) < 1e-4 { silentBlocks += 1 } }) {
            synth.preset(onChannel: 0)?.program == 73
        }
        #expect(second.met, "the flute reached channel 1 within 10 s")
        #expect(callsAtSecond + second.allocations == 0,
                "the second switch: \(callsAtSecond + second.allocations) heap calls (\(second.frees) free) on the rendering thread")
        #expect(silentBlocks == 0, "the held violin note sounded through the switch (\(silentBlocks) silent blocks)")
        #expect(presets.figures.loaded == 2)
        instrument.receive(.noteOff(67, channel: 0))
        // Back to the piano and to the violin again: both pinned, sent at once.
        instrument.receive(ChannelMessage(status: 0xC0, data1: 0))
        #expect(synth.preset(onChannel: 0)?.program == 0)
        instrument.receive(ChannelMessage(status: 0xC0, data1: 40))
        #expect(synth.preset(onChannel: 0)?.program == 40)
    }

    /// Without the on-demand instrument, the same program change on a synth
    /// loading samples on demand makes heap calls on the calling thread: the
    /// check above can fail.
    @Test func withoutIt_theProgramChangeLoadsOnTheCallingThread() throws {
        let rig = try LiveRig()
        carillon_allocations_arm()
        rig.sampler.instrument.receive(ChannelMessage(status: 0xC0, data1: 41))
        let calls = carillon_allocations_disarm()
        #expect(calls > 100, "FluidSynth loads the viola on the caller's thread (\(calls) heap calls)")
    }

    /// A bank select and program change while another preset loads: the later
    /// program change replaces the waiting one, with its own bank.
    @Test func aLaterProgramChange_replacesTheWaitingOne_withItsBank() throws {
        let rig = try LiveRig()
        try rig.startLoader()
        let presets = rig.presets, instrument = rig.instrument, synth = rig.synth
        instrument.receive(ChannelMessage(status: 0xC1, data1: 56))                 // channel 2: trumpet (0:56), not loaded
        instrument.receive(ChannelMessage(status: 0xB1, data1: 0, data2: 8))        // bank 8
        instrument.receive(ChannelMessage(status: 0xC1, data1: 4))                  // 8:4, FluidR3's "Detuned EP 1"
        let done = rig.render(seconds: 10) {
            synth.preset(onChannel: 1).map { $0.bank == 8 && $0.program == 4 } ?? false
        }
        #expect(done.met, "channel 2 ends on 8:4, not \(String(describing: synth.preset(onChannel: 1)))")
        #expect(presets.isLoaded(bank: 8, program: 4))
        #expect(presets.figures.unforeseen == 0)
    }

    // MARK: Messages after a waiting program change wait with it (issue 41: CI's VM "live kill")

    /// Strip 1's left output, `blocks` blocks from the first that sounds.
    static func onset(_ instrument: any Instrument, blocks: Int, realTime: Bool) -> [Float] {
        let block = Block(strips: instrument.stripCount, effectsGroups: instrument.effectsGroupCount)
        var out: [Float] = []
        for _ in 0..<20_000 where out.count < blocks * Block.frames {
            block.clear()
            instrument.render(frames: Block.frames, dry: block.dry, effects: block.effects)
            if !out.isEmpty || block.peak(strip: 0) > 0 { out += UnsafeBufferPointer(start: block.dry[0]!, count: Block.frames) }
            if realTime { usleep(1_333) }
        }
        return out
    }

    /// Signal to noise of `signal` against `reference`, in dB.
    static func snr(_ signal: [Float], _ reference: [Float]) -> Double {
        var s = 0.0, n = 0.0
        for (a, b) in zip(signal, reference) { s += Double(b) * Double(b); n += Double(a - b) * Double(a - b) }
        return 10 * log10(s / max(n, 1e-30))
    }

    /// The VM's case: a program change to Church Organ (not loaded; the channel plays the
    /// rig's piano), then at once a chord. The chord sounds with the organ, sample for sample
    /// as with the whole font loaded (the wait late); the piano's chord is far from it.
    @Test func aChordRightAfterAProgramChange_soundsWithTheNewPreset() throws {
        let chord: [UInt8] = [48, 55, 60, 64]
        func play(_ instrument: any Instrument, program: UInt8) {
            instrument.receive(ChannelMessage(status: 0xC0, data1: program))
            for key in chord { instrument.receive(.noteOn(key, velocity: 100, channel: 0)) }
        }
        let blocks = 300   // 0.4 s
        let rig = try LiveRig()
        try rig.startLoader()
        play(rig.instrument, program: 19)
        #expect(rig.instrument.heldCount == 5, "the program change and the chord wait")
        #expect(rig.synth.activeVoiceCount == 0, "no note started on the piano")
        let heard = Self.onset(rig.instrument, blocks: blocks, realTime: true)
        #expect(rig.synth.preset(onChannel: 0)?.program == 19)
        #expect(rig.presets.figures.unforeseen == 0)
        // The references: the whole font loaded, the chord played with the organ and with the piano.
        // (The sampler kept: its fonts are unloaded with it.)
        let whole = try Self.sessionSampler(onDemand: false).sampler
        play(whole.instrument, program: 19)
        let organ = Self.onset(whole.instrument, blocks: blocks, realTime: false)
        let piano = try Self.sessionSampler(onDemand: false).sampler
        play(piano.instrument, program: 0)
        let pianoChord = Self.onset(piano.instrument, blocks: blocks, realTime: false)
        try #require(heard.count == organ.count && organ.count == pianoChord.count,
                     "blocks captured: \(heard.count / Block.frames), \(organ.count / Block.frames), \(pianoChord.count / Block.frames)")
        let againstOrgan = Self.snr(heard, organ), againstPiano = Self.snr(heard, pianoChord)
        #expect(againstOrgan > 40, "the chord against the organ with the whole font: SNR \(againstOrgan) dB")
        #expect(againstPiano < 3, "the chord against the piano: SNR \(againstPiano) dB")

        // The check can fail: main's way (the chord straight to the synth while the program
        // change waits) plays the piano's chord.
        let passedBy = try LiveRig()
        try passedBy.startLoader()
        passedBy.instrument.receive(ChannelMessage(status: 0xC0, data1: 19))
        for key in chord { passedBy.sampler.instrument.receive(.noteOn(key, velocity: 100, channel: 0)) }
        let early = Self.onset(passedBy.instrument, blocks: blocks, realTime: true)
        let earlyAgainstOrgan = Self.snr(early, organ)
        #expect(earlyAgainstOrgan < 3, "main's way against the organ: SNR \(earlyAgainstOrgan) dB")
        #expect(Self.snr(early, pianoChord) > 40, "main's way is the piano's chord")
    }

    /// While channel 1 waits, channel 2's notes sound at once; channel 1's piano note held
    /// from before sounds on through the wait, and its note-off, sent after the program
    /// change, waits in order (it is not applied before the program change).
    @Test func otherChannelsDoNotWait_andAHeldNoteSoundsOnUntilItsNoteOffInOrder() throws {
        let rig = try LiveRig()
        try rig.startLoader()
        let instrument = rig.instrument, synth = rig.synth
        instrument.receive(.noteOn(48, velocity: 100, channel: 0))
        _ = rig.render(seconds: 0.1) { false }
        let pianoVoices = synth.activeVoiceCount
        try #require(pianoVoices > 0)
        instrument.receive(ChannelMessage(status: 0xC0, data1: 19))
        instrument.receive(.noteOff(48, channel: 0))
        instrument.receive(.noteOn(60, velocity: 100, channel: 0))
        #expect(instrument.heldCount == 3)
        // Channel 2 (the rig's bass, loaded at start): its note starts now, not after the wait.
        instrument.receive(.noteOn(40, velocity: 100, channel: 1))
        #expect(instrument.heldCount == 3)
        #expect(synth.activeVoiceCount > pianoVoices, "channel 2's note started at once")
        var silentBlocks = 0, waitingBlocks = 0
        let switched = rig.render(seconds: 10, each: {
            if $0.peak(strip: 0) < 1e-4 { silentBlocks += 1 }
            if instrument.heldCount > 0 { waitingBlocks += 1 }
        }) { synth.preset(onChannel: 0)?.program == 19 }
        #expect(switched.met)
        #expect(silentBlocks == 0, "channel 1 sounded through the wait (\(silentBlocks) silent blocks)")
        #expect(waitingBlocks > 0, "the program change waited at least a block")
        #expect(instrument.heldCount == 0)
    }

    /// A flood of notes while a preset loads, into a small store: every note that starts ends.
    @Test func aFloodWhileAPresetLoads_leavesNoNoteSounding() throws {
        let rig = try LiveRig(heldCapacity: 32, heldReserve: 8)
        try rig.startLoader()
        let presets = rig.presets, instrument = rig.instrument, synth = rig.synth
        instrument.receive(ChannelMessage(status: 0xC0, data1: 19))
        for round in 0..<8 {
            for key in UInt8(48)..<72 {
                instrument.receive(.noteOn(key, velocity: 90, channel: 0))
                instrument.receive(ChannelMessage(status: 0xD0, data1: UInt8(round * 10)))
                instrument.receive(.noteOff(key, channel: 0))
            }
        }
        let ended = rig.render(seconds: 10) {
            synth.preset(onChannel: 0)?.program == 19 && instrument.heldCount == 0 && synth.activeVoiceCount == 0
        }
        #expect(ended.met, "voices left: \(synth.activeVoiceCount), held: \(instrument.heldCount)")
        #expect(presets.figures.droppedNoteOns > 0 && presets.figures.droppedOthers > 0, "\(presets.figures)")
    }

    /// A GS "use for rhythm part" SysEx makes channel 2 a drum channel: its program change
    /// then selects a kit (128:25, TR-808), which waits and loads off the render thread —
    /// not the melodic 0:25, with FluidSynth loading the kit on the render thread.
    @Test func aChannelMadeADrumChannelBySysEx_waitsForTheKit() throws {
        let rig = try LiveRig()
        try rig.startLoader()
        let presets = rig.presets, instrument = rig.instrument, synth = rig.synth
        let rhythmPart: [UInt8] = [0x41, 0x7F, 0x42, 0x12, 0x40, 0x12, 0x15, 0x02, 0x17]
        rhythmPart.withUnsafeBufferPointer { instrument.receiveSysEx($0) }
        #expect(synth.preset(onChannel: 1).map { ($0.bank, $0.program) } ?? (-1, -1) == (128, 0))
        instrument.receive(ChannelMessage(status: 0xC1, data1: 25))
        instrument.receive(.noteOn(36, velocity: 100, channel: 1))
        #expect(instrument.heldCount == 2)
        let done = rig.render(seconds: 10) { synth.preset(onChannel: 1)?.program == 25 }
        #expect(done.met)
        #expect(synth.preset(onChannel: 1)?.bank == 128)
        #expect(presets.isLoaded(bank: 128, program: 25) && !presets.isLoaded(bank: 0, program: 25))
        #expect(presets.figures.unforeseen == 0, "FluidSynth loaded \(presets.figures.unforeseen) preset(s) on the render thread")
        #expect(done.allocations == 0)
    }

    /// A preset whose samples cannot be read (the font's file cut short under the session:
    /// removing it is not enough, the font's view keeps it open): its program change is
    /// refused, the channel keeps its sound, and the render thread reads nothing.
    @Test func aPresetThatCannotBeLoaded_isRefused_theChannelKeepsItsSound() throws {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("carillon-gone-\(getpid()).sf2").path
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: "/usr/share/sounds/sf2/TimGM6mb.sf2", toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let rig = try LiveRig(font: copy)
        try #require(truncate(copy, 4096) == 0)
        try rig.startLoader()
        let presets = rig.presets, instrument = rig.instrument, synth = rig.synth
        instrument.receive(ChannelMessage(status: 0xC0, data1: 40))
        instrument.receive(.noteOn(60, velocity: 100, channel: 0))
        var loudest: Float = 0
        let tried = rig.render(seconds: 10, each: { loudest = max(loudest, $0.peak(strip: 0)) }) {
            instrument.heldCount == 0
        }
        #expect(tried.met)
        #expect(presets.figures.failed == 1 && !presets.isLoaded(bank: 0, program: 40), "\(presets.figures)")
        #expect(synth.preset(onChannel: 0)?.program == 0, "channel 1 keeps the piano")
        #expect(tried.allocations == 0, "\(tried.allocations) heap calls on the rendering thread")
        _ = rig.render(seconds: 0.2, each: { loudest = max(loudest, $0.peak(strip: 0)) }) { false }
        #expect(loudest > 0.001, "the note after the refused program change sounds (peak \(loudest))")
    }

    /// Live's on-demand synth plays each sample to its end as the whole font does, sample
    /// for sample: FluidSynth 2.3 loads a sample on demand with the 46 words after it and
    /// plays them (test-jack's take check: -37.5 dB against the take's render, a click at
    /// each of TimGM6mb's drum hits' ends) unless the font loads as a view whose headers end
    /// that much earlier. Drums and a piano note short enough to run out, on both synths.
    @Test func samplesEnd_whereTheWholeFontEndsThem() throws {
        let timGM6mb = "/usr/share/sounds/sf2/TimGM6mb.sf2"
        let onDemand = try LiveRig(font: timGM6mb)
        let whole = try Self.sessionSampler(font: timGM6mb, onDemand: false).sampler
        func play(_ instrument: any Instrument) -> [Float] {
            for key: UInt8 in [35, 38, 42, 49] { instrument.receive(.noteOn(key, velocity: 110, channel: 9)) }
            instrument.receive(.noteOn(84, velocity: 100, channel: 0))
            instrument.receive(.noteOff(84, channel: 0))
            let block = Block(strips: instrument.stripCount, effectsGroups: instrument.effectsGroupCount)
            var out: [Float] = []
            for _ in 0..<(2 * 48_000 / Block.frames) {
                block.clear()
                instrument.render(frames: Block.frames, dry: block.dry, effects: block.effects)
                for strip in [0, 9] { for side in 0..<2 { out += UnsafeBufferPointer(start: block.dry[2 * strip + side]!, count: Block.frames) } }
            }
            return out
        }
        let heard = play(onDemand.instrument), reference = play(whole.instrument)
        #expect(heard.contains { $0 != 0 })
        let differing = zip(heard, reference).filter { $0 != $1 }.count
        #expect(differing == 0, "\(differing) samples differ from the whole font's (SNR \(Self.snr(heard, reference)) dB)")
    }

    /// The same for a channel's own `soundfont:` (a copy of TimGM6mb, so it is a font of
    /// its own, playing the drums): loaded from its file, its drum hits ended 46 words late.
    @Test func aChannelsOwnFont_endsItsSamplesWhereTheWholeFontEndsThem() throws {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("carillon-drums-\(getpid()).sf2").path
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: "/usr/share/sounds/sf2/TimGM6mb.sf2", toPath: copy)
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let mapping = try ControlMapping.parse(yaml: """
            channels:
              1: { program: 0 }
              10: { soundfont: \(copy), bank: 128, program: 0 }
            controls: []
            """)
        func sampler(onDemand: Bool) throws -> (sampler: Sampler, presets: OnDemandPresets?) {
            var options = HostOptions()
            options.sampler.reverb = false
            options.sampler.chorus = false
            let made = try HostAssembly(options: options, mapping: mapping)
                .makeSessionSampler(soundFont: "/usr/share/sounds/sf2/TimGM6mb.sf2", sampleRate: 48_000, onDemand: onDemand)
            #expect(made.problems.isEmpty, "\(made.problems)")
            made.sampler.instrument.prepare(sampleRate: 48_000, maxFrames: Block.frames)
            return (made.sampler, made.presets)
        }
        let onDemand = try sampler(onDemand: true), whole = try sampler(onDemand: false)
        #expect(onDemand.presets != nil)
        func play(_ instrument: any Instrument) -> [Float] {
            for key: UInt8 in [35, 38, 42, 49] { instrument.receive(.noteOn(key, velocity: 110, channel: 9)) }
            let block = Block(strips: instrument.stripCount, effectsGroups: instrument.effectsGroupCount)
            var out: [Float] = []
            for _ in 0..<(2 * 48_000 / Block.frames) {
                block.clear()
                instrument.render(frames: Block.frames, dry: block.dry, effects: block.effects)
                for side in 0..<2 { out += UnsafeBufferPointer(start: block.dry[2 * 9 + side]!, count: Block.frames) }
            }
            return out
        }
        let heard = play(onDemand.sampler.instrument), reference = play(whole.sampler.instrument)
        #expect(heard.contains { $0 != 0 })
        let differing = zip(heard, reference).filter { $0 != $1 }.count
        #expect(differing == 0, "\(differing) samples differ from the whole font's (SNR \(Self.snr(heard, reference)) dB)")
    }

    /// What the rig names stays small: the samples of four presets, not the
    /// font's 141 MB of sample data (FluidR3's sdta chunk).
    @Test func startHoldsTheRigsSamples_notTheFont() throws {
        func rss() throws -> Int {
            let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
            let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])! * 1024
        }
        let before = try rss()
        let rig = try LiveRig()
        let grown = try rss() - before
        // FluidR3's piano, bass, strings and standard kit are 25.8 MB of samples
        // (188 samples), the whole font's 148.1 MB. Other suites running at once may add a little.
        #expect(grown < 60_000_000, "RSS grew \(grown / 1_000_000) MB at start")
        withExtendedLifetime(rig) {}
    }
}
