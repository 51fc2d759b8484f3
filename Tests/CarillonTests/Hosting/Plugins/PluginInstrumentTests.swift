import Hosting
import OfflineRender
import Engine
import Foundation
import MIDI
import Parameters
import SoundFile
import Testing

/// `--instrument N=URI`: an LV2 instrument from Debian's mda-lv2 plays a
/// channel of a real render beside the SoundFont, in that channel's strip,
/// at the sampler's times and the file's pitches.
@Suite(.serialized) struct PluginInstrumentTests {
    static let ePiano = "http://drobilla.net/plugins/mda/EPiano"
    static let piano = "http://drobilla.net/plugins/mda/Piano"
    static let rate = 48_000

    /// Channel 1: notes 1.5 s apart at ticks off the 64-frame grid, each
    /// 0.3 s long; channel 10: a drum between them (the SoundFont's).
    static func song() -> (bytes: [UInt8], ticks: [UInt64], pitches: [Int]) {
        let ticks: [UInt64] = [37, 1475, 2917, 4333, 5791]   // 480 per quarter at 120 bpm: 960 a second
        let pitches = [57, 64, 69, 76, 81]
        var events = [TrackEvent(tick: 0, event: .meta(.tempo(microsecondsPerQuarterNote: 500_000)))]
        for (t, p) in zip(ticks, pitches) {
            events.append(TrackEvent(tick: t, event: .midi(.noteOn(UInt7(p), velocity: 100, channel: 0))))
            events.append(TrackEvent(tick: t + 288, event: .midi(.noteOff(UInt7(p), channel: 0))))
            events.append(TrackEvent(tick: t + 700, event: .midi(.noteOn(38, velocity: 100, channel: 9))))
            events.append(TrackEvent(tick: t + 760, event: .midi(.noteOff(38, channel: 9))))
        }
        events.sort { $0.tick < $1.tick }
        let smf = StandardMIDIFile(format: .singleTrack, division: .ticksPerQuarterNote(480), tracks: [Track(events: events)])
        return (smf.serialized(), ticks, pitches)
    }

    static func render(in dir: String, threads: Int = 1, plugin: String = ePiano, configure: (inout RenderJob.Options) -> Void = { _ in })
        throws -> RenderJob.Summary
    {
        let input = "\(dir)/song.mid"
        FileManager.default.createFile(atPath: input, contents: Data(song().bytes))
        var options = RenderJob.Options()
        options.sampleRate = rate
        options.threads = threads
        options.host.sampler.reverb = false; options.host.sampler.chorus = false
        options.host.instruments = [InstrumentSpec(channel: 0, uri: plugin)]
        options.stems = true
        options.labels = true
        configure(&options)
        let job = try RenderJob(soundFont: timGM, options: options)
        return try job.render(input: input, to: .file("\(dir)/song-\(threads).wav", format: .wav, encoding: .float32, stems: RenderJob.StemFolder("\(dir)/stems-\(threads)")))
    }

    /// The first frame from `from` where the stem sounds after 1000 silent frames.
    static func onset(_ s: [Float], near frame: Int) -> Int? {
        let frames = s.count / 2
        for f in max(0, frame - 2048)..<min(frames, frame + 2048) where abs(s[2 * f]) + abs(s[2 * f + 1]) > 1e-4 {
            if (max(0, f - 1000)..<f).allSatisfy({ abs(s[2 * $0]) + abs(s[2 * $0 + 1]) <= 1e-4 }) { return f }
        }
        return nil
    }

    @Test func ePiano_playsChannelOne_atTheSamplersTimes_andTheFilesPitches() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let summary = try Self.render(in: dir)
        let (_, ticks, pitches) = Self.song()
        let stem = try AudioFileReader(path: "\(dir)/stems-1/ch01.wav").samples
        let labels = try #require(summary.labels).notes.filter { $0.channel == 1 }
        #expect(labels.count == ticks.count)
        for ((tick, pitch), label) in zip(zip(ticks, pitches), labels) {
            let exact = Double(tick) / 960 * Double(Self.rate)
            let onGrid = Int(((exact.rounded() + 32) / 64).rounded(.down) * 64)
            #expect(Int((label.onset * Double(Self.rate)).rounded()) == onGrid)
            #expect(label.preset == "MDA ePiano" && label.stem == "ch01" && label.bank == -1)
            // The sound starts at the frame the sampler would apply the note-on (the
            // plugin takes it sample-accurately), within one block of the MIDI's time.
            let found = try #require(Self.onset(stem, near: onGrid), "no onset near tick \(tick)")
            #expect(found >= onGrid && found < onGrid + 4, "pitch \(pitch): grid frame \(onGrid), sound from \(found)")
            #expect(abs(Double(found) - exact) <= 64)
            // The pitch the file asks for, from the sustained part of the left side.
            let left = (found + 4800..<found + 14400).map { stem[2 * $0] }
            let hz = pitchOf(left, rate: Double(Self.rate)), expected = 440 * pow(2, Double(pitch - 69) / 12)
            #expect(abs(hz / expected - 1) < 0.003, "note \(pitch) sounded at \(hz) Hz, not \(expected)")
        }
        // The drums stay the SoundFont's, in their own strip; the plugin sounds in channel 1's only.
        let drums = try AudioFileReader(path: "\(dir)/stems-1/ch10.wav").samples
        #expect(drums.contains { abs($0) > 0.01 })
        let drumLabels = try #require(summary.labels).notes.filter { $0.channel == 10 }
        #expect(drumLabels.allSatisfy { $0.drum && $0.bank == 128 && !$0.preset.isEmpty })
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/stems-1/ch02.wav"))
    }

    /// The same bytes on a rerun, and with the piece split over a pool of
    /// synths (the plugin stays whole on the render thread). mda Piano: mda
    /// EPiano and JX10 differ by one 16-bit step when two instances run at
    /// once in one process (Benchmarks/README.md), so the test does not run
    /// beside the others.
    @Test func render_isByteIdentical_acrossRerunsAndThreads() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(path)")) }
        _ = try Self.render(in: dir, threads: 1, plugin: Self.piano)
        let first = try bytes("song-1.wav"), firstPiano = try bytes("stems-1/ch01.wav")
        #expect(firstPiano.count > 100_000)
        _ = try Self.render(in: dir, threads: 1, plugin: Self.piano)
        #expect(try bytes("song-1.wav") == first, "a rerun changed the render")
        _ = try Self.render(in: dir, threads: 2, plugin: Self.piano) { $0.blockFrames = 512 }
        #expect(try bytes("song-2.wav") == first, "a pool of 2 synths changed the render")
        #expect(try bytes("stems-2/ch01.wav") == firstPiano)
    }

    /// A drum sampler that loads its kit through the LV2 worker (avldrums):
    /// the drums of channel 10 sound from their first note, in their labelled
    /// block, and a rerun gives the same bytes (offline, the worker's jobs are done at once).
    @Test func avldrums_playsChannelTen_fromItsFirstNote_andRerunsByteIdentical() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let drums = "http://gareus.org/oss/lv2/avldrums#BlackPearl"
        func render() throws -> RenderJob.Summary {
            try Self.render(in: dir) { $0.host.instruments = [InstrumentSpec(channel: 9, uri: drums)] }
        }
        let summary = try render()
        let stem = try AudioFileReader(path: "\(dir)/stems-1/ch10.wav").samples
        let labels = try #require(summary.labels).notes.filter { $0.channel == 10 }
        #expect(labels.count == 5 && labels.allSatisfy { $0.preset == "Black Pearl Drumkit" })
        for label in labels {
            let onset = Int((label.onset * Double(Self.rate)).rounded())
            let found = try #require(Self.onset(stem, near: onset), "no drum near \(label.onset) s")
            #expect(found >= onset && found < onset + 64, "drum at label frame \(onset), sound from \(found)")
        }
        let first = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/song-1.wav"))
        _ = try render()
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/song-1.wav")) == first)
    }

    @Test func aMissingPlugin_andAnEffectAsInstrument_areOneClearLineEach() throws {
        var options = RenderJob.Options()
        options.host.instruments = [InstrumentSpec(channel: 2, uri: "http://drobilla.net/plugins/mda/EPian")]
        #expect { _ = try RenderJob(soundFont: timGM, options: options) } throws: {
            "\($0)".contains("no LV2 plugin http://drobilla.net/plugins/mda/EPian is installed (did you mean http://drobilla.net/plugins/mda/EPiano?)")
        }
        options.host.instruments = [InstrumentSpec(channel: 2, uri: "http://drobilla.net/plugins/mda/Delay")]
        #expect { _ = try RenderJob(soundFont: timGM, options: options) } throws: {
            "\($0)".contains("an instrument takes MIDI in and gives audio out") && "\($0)".contains("use --insert")
        }
    }
}

/// The pitch of `x` by autocorrelation between 100 and 2000 Hz (parabolic peak).
func pitchOf(_ x: [Float], rate: Double) -> Double {
    let minLag = Int(rate / 2000), maxLag = Int(rate / 100)
    var r = [Double](repeating: 0, count: maxLag + 2)
    for lag in minLag...maxLag + 1 {
        var sum = 0.0
        for i in 0..<(x.count - maxLag - 2) { sum += Double(x[i]) * Double(x[i + lag]) }
        r[lag] = sum
    }
    let top = r[minLag...maxLag].max()!
    var best = 0
    for lag in minLag + 1...maxLag where r[lag] > r[lag - 1] && r[lag] >= r[lag + 1] && r[lag] > 0.8 * top {
        best = lag
        break   // the first strong peak: the period, not a multiple
    }
    guard best > 0 else { return 0 }
    let (a, b, c) = (r[best - 1], r[best], r[best + 1])
    return rate / (Double(best) + (a - c) / (2 * (a - 2 * b + c)))
}
