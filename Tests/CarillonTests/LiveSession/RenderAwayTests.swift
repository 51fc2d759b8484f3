import Engine
import Hosting
@testable import LiveSession
import Sampling
import Testing

/// What the audio supervisor renders away after a fault (issue 40: a note held
/// before a JACK restart sounded after it), through the real sampler: strings
/// held with the pedal down and a note queued ahead of the last block, as the
/// fault leaves them; after `RenderAway.everything` the first block is silent
/// (the reverb's tail too), nothing queued sounds later, and the pedal is up.
@Suite struct RenderAwayTests {
    static let rate = 48_000, block = 256

    /// A sampler with strings (program 48, sustained while held) on channels 1 and 3, and a renderer.
    static func rig() throws -> (Sampler, Renderer) {
        let sampler = try Sampler(soundFont: timGM, sampleRate: Double(rate), options: SamplerOptions())
        let renderer = Renderer(instrument: sampler.instrument, eventCapacity: 4096)
        renderer.prepare(sampleRate: Double(rate), maxFrames: block)
        for channel in [0, 2] { _ = renderer.events.push(.now(.programChange(48, channel: channel))) }
        return (sampler, renderer)
    }

    /// The peak over `seconds` of blocks.
    static func peak(_ renderer: Renderer, seconds: Double, scratch: UnsafeMutableBufferPointer<Float>) -> Float {
        var p: Float = 0
        for _ in 0..<Int(seconds * Double(rate) / Double(block)) {
            renderer.render(frames: block, into: scratch)
            for x in scratch { p = max(p, abs(x)) }
        }
        return p
    }

    /// The fault's state: a chord held with the sustain pedal down for 1 s, and one more note stamped `ahead` frames on.
    static func holdChord(_ renderer: Renderer, ahead: UInt64, scratch: UnsafeMutableBufferPointer<Float>) -> Float {
        for channel in [0, 2] {
            _ = renderer.events.push(.now(.controlChange(64, value: 127, channel: channel)))
            for key: UInt8 in [46, 64, 74, 88] { _ = renderer.events.push(.now(.noteOn(key, velocity: 110, channel: channel))) }
        }
        let held = peak(renderer, seconds: 1, scratch: scratch)
        _ = renderer.events.push(TimedMessage(frame: renderer.sampleTime + ahead, message: .noteOn(61, velocity: 110, channel: 2)))
        return held
    }

    @Test func afterRenderAway_nothingHeldSounds_notTheReverbTail_notANoteQueuedAhead() throws {
        let (sampler, renderer) = try Self.rig()
        let scratch = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * Self.block)
        defer { scratch.deallocate() }
        // 3 s ahead: past what two blocks reach, as a stamp ahead of a block that never came.
        let held = Self.holdChord(renderer, ahead: 3 * UInt64(Self.rate), scratch: scratch)
        #expect(held > 0.01, "the chord did not sound: \(held)")
        let (frames, quiet) = RenderAway.everything(renderer, frames: Self.block, scratch: scratch, tailLimitFrames: 10 * Self.rate)
        #expect(quiet && frames < 10 * Self.rate, "the tail did not fall silent within 10 s: \(frames) frames")
        // The return: the first block on, and the next 4 s (past the note queued ahead), digitally silent.
        let first = Self.peak(renderer, seconds: Double(Self.block) / Double(Self.rate), scratch: scratch)
        #expect(first <= RenderAway.quietPeak, "the first block after the return: peak \(first)")
        let later = Self.peak(renderer, seconds: 4, scratch: scratch)
        #expect(later <= RenderAway.quietPeak, "something held or queued before sounded after: peak \(later)")
        #expect(sampler.instrument.activeVoices == 0)
    }

    @Test func afterRenderAway_thePedalIsUp_aNewNoteEndsWhenLetGo() throws {
        let (sampler, renderer) = try Self.rig()
        let scratch = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * Self.block)
        defer { scratch.deallocate() }
        _ = Self.holdChord(renderer, ahead: 0, scratch: scratch)
        RenderAway.everything(renderer, frames: Self.block, scratch: scratch, tailLimitFrames: 10 * Self.rate)
        // A strings note played and let go after the return: with the pedal still down it would sound on for ever.
        _ = renderer.events.push(TimedMessage(frame: renderer.sampleTime, message: .noteOn(60, velocity: 110, channel: 2)))
        let played = Self.peak(renderer, seconds: 0.5, scratch: scratch)
        _ = renderer.events.push(TimedMessage(frame: renderer.sampleTime, message: .noteOff(60, channel: 2)))
        _ = Self.peak(renderer, seconds: 4, scratch: scratch)        // its release and the reverb's tail
        let after = Self.peak(renderer, seconds: 0.5, scratch: scratch)
        #expect(played > 0.01)
        #expect(after < played * 1e-3, "the note let go still sounds (the pedal held before the fault?): \(after) of \(played)")
    }
}
