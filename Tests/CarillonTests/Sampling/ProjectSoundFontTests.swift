import AudioCompare
import Testing
import Foundation
import Sampling
import OfflineRender
import MIDI
import SoundFile

/// Renders through Carillon's render path with the project's own SoundFont
/// (soundfonts/carillon-test.sf2): no download needed, and its sounds are
/// known exactly (a pure sine at A4, drums on channel 10).
@Suite(.serialized) struct ProjectSoundFontTests {
    static func write(_ tracks: [Track], to path: String) {
        let smf = StandardMIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(480), tracks: tracks)
        FileManager.default.createFile(atPath: path, contents: Data(smf.serialized()))
    }

    static func dryOptions() -> RenderJob.Options {
        var options = RenderJob.Options()
        options.host.sampler.reverb = false; options.host.sampler.chorus = false; options.host.sampler.gain = 0.5
        return options
    }

    /// A4 for two beats (one second at 120 bpm) on program 0, the sine piano.
    @Test func render_sinePianoA4_soundsAt440Hertz() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.write([Track(events: [
            TrackEvent(tick: 0, event: .midi(.programChange(0, channel: 0))),
            TrackEvent(tick: 0, event: .midi(.noteOn(69, velocity: 100, channel: 0))),
            TrackEvent(tick: 960, event: .midi(.noteOff(69, channel: 0))),
        ])], to: "\(dir)/a4.mid")
        let job = try RenderJob(soundFont: carillonTestFont, options: Self.dryOptions())
        _ = try job.render(input: "\(dir)/a4.mid", to: .file("\(dir)/a4.wav", format: .wav, encoding: .float32))
        let audio = try AudioFileReader(path: "\(dir)/a4.wav")
        // Upward zero crossings of the left channel over 0.1-0.9 s, with linear
        // interpolation between the frames around each crossing.
        let rate = Double(audio.sampleRate)
        var crossings: [Double] = []
        for frame in Int(0.1 * rate)..<Int(0.9 * rate) {
            let a = audio.samples[2 * (frame - 1)], b = audio.samples[2 * frame]
            if a < 0, b >= 0 { crossings.append(Double(frame - 1) + Double(a / (a - b))) }
        }
        let frequency = Double(crossings.count - 1) / ((crossings.last! - crossings.first!) / rate)
        let peak = audio.samples.map(abs).max() ?? 0
        print("project font: A4 renders at \(frequency) Hz, peak \(peak)")
        #expect(abs(frequency - 440) / 440 < 0.01)
        #expect(peak > 0.05)
    }

    /// Channel 10 plays the drum kit (bank 128): a kick and a closed hat, each alone in its window.
    @Test func render_drumChannel_sounds() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.write([Track(events: [
            TrackEvent(tick: 0, event: .midi(.noteOn(36, velocity: 120, channel: 9))),
            TrackEvent(tick: 60, event: .midi(.noteOff(36, channel: 9))),
            TrackEvent(tick: 480, event: .midi(.noteOn(42, velocity: 120, channel: 9))),
            TrackEvent(tick: 540, event: .midi(.noteOff(42, channel: 9))),
            TrackEvent(tick: 960, event: .midi(.noteOff(42, channel: 9))),   // keeps the piece 1 s long
        ])], to: "\(dir)/drums.mid")
        let job = try RenderJob(soundFont: carillonTestFont, options: Self.dryOptions())
        _ = try job.render(input: "\(dir)/drums.mid", to: .file("\(dir)/drums.wav", format: .wav, encoding: .float32))
        let audio = try AudioFileReader(path: "\(dir)/drums.wav")
        // 100 ms windows: the kick at 0 s, the hat at 0.5 s, silence between.
        let windows = envelope(audio, window: 4410)
        print("project font: drum RMS per 100 ms \(windows.prefix(8).map { ($0 * 1000).rounded() / 1000 })")
        #expect(windows[0] > 0.01)          // kick
        #expect(windows[5] > 0.005)         // hat
        #expect(windows[4] < windows[5] / 10)
    }

    /// A short piece on melodic presets and the drum channel, rendered by
    /// Carillon and by the `fluidsynth` command line with the same font.
    @Test func render_matchesFluidSynthCommandLine() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var events: [TrackEvent] = []
        for (channel, program) in [(0, 0), (1, 1), (2, 2), (3, 48)] {
            events.append(TrackEvent(tick: 0, event: .midi(.programChange(UInt7(program), channel: UInt4(channel)))))
        }
        for beat in 0..<16 {
            let tick = UInt64(beat * 240)
            let channel = UInt4(beat % 4), note = UInt7([60, 64, 67, 72][beat % 4] - (beat % 4 == 3 ? 24 : 0))
            events.append(TrackEvent(tick: tick, event: .midi(.noteOn(note, velocity: 100, channel: channel))))
            events.append(TrackEvent(tick: tick + 200, event: .midi(.noteOff(note, channel: channel))))
            let drum: UInt7 = beat % 4 == 0 ? 36 : (beat % 4 == 2 ? 38 : 42)
            events.append(TrackEvent(tick: tick, event: .midi(.noteOn(drum, velocity: 110, channel: 9))))
            events.append(TrackEvent(tick: tick + 60, event: .midi(.noteOff(drum, channel: 9))))
        }
        events.sort { $0.tick < $1.tick }
        let input = "\(dir)/piece.mid", ours = "\(dir)/ours.wav", theirs = "\(dir)/theirs.wav"
        Self.write([Track(events: events)], to: input)

        let job = try RenderJob(soundFont: carillonTestFont)   // gain 0.2, reverb and chorus on: fluidsynth's defaults
        let summary = try job.render(input: input, to: .file(ours, format: .wav, encoding: .float32))
        let status = try run("/usr/bin/fluidsynth", ["-ni", "-g", "0.2", "-r", "44100", "-o", "audio.file.format=float",
                                                     "-F", theirs, carillonTestFont, input])
        #expect(status == 0)
        let a = try AudioFileReader(path: ours), b = try AudioFileReader(path: theirs)
        // As FluidSynthComparisonTests: 10 ms RMS envelopes, the best of lags 0...192 frames.
        let pieceWindows = Int(summary.pieceDuration * 100) - 1
        let ea = Array(envelope(a, window: 441).prefix(pieceWindows))
        var best = -1.0
        for lag in stride(from: 0, through: 192, by: 32) {
            best = max(best, correlation(ea, Array(envelope(b, window: 441, skip: lag).prefix(pieceWindows))))
        }
        let peakA = a.samples.map(abs).max() ?? 0, peakB = b.samples.map(abs).max() ?? 0
        print("project font: piece \(summary.pieceDuration) s, envelope correlation with fluidsynth \(best), peak \(peakA) vs \(peakB)")
        #expect(best > 0.95)
        #expect(abs(peakA - peakB) / peakB < 0.2)
    }
}

/// Where the project's font stands in the search order (SoundFontLocator).
@Suite struct ProjectSoundFontLocatorTests {
    static func folder(with names: [String]) -> String {
        let dir = scratchDirectory()
        for name in names { FileManager.default.createFile(atPath: "\(dir)/\(name)", contents: Data()) }
        return dir
    }

    @Test func projectFont_comesAfterTheSystemFonts() throws {
        let dir = Self.folder(with: ["carillon-test.sf2"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let locator = SoundFontLocator(explicitPath: nil, environment: nil, repositoryFolder: dir, systemPaths: ["/nope.sf2", timGM])
        #expect(try locator.locate() == timGM)
    }

    @Test func projectFont_isTheLastResort() throws {
        let dir = Self.folder(with: ["carillon-test.sf2"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let locator = SoundFontLocator(explicitPath: nil, environment: nil, repositoryFolder: dir, systemPaths: ["/nope.sf2"])
        #expect(try locator.locate() == "\(dir)/carillon-test.sf2")
    }

    @Test func userFontInRepositoryFolder_stillBeatsTheSystemFonts() throws {
        let dir = Self.folder(with: ["carillon-test.sf2", "mine.sf2"])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let locator = SoundFontLocator(explicitPath: nil, environment: nil, repositoryFolder: dir, systemPaths: [timGM])
        #expect(try locator.locate() == "\(dir)/mine.sf2")
    }

    @Test func repositoryFolder_ofThisCheckout_holdsTheProjectFont() {
        #expect(FileManager.default.fileExists(atPath: carillonTestFont))
    }
}
