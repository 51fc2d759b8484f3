import Testing
import Foundation
import OfflineRender
import Engine
import MIDI
import SoundFile

/// A file written here with notes at known times across tempo changes: each
/// note's onset in the rendered audio must lie within one FluidSynth block
/// (64 frames) of its exact time.
@Suite struct OnsetTimingTests {
    static let ppqn: UInt64 = 480
    /// (tick, microseconds per quarter): 120 bpm, 80 bpm at beat 4, 150 bpm at beat 8.
    static let tempos: [(UInt64, UInt32)] = [(0, 500_000), (1920, 750_000), (3840, 400_000)]
    static let noteTicks: [UInt64] = {
        var ticks: [UInt64] = []
        for beat: UInt64 in 0..<12 { ticks.append(240 + 480 * beat) }
        ticks.append(3847)    // just after the last tempo change
        ticks.append(4013)
        return ticks.sorted()
    }()

    /// Seconds at a tick, worked out here from the tempo list (not by the MIDI module).
    static func exactSeconds(_ tick: UInt64) -> Double {
        var seconds = 0.0
        for (i, (start, tempo)) in tempos.enumerated() {
            let end = i + 1 < tempos.count ? tempos[i + 1].0 : UInt64.max
            guard tick > start else { break }
            seconds += Double(min(tick, end) - start) / Double(ppqn) * Double(tempo) / 1e6
        }
        return seconds
    }

    static func file() -> [UInt8] {
        let tempoTrack = Track(events: tempos.map { TrackEvent(tick: $0.0, event: .meta(.tempo(microsecondsPerQuarterNote: $0.1))) })
        var notes: [TrackEvent] = [TrackEvent(tick: 0, event: .midi(.programChange(0, channel: 9)))]
        for tick in noteTicks.sorted() {
            notes.append(TrackEvent(tick: tick, event: .midi(.noteOn(75, velocity: 120, channel: 9))))   // claves
            notes.append(TrackEvent(tick: tick + 30, event: .midi(.noteOff(75, channel: 9))))
        }
        notes.sort { $0.tick < $1.tick }
        let smf = StandardMIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(UInt16(ppqn)),
                                   tracks: [tempoTrack, Track(events: notes)])
        return smf.serialized()
    }

    @Test func onsets_liewithinOneFluidSynthBlock_ofExactTimes() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let input = "\(dir)/onsets.mid", output = "\(dir)/onsets.wav"
        FileManager.default.createFile(atPath: input, contents: Data(Self.file()))
        var options = RenderJob.Options()
        options.host.sampler.reverb = false; options.host.sampler.chorus = false; options.host.sampler.gain = 1
        let job = try RenderJob(soundFont: timGM, options: options)
        _ = try job.render(input: input, to: .file(output, format: .wav, encoding: .float32))
        let audio = try AudioFileReader(path: output)
        let rate = Double(audio.sampleRate)
        let peak = audio.samples.map(abs).max() ?? 0
        let threshold = peak * 0.02
        var errors: [Int] = []
        for tick in Self.noteTicks.sorted() {
            let exact = Int((Self.exactSeconds(tick) * rate).rounded())
            // The first frame above 2% of the peak, searched from 2 ms before the exact time.
            var i = exact - 88
            while i < audio.frames, max(abs(audio.samples[2 * i]), abs(audio.samples[2 * i + 1])) < threshold { i += 1 }
            errors.append(i - exact)
        }
        print("onset errors (frames, 44.1 kHz) at ticks \(Self.noteTicks.sorted()): \(errors); worst \(errors.map(abs).max()!)")
        #expect(errors.allSatisfy { abs($0) <= 64 })
    }
}
