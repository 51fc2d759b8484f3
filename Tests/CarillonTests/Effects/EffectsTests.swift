import Testing
import Controls
import Foundation
import Sampling
import CAllocationCounter
import Engine
import FluidSynth

/// Effect settings moved in the parameter store reach FluidSynth on the
/// render thread and change what it renders.
@Suite(.serialized) struct EffectsTests {
    static let rate = 44_100.0

    /// Renders a short snare hit (GM drums, channel 10) for `seconds` and
    /// returns the interleaved output, after `configure` has set the store.
    func renderHit(seconds: Double, chorusSend: UInt8 = 0, configure: (ParameterStore) -> Void) throws -> [Float] {
        let synth = try Synth(settings: Settings.forRendering(sampleRate: Self.rate))
        let font = try synth.loadSoundFont(at: timGM)
        defer { withExtendedLifetime(font) {} }
        let renderer = Renderer(instrument: FluidSynthInstrument(synth: synth))
        renderer.prepare(sampleRate: Self.rate, maxFrames: 512)
        configure(renderer.parameters)
        renderer.schedule(Score(events: [
            .init(seconds: 0, message: .controlChange(93, value: chorusSend, channel: 9)),
            .init(seconds: 0.01, message: .noteOn(38, velocity: 120, channel: 9)),
            .init(seconds: 0.1, message: .noteOff(38, channel: 9)),
        ], duration: seconds))
        let frames = Int(seconds * Self.rate)
        var out = [Float](repeating: 0, count: 2 * frames)
        out.withUnsafeMutableBufferPointer { all in
            var done = 0
            while done < frames {
                let n = min(512, frames - done)
                renderer.render(frames: n, into: UnsafeMutableBufferPointer(rebasing: all[(2 * done)..<(2 * (done + n))]))
                done += n
            }
        }
        return out
    }

    /// RMS from `from` to `to` seconds.
    func rms(_ x: [Float], from: Double, to: Double) -> Double {
        let a = 2 * Int(from * Self.rate), b = min(x.count, 2 * Int(to * Self.rate))
        var sum = 0.0
        for i in a..<b { sum += Double(x[i]) * Double(x[i]) }
        return (sum / Double(b - a)).squareRoot()
    }

    @Test func roomSizeAndSwitch_fromTheStore_changeTheReverbTail() throws {
        let standard = try renderHit(seconds: 2.5) { _ in }
        let bigRoom = try renderHit(seconds: 2.5) { $0.set(.reverb(.roomSize), 1.0) }
        let damped = try renderHit(seconds: 2.5) { $0.set(.reverb(.roomSize), 1.0); $0.set(.reverb(.damping), 1.0) }
        let off = try renderHit(seconds: 2.5) { $0.set(.reverb(.enabled), 0) }
        // The tail: from 0.6 s (the snare sample itself is over) to 2.5 s.
        let tail = [standard, bigRoom, damped, off].map { rms($0, from: 0.6, to: 2.5) }
        let db = tail.map { $0 > 0 ? 20 * log10($0) : -200 }
        print("reverb tail RMS 0.6–2.5 s (dBFS): room 0.2 \(db[0]), room 1.0 \(db[1]), room 1.0 damped \(db[2]), reverb off \(db[3])")
        #expect(db[1] > db[0] + 10)   // a large room rings far longer
        #expect(db[2] < db[1] - 1)    // damping takes the highs out of it
        #expect(db[3] < db[0] - 20)   // no reverb: no tail
        // The hit itself is unchanged by the room size.
        #expect(abs(rms(standard, from: 0, to: 0.1) / rms(bigRoom, from: 0, to: 0.1) - 1) < 0.1)
    }

    @Test func chorusSettings_fromTheStore_changeTheSound() throws {
        func sustained(_ configure: (ParameterStore) -> Void) throws -> [Float] {
            try renderHit(seconds: 0.6, chorusSend: 127) { p in configure(p); p.set(.reverb(.enabled), 0) }
        }
        let standard = try sustained { _ in }
        let off = try sustained { $0.set(.chorus(.enabled), 0) }
        let deep = try sustained { $0.set(.chorus(.depth), 40); $0.set(.chorus(.voices), 9); $0.set(.chorus(.speed), 4) }
        var dOff = 0.0, dDeep = 0.0
        for i in 0..<standard.count {
            dOff += Double(standard[i] - off[i]) * Double(standard[i] - off[i])
            dDeep += Double(standard[i] - deep[i]) * Double(standard[i] - deep[i])
        }
        print("chorus: difference from the default render, off \(dOff), deeper/faster/more voices \(dDeep)")
        #expect(dOff > 0 && dDeep > 0)
    }

    @Test func setEffect_onFluidSynth_allocatesNothing() throws {
        let synth = try Synth(settings: Settings.forRendering(sampleRate: Self.rate))
        let instrument = FluidSynthInstrument(synth: synth)
        instrument.prepare(sampleRate: Self.rate, maxFrames: 64)
        instrument.setEffect(.reverbRoomSize, to: 0.5)   // first call: one-time set-up, if any
        var calls: Int64 = 0
        for i in 0..<200 {
            let v = Float(i % 10) / 10
            carillon_allocations_arm()
            instrument.setEffect(.reverbRoomSize, to: v)
            instrument.setEffect(.reverbDamping, to: v)
            instrument.setEffect(.reverbWidth, to: v * 10)
            instrument.setEffect(.reverbEnabled, to: Float(i % 2))
            instrument.setEffect(.chorusVoices, to: Float(i % 10))
            instrument.setEffect(.chorusDepth, to: v * 20)
            instrument.setEffect(.chorusSpeed, to: 0.2 + v)
            instrument.setEffect(.chorusEnabled, to: Float(i % 2))
            calls += carillon_allocations_disarm()
            _ = synth.process(frames: 64, fx: nil, fxCount: 0, out: nil, outCount: 0)   // FluidSynth drains its queue
        }
        print("setEffect on FluidSynth: \(calls) heap calls in 1600 calls; refused \(instrument.refusedCount)")
        #expect(calls == 0)
        #expect(instrument.refusedCount == 0)
    }
}
