import OfflineRender
import Foundation
import MIDI
import SoundFile
import Testing

/// `--oscillator-channel 16 --a4 442` through the whole render path: a file's
/// notes on channel 16 come out of the oscillator at their pitch (and not
/// from the sampler too), while channel 1 still plays the SoundFont.
@Suite struct OscillatorChannelRenderTests {
    static let rate = 44_100.0

    /// 120 bpm, 480 ticks a beat: 960 ticks a second.
    static func file() -> [UInt8] {
        func at(_ seconds: Double, _ m: MIDIMessage) -> TrackEvent { TrackEvent(tick: UInt64(seconds * 960), event: .midi(m)) }
        let events = [
            at(0, .noteOn(69, velocity: 127, channel: 15)), at(2, .noteOff(69, channel: 15)),
            at(2.5, .noteOn(81, velocity: 127, channel: 15)), at(4.5, .noteOff(81, channel: 15)),
            at(5, .noteOn(48, velocity: 100, channel: 0)), at(7, .noteOff(48, channel: 0)),
        ]
        return StandardMIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(480),
                                tracks: [Track(events: events)]).serialized()
    }

    func frequency(_ x: ArraySlice<Float>) -> Double {
        var first = -1.0, last = -1.0, count = 0
        for i in (x.startIndex + 1)..<x.endIndex where x[i - 1] < 0 && x[i] >= 0 {
            let t = Double(i - 1) + Double(-x[i - 1]) / Double(x[i] - x[i - 1])
            if first < 0 { first = t }
            last = t; count += 1
        }
        return Double(count - 1) / (last - first) * Self.rate
    }

    @Test func oscillatorChannel_playsAtItsPitch_whileOtherChannelsPlayTheSampler() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(atPath: "\(dir)/in.mid", contents: Data(Self.file()))
        var options = RenderJob.Options()
        options.sampleRate = Int(Self.rate)
        options.host.sampler.reverb = false
        options.host.sampler.chorus = false
        options.host.oscillatorChannels = [15]
        options.host.a4 = 442
        let job = try RenderJob(soundFont: timGM, options: options)
        _ = try job.render(input: "\(dir)/in.mid", to: .file("\(dir)/out.wav", format: .wav, encoding: .float32))
        let samples = try AudioFileReader(path: "\(dir)/out.wav").samples
        let left = stride(from: 0, to: samples.count, by: 2).map { samples[$0] }
        func seconds(_ a: Double, _ b: Double) -> ArraySlice<Float> { left[Int(a * Self.rate)..<Int(b * Self.rate)] }

        let a4 = frequency(seconds(0.2, 1.8)), a5 = frequency(seconds(2.7, 4.3))
        print("oscillator channel 16 at A4 = 442: \(a4) Hz, \(a5) Hz")
        #expect(abs(1200 * log2(a4 / 442)) < 0.1)
        #expect(abs(1200 * log2(a5 / 884)) < 0.1)
        // The oscillator alone: a sine at osc.level's default −12 dB times osc.sustain's
        // default 0.7 (−3.1 dB); the sampler playing the note too would change both.
        let peak = Double(seconds(0.2, 1.8).map(abs).max()!)
        #expect(abs(20 * log10(peak) - (-12 + 20 * log10(0.7))) < 0.1)
        // Channel 1 still reaches FluidSynth.
        let piano = seconds(5.1, 6.5)
        let rms = (piano.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(piano.count)).squareRoot()
        #expect(rms > 0.001)   // measured 0.0025 (TimGM6mb piano, gain 0.2)
    }
}
