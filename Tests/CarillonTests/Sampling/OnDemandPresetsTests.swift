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

    /// The session's sampler as `live` makes it, the on-demand instrument over it.
    static func liveSampler() throws -> (sampler: Sampler, presets: OnDemandPresets, instrument: OnDemandInstrument) {
        let mapping = try ControlMapping.load(path: rig)
        // Reverb and chorus off: with them on, Debian's FluidSynth makes a malloc and a free in
        // its render about once a block with or without a program change (OpenMP's team; the
        // frees scripts/test-jack's rtcheck lets pass), which would hide the calls counted here.
        var options = HostOptions()
        options.sampler.reverb = false
        options.sampler.chorus = false
        let assembly = try HostAssembly(options: options, mapping: mapping)
        let made = try assembly.makeSessionSampler(soundFont: fluidR3, sampleRate: 48_000, onDemand: true)
        #expect(made.problems.isEmpty, "\(made.problems)")
        let presets = try #require(made.presets)
        let instrument = OnDemandInstrument(base: made.sampler.instrument, presets: presets)
        instrument.prepare(sampleRate: 48_000, maxFrames: Block.frames)
        return (made.sampler, presets, instrument)
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
        let (sampler, presets, instrument) = try Self.liveSampler()
        // The stage piano: channel 1 piano (0:0), 2 bass (0:33), 3 strings (0:48); the drums every channel 10 has.
        for (bank, program) in [(0, 0), (0, 33), (0, 48), (128, 0)] {
            #expect(presets.isLoaded(bank: bank, program: program), "\(bank):\(program) loaded at start")
        }
        // A preset the rig does not name is not.
        #expect(!presets.isLoaded(bank: 0, program: 40))
        #expect(!presets.isLoaded(bank: 0, program: 73))
        // The loader never started: every rig channel sounds from what start loaded.
        let block = Block(strips: sampler.instrument.stripCount, effectsGroups: sampler.instrument.effectsGroupCount)
        for channel in [0, 1, 2, 9] {
            carillon_allocations_arm()
            instrument.receive(.noteOn(channel == 9 ? 38 : 60, velocity: 100, channel: channel))
            let calls = carillon_allocations_disarm()
            #expect(calls == 0, "channel \(channel + 1)'s note-on: \(calls) heap calls")
            var loudest: Float = 0
            _ = Self.render(instrument, block, seconds: 0.2, each: { loudest = max(loudest, $0.peak(strip: channel)) }) { false }
            #expect(loudest > 0.001, "channel \(channel + 1) sounds (peak \(loudest))")
            instrument.receive(.noteOff(channel == 9 ? 38 : 60, channel: channel))
        }
        #expect(presets.figures.loaded == 0 && presets.figures.unforeseen == 0)
    }

    @Test func aPresetTheRigDoesNotName_soundsAfterItsProgramChange_noHeapCallOnTheRenderThread() throws {
        let (sampler, presets, instrument) = try Self.liveSampler()
        try presets.start()
        defer { presets.stop() }
        let synth = sampler.instrument.synth
        let block = Block(strips: sampler.instrument.stripCount, effectsGroups: sampler.instrument.effectsGroupCount)
        // A piano note held across the switch.
        instrument.receive(.noteOn(48, velocity: 100, channel: 0))
        _ = Self.render(instrument, block, seconds: 0.1) { false }
        carillon_allocations_arm()
        instrument.receive(ChannelMessage(status: 0xC0, data1: 40))   // violin
        let callsAtChange = carillon_allocations_disarm()
        #expect(callsAtChange == 0, "the program change: \(callsAtChange) heap calls")
        // It waits: the channel still plays the piano.
        #expect(synth.preset(onChannel: 0)?.program == 0)
        var silentBlocks = 0
        let switched = Self.render(instrument, block, seconds: 10, each: { if $0.peak(strip: 0) < 1e-4 { silentBlocks += 1 } }) {
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
        _ = Self.render(instrument, block, seconds: 3) { synth.activeVoiceCount == 0 }
        carillon_allocations_arm()
        instrument.receive(.noteOn(67, velocity: 100, channel: 0))
        let callsAtNote = carillon_allocations_disarm()
        #expect(callsAtNote == 0)
        var loudest: Float = 0
        _ = Self.render(instrument, block, seconds: 0.3, each: { loudest = max(loudest, $0.peak(strip: 0)) }) { false }
        #expect(loudest > 0.001, "the violin sounds (peak \(loudest))")
        // A second preset the rig does not name, the violin held across: no heap call at all.
        carillon_allocations_arm()
        instrument.receive(ChannelMessage(status: 0xC0, data1: 73))   // flute
        let callsAtSecond = carillon_allocations_disarm()
        let second = Self.render(instrument, block, seconds: 10, each: { if $0.peak(strip: 0) < 1e-4 { silentBlocks += 1 } }) {
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
        let (sampler, _, _) = try Self.liveSampler()
        carillon_allocations_arm()
        sampler.instrument.receive(ChannelMessage(status: 0xC0, data1: 41))
        let calls = carillon_allocations_disarm()
        #expect(calls > 100, "FluidSynth loads the viola on the caller's thread (\(calls) heap calls)")
    }

    /// A bank select and program change while another preset loads: the later
    /// program change replaces the waiting one, with its own bank.
    @Test func aLaterProgramChange_replacesTheWaitingOne_withItsBank() throws {
        let (sampler, presets, instrument) = try Self.liveSampler()
        try presets.start()
        defer { presets.stop() }
        let synth = sampler.instrument.synth
        let block = Block(strips: sampler.instrument.stripCount, effectsGroups: sampler.instrument.effectsGroupCount)
        instrument.receive(ChannelMessage(status: 0xC1, data1: 56))                 // channel 2: trumpet (0:56), not loaded
        instrument.receive(ChannelMessage(status: 0xB1, data1: 0, data2: 8))        // bank 8
        instrument.receive(ChannelMessage(status: 0xC1, data1: 4))                  // 8:4, FluidR3's "Detuned EP 1"
        let done = Self.render(instrument, block, seconds: 10) {
            synth.preset(onChannel: 1).map { $0.bank == 8 && $0.program == 4 } ?? false
        }
        #expect(done.met, "channel 2 ends on 8:4, not \(String(describing: synth.preset(onChannel: 1)))")
        #expect(presets.isLoaded(bank: 8, program: 4))
        #expect(presets.figures.unforeseen == 0)
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
        let (_, presets, _) = try Self.liveSampler()
        let grown = try rss() - before
        // FluidR3's piano, bass, strings and standard kit are 25.8 MB of samples
        // (188 samples), the whole font's 148.1 MB. Other suites running at once may add a little.
        #expect(grown < 60_000_000, "RSS grew \(grown / 1_000_000) MB at start")
        _ = presets
    }
}
