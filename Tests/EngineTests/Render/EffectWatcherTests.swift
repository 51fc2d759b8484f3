import Parameters
import Testing
import CAllocationCounter
import Engine

/// Records what the renderer hands it, with the frames rendered before each call.
final class RecordingInstrument: Instrument {
    let stripCount = 16
    struct EffectCall: Equatable { var parameter: SynthEffect; var value: Float; var atFrame: Int }
    private(set) var effectCalls: [EffectCall] = []
    private(set) var sysEx: [(bytes: [UInt8], atFrame: Int)] = []
    private(set) var messages: [(message: ChannelMessage, atFrame: Int)] = []
    private(set) var renderedFrames = 0
    /// Count calls without storing them (allocation tests).
    var records = true
    private(set) var sysExBytesSeen = 0

    init() { effectCalls.reserveCapacity(1024); sysEx.reserveCapacity(1024); messages.reserveCapacity(1024) }

    func prepare(sampleRate: Double, maxFrames: Int) {}
    func receive(_ message: ChannelMessage) { if records { messages.append((message, renderedFrames)) } }
    func render(frames: Int, dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) { renderedFrames += frames }
    func silence() {}
    func setEffect(_ parameter: SynthEffect, to value: Float) {
        if records { effectCalls.append(EffectCall(parameter: parameter, value: value, atFrame: renderedFrames)) }
    }
    func receiveSysEx(_ data: UnsafeBufferPointer<UInt8>) {
        sysExBytesSeen += data.count
        if records { sysEx.append((Array(data), renderedFrames)) }
    }
}

@Suite struct EffectWatcherTests {
    func make(block: Int = 256) -> (Renderer, RecordingInstrument) {
        let instrument = RecordingInstrument()
        let renderer = Renderer(instrument: instrument)
        renderer.prepare(sampleRate: 48_000, maxFrames: block)
        return (renderer, instrument)
    }

    @Test func storeDefaults_areNotApplied() {
        let (renderer, instrument) = make()
        _ = renderAll(renderer, frames: 2_048, block: 256)
        #expect(instrument.effectCalls.isEmpty)
    }

    @Test func eachChange_isAppliedOnce_atTheNextBlockStart() {
        let (renderer, instrument) = make()
        _ = renderAll(renderer, frames: 512, block: 256)
        renderer.parameters.set(SynthEffect.reverbRoomSize.address, 0.9)
        renderer.parameters.set(SynthEffect.chorusVoices.address, 7)
        _ = renderAll(renderer, frames: 1_024, block: 256)
        #expect(instrument.effectCalls == [
            .init(parameter: .reverbRoomSize, value: 0.9, atFrame: 512),
            .init(parameter: .chorusVoices, value: 7, atFrame: 512),
        ])
        // Set twice between blocks: one call with the latest value.
        renderer.parameters.set(SynthEffect.reverbDamping.address, 0.1)
        renderer.parameters.set(SynthEffect.reverbDamping.address, 0.4)
        _ = renderAll(renderer, frames: 512, block: 256)
        #expect(instrument.effectCalls.count == 3)
        #expect(instrument.effectCalls.last == .init(parameter: .reverbDamping, value: 0.4, atFrame: 1_536))
    }

    @Test func switchingOff_reachesTheInstrumentOneBlockLate_afterTheReturnFades() {
        let (renderer, instrument) = make()
        _ = renderAll(renderer, frames: 256, block: 256)
        renderer.parameters.set(SynthEffect.reverbEnabled.address, 0)
        _ = renderAll(renderer, frames: 256, block: 256)
        #expect(instrument.effectCalls.isEmpty)
        _ = renderAll(renderer, frames: 256, block: 256)
        #expect(instrument.effectCalls == [.init(parameter: .reverbEnabled, value: 0, atFrame: 512)])
        renderer.parameters.set(SynthEffect.reverbEnabled.address, 1)
        _ = renderAll(renderer, frames: 256, block: 256)
        #expect(instrument.effectCalls.last == .init(parameter: .reverbEnabled, value: 1, atFrame: 768))
    }

    @Test func reverbSwitch_fadesTheReturn() {
        let fake = FakeInstrument()
        fake.reverbLevel = 0.5
        let renderer = Renderer(instrument: fake)
        renderer.prepare(sampleRate: 48_000, maxFrames: 256)
        renderer.events.push(.now(.noteOn(60, velocity: 127, channel: 0)))
        renderer.parameters.set(.strip(.channel(0), .gain), -60)
        _ = renderAll(renderer, frames: 256, block: 256)
        renderer.parameters.set(SynthEffect.reverbEnabled.address, 0)
        let fade = renderAll(renderer, frames: 256, block: 256)
        // Ramps from 0.5 to 0 across the block, then stays silent.
        #expect(abs(fade[0] - 0.5) < 0.01 && abs(fade[2 * 255]) < 0.01)
        #expect(renderAll(renderer, frames: 256, block: 256).allSatisfy { $0 == 0 })
    }

    @Test func polling_allocatesNothing() {
        let (renderer, instrument) = make(block: 128)
        instrument.records = false
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 256)
        defer { output.deallocate() }
        renderer.render(frames: 128, into: output)
        carillon_allocations_arm()
        for block in 1..<1_000 {
            if block % 7 == 0 { renderer.parameters.set(.reverb(.roomSize), Double(block % 100) / 100) }
            if block % 11 == 0 { renderer.parameters.set(.chorus(.enabled), Double(block % 2)) }
            renderer.render(frames: 128, into: output)
        }
        let calls = carillon_allocations_disarm()
        #expect(calls == 0, "heap calls in 1000 blocks: \(calls)")
    }
}
