import Testing
import Foundation
@testable import Sampling
@testable import OfflineRender
import Engine
import FluidSynth
import MIDI
import SoundFile

/// The split render (`SamplerPool`) against one synth where FluidSynth
/// decides across notes: the voice budget of one synth, mono modes set for a
/// group of channels, exclusive classes on a melodic preset. Each test builds
/// a MIDI file meant to break the rule it checks.
@Suite(.serialized) struct SplitRenderTests {
    // MARK: Voice budget

    /// `notes` piano notes started together (two channels, keys from 20 up),
    /// held a second.
    static func cluster(_ notes: Int) -> [(Double, MIDIMessage)] {
        var events: [(Double, MIDIMessage)] = []
        for i in 0..<notes {
            let channel = Channel(i % 2), key = UInt7(20 + i / 2)
            events.append((0.01, .noteOn(key, velocity: 100, channel: channel)))
            events.append((1.0, .noteOff(key, channel: channel)))
        }
        return events
    }

    /// A synth over FluidR3 (samples of the presets `score` selects), with `polyphony` voices.
    static func synth(for score: Score, polyphony: Int? = nil) throws -> (FluidSynthInstrument, SoundFont) {
        let settings = try Settings.forRendering(sampleRate: 44_100, polyphony: polyphony)
        try settings.set("synth.dynamic-sample-loading", true)
        let synth = try Synth(settings: settings)
        let font = try synth.loadSoundFont(at: fluidR3)
        let instrument = FluidSynthInstrument(synth: synth)
        _ = try instrument.pinPresets(selectedBy: score)
        return (instrument, font)
    }

    /// The most voices one synth with room for all of them has at once for `score`.
    static func voicesNeeded(_ score: Score) throws -> Int {
        let (instrument, font) = try synth(for: score, polyphony: 4096)
        let renderer = Renderer(instrument: instrument)
        renderer.prepare(sampleRate: 44_100, maxFrames: 512)
        renderer.schedule(score)
        let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1024)
        defer { block.deallocate() }
        var most = 0
        while !renderer.isScoreFinished {
            renderer.render(frames: 512, into: block)
            most = max(most, instrument.synth.activeVoiceCount)
        }
        withExtendedLifetime(font) {}
        return most
    }

    /// Renders `score` on a pool of two FluidR3 synths (default polyphony) and returns the pool after it.
    static func renderOnPool(_ score: Score) throws -> SamplerPool {
        let members = try (0..<2).map { _ in try synth(for: score) }
        let pool = try SamplerPool(members: members.map(\.0), keepingAlive: members.map(\.1), blocksInFlight: 2)
        pool.reset()
        let renderer = Renderer(instrument: pool)
        renderer.prepare(sampleRate: 44_100, maxFrames: 2048)
        renderer.schedule(score)
        let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: 4096)
        defer { block.deallocate() }
        while !renderer.isScoreFinished {
            renderer.render(frames: 2048, into: block)
        }
        return pool
    }

    /// 200 notes at once need more voices than one synth has: the pool
    /// (each synth with all 256) plays them all, one synth steals. The flag
    /// says so, and `reset` clears it.
    @Test func voiceBudget_200Notes_tripsFlag() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.write(Self.cluster(200), to: "\(dir)/200.mid")
        let score = try Score(contentsOf: "\(dir)/200.mid")
        let needed = try Self.voicesNeeded(score)
        let pool = try Self.renderOnPool(score)
        print("voice budget, 200 notes: \(needed) voices needed, pool peak \(pool.voicePeak) of \(pool.polyphony)")
        #expect(pool.polyphony == 256)
        #expect(needed > pool.polyphony)
        #expect(pool.voiceBudgetExceeded)
        #expect(pool.voicePeak >= needed)
        pool.reset()
        #expect(!pool.voiceBudgetExceeded)
        #expect(pool.voicePeak == 0)
    }

    /// 100 notes at once fit one synth: no flag, and the split render is the
    /// one-synth render (every voice in a fresh slot: to rounding).
    @Test func voiceBudget_100Notes_staysClear() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.write(Self.cluster(100), to: "\(dir)/100.mid")
        let score = try Score(contentsOf: "\(dir)/100.mid")
        let needed = try Self.voicesNeeded(score)
        let pool = try Self.renderOnPool(score)
        print("voice budget, 100 notes: \(needed) voices needed, pool peak \(pool.voicePeak) of \(pool.polyphony)")
        #expect(needed <= pool.polyphony)
        #expect(pool.voicePeak >= needed)
        #expect(!pool.voiceBudgetExceeded)
        let db = try Self.splitResidual("\(dir)/100.mid", font: fluidR3, in: dir)
        print("voice budget, 100 notes: split residual \(db) dB")
        #expect(db < -60)
    }

    /// Through `RenderJob`: 140 and 200 notes at once (the cases:
    /// −9.6 and −3.1 dB split against one synth) are rendered again on one
    /// synth, so the split render's file is the one-synth file, byte for byte;
    /// 100 notes stay split.
    @Test(arguments: [(140, true), (200, true), (100, false)])
    func renderJob_overOneSynthsBudget_rendersOnOneSynth(notes: Int, overBudget: Bool) throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try Self.write(Self.cluster(notes), to: "\(dir)/cluster.mid")
        var summaries: [RenderJob.Summary] = []
        for threads in [1, 2] {
            var options = RenderJob.Options()
            options.threads = threads
            let job = try RenderJob(soundFont: fluidR3, options: options)
            summaries.append(try job.render(input: "\(dir)/cluster.mid", to: .file("\(dir)/t\(threads).wav", format: .wav, encoding: .float32)))
        }
        #expect(!summaries[0].renderedOnOneSynth)
        #expect(summaries[1].renderedOnOneSynth == overBudget)
        let one = try AudioFileReader(path: "\(dir)/t1.wav").samples, two = try AudioFileReader(path: "\(dir)/t2.wav").samples
        if overBudget {
            #expect(one == two)
        } else {
            #expect(SamplerPoolTests.residualDB(one, two) < -60)
        }
        // Nothing of the abandoned split render is left beside the output.
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: dir)) == ["cluster.mid", "t1.wav", "t2.wav"])
    }

    // MARK: Split against one synth, through RenderJob

    /// Writes `score` as a MIDI file (one track, 480 ticks a beat at 120 bpm).
    static func write(_ events: [(Double, MIDIMessage)], to path: String) throws {
        let track = Track(events: events.sorted { $0.0 < $1.0 }.map { TrackEvent(tick: UInt64(($0.0 * 960).rounded()), event: .midi($0.1)) })
        let file = StandardMIDIFile(format: .singleTrack, division: .ticksPerQuarterNote(480), tracks: [track])
        try Data(file.serialized()).write(to: URL(fileURLWithPath: path))
    }

    /// Renders the MIDI file at `input` with `threads` synths; returns the samples.
    static func render(_ input: String, font: String, threads: Int, to path: String) throws -> [Float] {
        var options = RenderJob.Options()
        options.threads = threads
        options.tail = TailPolicy(silenceThreshold: -400, maxTail: 1)   // the same length either way
        let job = try RenderJob(soundFont: font, options: options)
        _ = try job.render(input: input, to: .file(path, format: .wav, encoding: .float32))
        return try AudioFileReader(path: path).samples
    }

    /// The split render (2 threads) against one synth: residual RMS over the one synth's, in dB.
    static func splitResidual(_ input: String, font: String, in dir: String) throws -> Double {
        let one = try render(input, font: font, threads: 1, to: "\(dir)/one.wav")
        let two = try render(input, font: font, threads: 2, to: "\(dir)/two.wav")
        #expect(one.contains { abs($0) > 0.01 })
        return SamplerPoolTests.residualDB(one, two)
    }

    /// Chords on several channels, each note a different length: spread over
    /// synths unless the channel plays whole.
    static func chords(at seconds: Double, channels: [Int], keys: [Int]) -> [(Double, MIDIMessage)] {
        var events: [(Double, MIDIMessage)] = []
        for channel in channels {
            for (i, key) in keys.enumerated() {
                let k = UInt7(key + channel), c = Channel(channel)
                events.append((seconds + 0.01 * Double(i), .noteOn(k, velocity: 100, channel: c)))
                events.append((seconds + 0.4 + 0.05 * Double(i), .noteOff(k, channel: c)))
            }
        }
        return events
    }

    /// CC 126 (mono) with value 0 on the basic channel (channel 1) puts all
    /// 16 channels in mono (FluidSynth's basic-channel group): a chord on
    /// channel 3 plays as a legato line there. Split, it must still be one line.
    @Test func monoOnBasicChannel_chordOnChannel3_matchesOneSynth() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var events: [(Double, MIDIMessage)] = [
            (0, .programChange(0, channel: 0)), (0, .programChange(48, channel: 2)), (0, .programChange(24, channel: 4)),
            (0.05, .cc(126, value: 0, channel: 0)),
        ]
        events += Self.chords(at: 0.2, channels: [2], keys: [48, 52, 55, 60])
        events += Self.chords(at: 0.9, channels: [0, 2, 4], keys: [50, 53, 57, 62, 65])
        events += Self.chords(at: 1.6, channels: [2, 4], keys: [45, 57, 64])
        try Self.write(events, to: "\(dir)/mono.mid")
        let db = try Self.splitResidual("\(dir)/mono.mid", font: fluidR3, in: dir)
        print("split residual, CC 126 on channel 1, chords on channel 3: \(db) dB")
        #expect(db < -60)
    }

    /// Basic-channel changes: CC 126 value 4 on channel 1 (channels 1–4
    /// mono, 5–16 disabled: their notes and program changes refused), then
    /// CC 127 value 0 (all 16 poly again, every note off), then CC 124 and
    /// CC 126 value 2 (omni-off mono on 1–2) and a legato pedal sent on the
    /// disabled channel 16 (a global controller: it reaches channels 1–2).
    @Test func basicChannelChanges_matchOneSynth() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var events: [(Double, MIDIMessage)] = [
            (0, .programChange(0, channel: 0)), (0, .programChange(48, channel: 2)), (0, .programChange(24, channel: 5)),
            (0.05, .cc(126, value: 4, channel: 0)),
            (0.1, .programChange(56, channel: 5)),
        ]
        events += Self.chords(at: 0.2, channels: [1, 2, 5], keys: [48, 52, 55, 60])
        events += [(0.8, .cc(127, value: 0, channel: 0))]
        events += Self.chords(at: 0.9, channels: [2, 5], keys: [50, 53, 57, 62])
        events += [(1.5, .cc(124, value: 0, channel: 0)), (1.52, .cc(126, value: 2, channel: 0)),
                   (1.55, .cc(68, value: 127, channel: 15))]
        events += Self.chords(at: 1.6, channels: [1, 5], keys: [45, 57, 64, 69])
        try Self.write(events, to: "\(dir)/modes.mid")
        let db = try Self.splitResidual("\(dir)/modes.mid", font: fluidR3, in: dir)
        print("split residual, basic-channel changes: \(db) dB")
        #expect(db < -60)
    }

    // MARK: Exclusive classes

    /// carillon-test.sf2 with bank 0 program 115 playing the drum kit's
    /// instrument (hi-hats in exclusive class 1): a melodic preset with an
    /// exclusive class. Written into `dir`.
    static func fontWithMelodicHats(in dir: String) throws -> String {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: carillonTestFont)))
        func find(_ tag: String, from: Int) -> Int {
            let t = Array(tag.utf8)
            var i = from
            while i + 4 <= bytes.count { if Array(bytes[i..<i + 4]) == t { return i }; i += 1 }
            return -1
        }
        func word(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        let pdta = find("pdta", from: 12)
        let phdr = find("phdr", from: pdta) + 8, pbag = find("pbag", from: pdta) + 8, pgen = find("pgen", from: pdta) + 8
        var patched = false
        for p in 0..<(word(phdr - 4) / 38 - 1) where word(phdr + 38 * p + 20) == 115 && word(phdr + 38 * p + 22) == 0 {
            for zone in word(phdr + 38 * p + 24)..<word(phdr + 38 * (p + 1) + 24) {
                for g in word(pbag + 4 * zone)..<word(pbag + 4 * (zone + 1)) where word(pgen + 4 * g) == 41 {
                    bytes[pgen + 4 * g + 2] = 5; bytes[pgen + 4 * g + 3] = 0   // instrument 5: the drum kit
                    patched = true
                }
            }
        }
        #expect(patched)
        let path = "\(dir)/melodic-hats.sf2"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func exclusiveClasses_readFromTheFont() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let original = try SoundFontFile(path: carillonTestFont).hydra.presetsWithExclusiveClass()
        #expect(original == [SoundFontHydra.PresetNumber(bank: 128, program: 0)])
        let patched = try SoundFontFile(path: try Self.fontWithMelodicHats(in: dir)).hydra.presetsWithExclusiveClass()
        #expect(patched == [SoundFontHydra.PresetNumber(bank: 128, program: 0), SoundFontHydra.PresetNumber(bank: 0, program: 115)])
        let fluid = try SoundFontFile(path: fluidR3).hydra.presetsWithExclusiveClass()
        print("FluidR3_GM presets with an exclusive class: \(fluid.sorted { ($0.bank, $0.program) < ($1.bank, $1.program) }.map { "\($0.bank):\($0.program)" })")
        #expect(fluid.contains(SoundFontHydra.PresetNumber(bank: 128, program: 0)))
    }

    /// Open and closed hats on bank 0 program 115 of the patched font, on
    /// channel 1: the closed hat (class 1) chokes the open one on the same
    /// channel. Split over synths, the choke would be lost.
    @Test func exclusiveClassOnMelodicPreset_matchesOneSynth() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let font = try Self.fontWithMelodicHats(in: dir)
        // Only this channel plays: no other channel's notes move voice slots
        // (FluidSynth's 64-frame onset ramp from a slot's last voice), so the
        // split render is the one-synth render to rounding when the channel stays whole.
        var events: [(Double, MIDIMessage)] = [(0, .programChange(115, channel: 0))]
        for bar in 0..<4 {
            let t = 0.1 + 0.6 * Double(bar)
            events += [(t, .noteOn(46, velocity: 110, channel: 0)), (t + 0.1, .noteOff(46, channel: 0)),
                       (t + 0.3, .noteOn(42, velocity: 100, channel: 0)), (t + 0.35, .noteOff(42, channel: 0))]
        }
        try Self.write(events, to: "\(dir)/hats.mid")
        let db = try Self.splitResidual("\(dir)/hats.mid", font: font, in: dir)
        print("split residual, exclusive class on bank 0: \(db) dB")
        #expect(db < -60)
    }
}

/// The pool's model of FluidSynth's basic-channel table (`ChannelModes`)
/// against FluidSynth's own, message by message.
@Suite struct SplitChannelModesTests {
    /// The model's answer in `Synth.mode(ofChannel:)`'s terms.
    static func mode(_ modes: ChannelModes, _ channel: Int) -> [Int]? {
        guard modes.bits(ofChannel: channel) & ChannelModes.enabled != 0 else { return nil }
        var basic = channel
        while basic >= 0 && modes.bits(ofChannel: basic) & ChannelModes.basic == 0 { basic -= 1 }
        guard basic >= 0 else { return nil }
        return [basic, Int(modes.bits(ofChannel: channel) & 0x03), modes.groupSize(ofChannel: basic)]
    }

    /// Random CC 124–127 on random channels (disabled ones included: global
    /// controllers), random group sizes, and GM, GS and XG resets and
    /// near-resets, 3000 messages: after each, every channel's mode and group
    /// as FluidSynth reports them equal the model's.
    @Test func randomModeMessages_modelMatchesFluidSynth() throws {
        let synth = try Synth(settings: try Settings.forRendering(sampleRate: 44_100))
        _ = synth.systemReset()
        var modes = ChannelModes(deviceID: synth.deviceID)
        #expect(modes.deviceID == 16)
        let sysExes: [[UInt8]] = [
            [0x7E, 0x7F, 0x09, 0x01], [0x7E, 0x10, 0x09, 0x03], [0x7E, 0x7F, 0x09, 0x02], [0x7E, 0x11, 0x09, 0x01],
            [0x41, 0x10, 0x42, 0x12, 0x40, 0x00, 0x7F, 0x00, 0x41], [0x41, 0x10, 0x42, 0x12, 0x40, 0x00, 0x7F, 0x7F, 0x42],
            [0x41, 0x10, 0x42, 0x12, 0x40, 0x00, 0x7F, 0x00, 0x40], [0x41, 0x7F, 0x42, 0x12, 0x40, 0x00, 0x7F, 0x00, 0x41],
            [0x43, 0x10, 0x4C, 0x00, 0x00, 0x7E, 0x00], [0x43, 0x10, 0x4C, 0x00, 0x00, 0x7F, 0x01], [0x43, 0x12, 0x4C, 0x00, 0x00, 0x7E, 0x00],
        ]
        var resets = 0, changes = 0, disabled = 0
        var random = SplitMix(seed: 17)
        for step in 0..<3000 {
            if random.next(100) < 4 {
                let bytes = sysExes[random.next(sysExes.count)]
                _ = bytes.withUnsafeBufferPointer { synth.sysEx($0) }
                if bytes.withUnsafeBufferPointer({ modes.resets($0) }) { modes.reset(); resets += 1 }
            } else {
                // The basic channel often (only a basic channel changes mode),
                // channel 16 often (a global controller for channel 1's group).
                let pick = random.next(6), channel = pick < 2 ? 0 : pick == 2 ? 15 : random.next(16)
                let controller = 124 + random.next(4)
                let value = random.next(4) == 0 ? random.next(128) : random.next(18)
                _ = synth.controlChange(channel: Int32(channel), controller: Int32(controller), value: Int32(value))
                let reach = modes.reach(ofControlOn: channel)
                for c in 0..<16 where reach & 1 << c != 0 {
                    if modes.changeMode(onChannel: c, controller: controller, value: value) != 0 { changes += 1 }
                }
            }
            for c in 0..<16 {
                let real = synth.mode(ofChannel: c).map { [$0.basic, $0.mode, $0.groupSize] }
                let model = Self.mode(modes, c)
                #expect(real == model, "step \(step), channel \(c + 1)")
                if real == nil { disabled += 1 }
            }
        }
        print("channel modes: \(changes) mode changes, \(resets) resets, \(disabled) disabled channel-steps")
        #expect(changes > 500 && resets > 20 && disabled > 1000)
    }

    /// The routing plays whole every channel a mono mode reaches, and
    /// releases held keys only where FluidSynth turns notes off.
    @Test func routing_monoGroup_playsWhole() {
        var routing = NotePlacement(synthCount: 2, deviceID: 16)
        defer { routing.release() }
        routing.reset(whole: 0)
        _ = routing.target(of: .controlChange(126, value: 3, channel: 5))   // not a basic channel: nothing
        #expect(routing.whole == 0)
        _ = routing.target(of: .controlChange(126, value: 3, channel: 0))   // channels 1–3 mono, 4–16 disabled
        #expect(routing.whole == 0b111)
        _ = routing.target(of: .controlChange(127, value: 0, channel: 0))   // all poly again; whole stays
        #expect(routing.whole == 0b111)
        _ = routing.target(of: .controlChange(126, value: 0, channel: 0))
        #expect(routing.whole == 0xFFFF)
        routing.reset(whole: 0)
        _ = routing.target(of: .controlChange(68, value: 127, channel: 6))
        _ = routing.target(of: .controlChange(65, value: 0, channel: 7))
        _ = routing.target(of: .controlChange(84, value: 60, channel: 8))
        #expect(routing.whole == 1 << 6 | 1 << 8)
    }
}

/// A small deterministic generator (SplitMix64) for reproducible random tests.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}
