import Testing
import Sampling
import Engine
import FluidSynth

/// FluidSynth applies events between its 64-frame blocks; `prepare` aligns
/// that grid with the renderer's clock, also for a second piece on the same
/// synth after a length that is not a multiple of 64.
@Suite struct EventGridTests {
    @Test func notesOnTheGrid_startWithinTheirAttack_alsoAfterAnOddLength() throws {
        let synth = try Synth(settings: Settings.forRendering(sampleRate: 44_100, gain: 1))
        try synth.setReverb(on: false)
        try synth.setChorus(on: false)
        let font = try synth.loadSoundFont(at: timGM)
        defer { withExtendedLifetime(font) {} }
        let renderer = Renderer(instrument: FluidSynthInstrument(synth: synth))
        let frames = 44_100
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * frames)
        defer { output.deallocate() }
        let noteFrames = [64 * 100, 64 * 300, 64 * 500]   // exactly on the grid

        for (run, before) in [0, 1_000].enumerated() {   // 1000 = 15 × 64 + 40
            renderer.prepare(sampleRate: 44_100, maxFrames: frames)
            if before > 0 {
                renderer.render(frames: before, into: output)
                renderer.prepare(sampleRate: 44_100, maxFrames: frames)
            }
            var events: [Score.Event] = [.init(seconds: 0, message: .programChange(0, channel: 9))]
            for f in noteFrames {
                events.append(.init(seconds: Double(f) / 44_100, message: .noteOn(75, velocity: 120, channel: 9)))
                events.append(.init(seconds: Double(f + 2_000) / 44_100, message: .noteOff(75, channel: 9)))
            }
            renderer.schedule(Score(events: events))
            renderer.render(frames: frames, into: output)
            var errors: [Int] = []
            for f in noteFrames {
                var i = f - 64
                while i < frames, abs(output[2 * i]) < 0.005 { i += 1 }
                errors.append(i - f)
            }
            print("grid run \(run) (after \(before) frames): onset errors \(errors)")
            #expect(errors.allSatisfy { (0...16).contains($0) }, "run \(run): \(errors)")
        }
    }
}
