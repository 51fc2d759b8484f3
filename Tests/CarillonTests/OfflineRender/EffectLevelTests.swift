import OfflineRender
import Foundation
import MIDI
import SoundFile
import Testing

/// `--reverb-level` / `--chorus-level` are the start values of the
/// `synth.reverb.level` / `synth.chorus.level` parameters (the mixer's effect
/// returns), the same in render, play and live; FluidSynth renders its effects
/// at its default level. Checked against the `fluidsynth` command line's own
/// `synth.reverb.level` setting.
@Suite(.serialized) struct EffectLevelTests {
    /// Four bars of chords on a piano, 120 bpm: something for the reverb to carry.
    static func file() -> [UInt8] {
        var events: [TrackEvent] = []
        for bar in 0..<4 {
            let tick = UInt64(bar * 960)
            for note: UInt8 in [48, 55, 64, 67] {
                events.append(TrackEvent(tick: tick, event: .midi(.noteOn(UInt7(note), velocity: 100, channel: 0))))
                events.append(TrackEvent(tick: tick + 240, event: .midi(.noteOff(UInt7(note), channel: 0))))
            }
        }
        events.sort { $0.tick < $1.tick }
        return StandardMIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(480),
                                tracks: [Track(events: events)]).serialized()
    }

    func rms(_ x: [Float]) -> Double { (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(1, x.count))).squareRoot() }

    /// The samples of a render with the reverb at `level` (nil: the default 0.9), chorus off.
    func ours(_ level: Double?, dir: String) throws -> [Float] {
        var options = RenderJob.Options()
        options.host.sampler.chorus = false
        options.host.sampler.reverbLevel = level
        let job = try RenderJob(soundFont: timGM, options: options)
        let out = "\(dir)/ours-\(level ?? 0.9).wav"
        _ = try job.render(input: "\(dir)/in.mid", to: .file(out, format: .wav, encoding: .float32))
        return try AudioFileReader(path: out).samples
    }

    func theirs(_ level: Double, dir: String) throws -> [Float] {
        let out = "\(dir)/theirs-\(level).wav"
        let status = try run("/usr/bin/fluidsynth", ["-ni", "-g", "0.2", "-r", "44100", "-C", "0", "-o", "audio.file.format=float",
                                                     "-o", "synth.reverb.level=\(level)", "-F", out, timGM, "\(dir)/in.mid"])
        #expect(status == 0)
        return try AudioFileReader(path: out).samples
    }

    @Test func reverbLevel_scalesTheReverbAsFluidSynthsOwnSettingDoes() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(atPath: "\(dir)/in.mid", contents: Data(Self.file()))
        // Same renderer, same timing: the difference of two renders is the reverb's change alone.
        let (a, b) = (try ours(0.3, dir: dir), try ours(nil, dir: dir))
        let (c, d) = (try theirs(0.3, dir: dir), try theirs(0.9, dir: dir))
        // Over the same span (Carillon also renders the tail after the last event).
        let n = min(a.count, b.count, c.count, d.count)
        let oursChange = rms((0..<n).map { a[$0] - b[$0] }), theirsChange = rms((0..<n).map { c[$0] - d[$0] })
        let ratio = 20 * log10(oursChange / theirsChange)
        print("reverb level 0.3 vs 0.9: change \(oursChange) (carillon) vs \(theirsChange) (fluidsynth), \(ratio) dB")
        #expect(oursChange > 0.02 * rms(b))      // the flag does something audible
        #expect(abs(ratio) < 0.5)                // and as much as FluidSynth's own setting
    }
}
