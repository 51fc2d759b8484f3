import AudioCompare
import Testing
import Foundation
import Sampling
import OfflineRender
import CAllocationCounter
import Engine
import FluidSynth
import MIDI
import SoundFile

/// SysEx in MIDI files reaches FluidSynth through the render path as its own
/// player sends it (`fluid_synth_sysex`, the bytes between F0 and F7): the
/// same file renders like `fluidsynth -ni -F`, and unlike the file without
/// the SysEx.
@Suite(.serialized) struct SysExRenderTests {
    /// Roland GS DT1, address 40 1A 15 ("use for rhythm part", part 11 = MIDI
    /// channel 11), value 02 (drum map 2), checksum 0F.
    static let gsDrumPart11: [UInt8] = [0x41, 0x10, 0x42, 0x12, 0x40, 0x1A, 0x15, 0x02, 0x0F]
    /// Universal non-real-time, all devices, GM System On.
    static let gmSystemOn: [UInt8] = [0x7E, 0x7F, 0x09, 0x01]

    /// One track at 120 bpm, 480 ticks per quarter: `setup` at tick 0 … 10, then
    /// a pattern of notes on `channel` (kick, snare, hats as drums; low notes as a piano).
    static func file(channel: UInt8, setup: [FileEvent]) -> [UInt8] {
        let ch = Channel(channel)
        var events: [TrackEvent] = setup.enumerated().map { TrackEvent(tick: UInt64($0.offset), event: $0.element) }
        let pattern: [UInt8] = [36, 42, 38, 42, 36, 36, 38, 46, 36, 42, 38, 42, 49, 36, 38, 42]
        for (i, note) in pattern.enumerated() {
            let tick = UInt64(240 + 240 * i)
            events.append(TrackEvent(tick: tick, event: .midi(.noteOn(UInt7(note), velocity: 110, channel: ch))))
            events.append(TrackEvent(tick: tick + 200, event: .midi(.noteOff(UInt7(note), channel: ch))))
        }
        events.sort { $0.tick < $1.tick }
        return StandardMIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(480),
                                tracks: [Track(events: events)]).serialized()
    }

    struct Renders { var ours: AudioFileReader; var theirs: AudioFileReader; var withoutSysEx: AudioFileReader; var piece: Double }

    /// Renders `file` with Carillon and with the fluidsynth command line, and `plain` with Carillon.
    func render(_ file: [UInt8], plain: [UInt8]) throws -> Renders {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(atPath: "\(dir)/in.mid", contents: Data(file))
        FileManager.default.createFile(atPath: "\(dir)/plain.mid", contents: Data(plain))
        let job = try RenderJob(soundFont: timGM)
        let summary = try job.render(input: "\(dir)/in.mid", to: .file("\(dir)/ours.wav", format: .wav, encoding: .float32))
        _ = try job.render(input: "\(dir)/plain.mid", to: .file("\(dir)/plain.wav", format: .wav, encoding: .float32))
        // synth.device-id 16 as Carillon sets it (FluidSynth 2.3.1's default is 0, which drops GS messages).
        let status = try run("/usr/bin/fluidsynth", ["-ni", "-g", "0.2", "-r", "44100", "-o", "audio.file.format=float",
                                                     "-o", "synth.device-id=16", "-F", "\(dir)/theirs.wav", timGM, "\(dir)/in.mid"])
        #expect(status == 0)
        return Renders(ours: try AudioFileReader(path: "\(dir)/ours.wav"), theirs: try AudioFileReader(path: "\(dir)/theirs.wav"),
                       withoutSysEx: try AudioFileReader(path: "\(dir)/plain.wav"), piece: summary.pieceDuration)
    }

    /// 10 ms RMS envelopes over the piece: the best correlation over fluidsynth's 0…192-frame lag,
    /// and the relative distance ‖a − b‖ / ‖b‖ at that lag.
    func compare(_ a: AudioFileReader, _ b: AudioFileReader, piece: Double) -> (r: Double, distance: Double) {
        let windows = Int(piece * 100) - 1
        let ea = Array(envelope(a, window: 441).prefix(windows))
        var best = (r: -1.0, distance: 0.0)
        for lag in stride(from: 0, through: 192, by: 32) {
            let eb = Array(envelope(b, window: 441, skip: lag).prefix(windows))
            let r = correlation(ea, eb)
            if r > best.r {
                let n = min(ea.count, eb.count)
                var d = 0.0, norm = 0.0
                for i in 0..<n { d += (ea[i] - eb[i]) * (ea[i] - eb[i]); norm += eb[i] * eb[i] }
                best = (r, (d / norm).squareRoot())
            }
        }
        return best
    }

    @Test func gsUseDrumPart_makesChannel11PlayDrums_likeFluidSynth() throws {
        let withSysEx = Self.file(channel: 10, setup: [.midi(.sysEx(Self.gsDrumPart11)), .midi(.programChange(0, channel: Channel(10)))])
        let plain = Self.file(channel: 10, setup: [.midi(.programChange(0, channel: Channel(10)))])
        let r = try render(withSysEx, plain: plain)
        let same = compare(r.ours, r.theirs, piece: r.piece)
        let other = compare(r.withoutSysEx, r.theirs, piece: r.piece)
        print("SysEx GS drum part 11: carillon vs fluidsynth envelope r \(same.r), distance \(same.distance); "
              + "without the SysEx (piano) vs fluidsynth r \(other.r), distance \(other.distance)")
        #expect(same.r > 0.95 && same.distance < 0.2)
        #expect(other.distance > 0.5)
    }

    @Test func gmSystemOn_resetsTheProgram_likeFluidSynth() throws {
        // Program 117 (melodic tom) is chosen, then GM System On resets channel 1 to the piano.
        let setup: [FileEvent] = [.midi(.programChange(117, channel: Channel(0))), .midi(.sysEx(Self.gmSystemOn))]
        let withSysEx = Self.file(channel: 0, setup: setup)
        let plain = Self.file(channel: 0, setup: [.midi(.programChange(117, channel: Channel(0)))])
        let r = try render(withSysEx, plain: plain)
        let same = compare(r.ours, r.theirs, piece: r.piece)
        let other = compare(r.withoutSysEx, r.theirs, piece: r.piece)
        print("SysEx GM System On: carillon vs fluidsynth envelope r \(same.r), distance \(same.distance); "
              + "without the SysEx vs fluidsynth r \(other.r), distance \(other.distance)")
        #expect(same.r > 0.95 && same.distance < 0.2)
        #expect(other.distance > 0.5)
    }

    /// The strongest frequency between `low` and `high` Hz (0.1 Hz steps, Goertzel) in the left channel from 0.3 to 0.9 s.
    func dominantFrequency(_ audio: AudioFileReader, low: Double, high: Double) -> Double {
        let rate = Double(audio.sampleRate)
        let start = Int(0.3 * rate), count = Int(0.6 * rate)
        var best = (f: 0.0, power: -1.0)
        var f = low
        while f <= high {
            let w = 2 * Double.pi * f / rate, c = 2 * cos(w)
            var s1 = 0.0, s2 = 0.0
            for i in start..<(start + count) {
                let s0 = Double(audio.samples[2 * i]) + c * s1 - s2
                s2 = s1; s1 = s0
            }
            let power = s1 * s1 + s2 * s2 - c * s1 * s2
            if power > best.power { best = (f, power) }
            f += 0.1
        }
        return best.f
    }

    @Test func midiTuning_octaveTuning_retunesTheChannel_likeFluidSynth() throws {
        // Universal non-real-time scale/octave tuning, 1-byte form, MIDI channel 1: every note +63 cents.
        let tuning: [UInt8] = [0x7E, 0x7F, 0x08, 0x08, 0x00, 0x00, 0x01] + [UInt8](repeating: 0x7F, count: 12)
        func file(_ setup: [FileEvent]) -> [UInt8] {
            var events = setup.enumerated().map { TrackEvent(tick: UInt64($0.offset), event: $0.element) }
            events.append(TrackEvent(tick: 100, event: .midi(.noteOn(69, velocity: 100, channel: Channel(0)))))
            events.append(TrackEvent(tick: 1_060, event: .midi(.noteOff(69, channel: Channel(0)))))
            return StandardMIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(480),
                                    tracks: [Track(events: events)]).serialized()
        }
        let flute: FileEvent = .midi(.programChange(73, channel: Channel(0)))
        let r = try render(file([flute, .midi(.sysEx(tuning))]), plain: file([flute]))
        let ours = dominantFrequency(r.ours, low: 420, high: 480)
        let theirs = dominantFrequency(r.theirs, low: 420, high: 480)
        let plain = dominantFrequency(r.withoutSysEx, low: 420, high: 480)
        print("SysEx MIDI Tuning (+63 cents on channel 1), A4: carillon \(ours) Hz, fluidsynth \(theirs) Hz, without the SysEx \(plain) Hz")
        #expect(abs(ours / theirs - 1) < 0.002)
        // 63 cents up: × 2^(63/1200) ≈ 1.037.
        #expect(abs(ours / plain - 1.037) < 0.005)
    }

    @Test func score_keepsCompleteSysExFromFiles() throws {
        let bytes = Self.file(channel: 10, setup: [.midi(.sysEx(Self.gsDrumPart11)), .midi(.sysEx(Self.gmSystemOn))])
        let score = Score(try StandardMIDIFile(bytes: bytes))
        #expect(score.sysExMessages == [Self.gsDrumPart11, Self.gmSystemOn])
        let placeholders = score.events.filter { $0.message.isSysEx }
        #expect(placeholders.map(\.message.sysExNumber) == [0, 1])
    }

    /// Heap calls FluidSynth makes for each kind of SysEx on the render thread.
    @Test func fluidSynthSysEx_allocations() throws {
        let synth = try Synth(settings: Settings.forRendering(sampleRate: 44_100))
        let font = try synth.loadSoundFont(at: timGM)
        defer { withExtendedLifetime(font) {} }
        let instrument = FluidSynthInstrument(synth: synth)
        let cases: [(String, [UInt8])] = [
            ("GM System On", Self.gmSystemOn),
            ("GS reset", [0x41, 0x10, 0x42, 0x12, 0x40, 0x00, 0x7F, 0x00, 0x41]),
            ("GS drum part", Self.gsDrumPart11),
            ("XG System On", [0x43, 0x10, 0x4C, 0x00, 0x00, 0x7E, 0x00]),
            // Scale/octave tuning, 1-byte form, channel 1: every note +63 cents.
            ("MIDI Tuning octave", [0x7E, 0x7F, 0x08, 0x08, 0x00, 0x00, 0x01] + [UInt8](repeating: 0x7F, count: 12)),
        ]
        var report: [String] = []
        for (name, bytes) in cases {
            bytes.withUnsafeBufferPointer { instrument.receiveSysEx($0) }   // first time: may set things up
            carillon_allocations_arm()
            for _ in 0..<10 { bytes.withUnsafeBufferPointer { instrument.receiveSysEx($0) } }
            let calls = carillon_allocations_disarm()
            report.append("\(name) \(calls)")
            if name != "MIDI Tuning octave" { #expect(calls == 0, "\(name): \(calls) heap calls") }
        }
        print("heap calls per 10 SysEx in fluid_synth_sysex (after a first): " + report.joined(separator: ", "))
        #expect(instrument.refusedCount == 0)
    }
}
