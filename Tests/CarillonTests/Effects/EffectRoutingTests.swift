import Testing
import Foundation
@testable import Carillon
import Controls
import Engine

/// `synth.reverb.*`, `synth.chorus.*` and `tone.*` changes from controls land
/// in the parameter store slots the render thread reads.
@Suite struct EffectRoutingTests {
    func route(_ text: String, _ value: Float, _ store: ParameterStore) {
        ParameterRouting.apply(ParameterChange(ParameterAddress(text)!, value), parameters: store, events: EventQueue())
    }

    @Test func effectAndToneAddresses_setTheirSlots() {
        let store = ParameterStore()
        route("synth.reverb.room-size", 0.8, store)
        route("synth.reverb.damping", 0.3, store)
        route("synth.reverb.width", 20, store)
        route("synth.reverb.enabled", 0.2, store)
        route("synth.chorus.voices", 4.6, store)
        route("synth.chorus.depth", 12, store)
        route("synth.chorus.speed", 1.5, store)
        route("synth.chorus.enabled", 1, store)
        route("tone.frequency", 1_000, store)
        route("tone.level", -6, store)
        route("tone.waveform", 2.2, store)
        route("tone.enabled", 0.9, store)
        #expect(store.value(.effect(.reverbRoomSize)) == 0.8)
        #expect(store.value(.effect(.reverbDamping)) == 0.3)
        #expect(store.value(.effect(.reverbWidth)) == 20)
        #expect(store.value(.effect(.reverbEnabled)) == 0)
        #expect(store.value(.effect(.chorusVoices)) == 5)
        #expect(store.value(.effect(.chorusDepth)) == 12)
        #expect(store.value(.effect(.chorusSpeed)) == 1.5)
        #expect(store.value(.effect(.chorusEnabled)) == 1)
        #expect(store.value(.tone(.frequency)) == 1_000)
        #expect(abs(store.value(.tone(.level)) - 0.501_187) < 1e-5)
        #expect(store.value(.tone(.waveform)) == 2)
        #expect(store.value(.tone(.enabled)) == 1)
        route("tone.level", -60, store)
        #expect(store.value(.tone(.level)) == 0)
    }

    @Test func storeDefaults_matchTheRegistry() {
        let registry = ParameterRegistry.standard
        let pairs: [(String, ParameterStore.Parameter)] = [
            ("synth.reverb.room-size", .effect(.reverbRoomSize)), ("synth.reverb.damping", .effect(.reverbDamping)),
            ("synth.reverb.width", .effect(.reverbWidth)), ("synth.reverb.enabled", .effect(.reverbEnabled)),
            ("synth.chorus.voices", .effect(.chorusVoices)), ("synth.chorus.depth", .effect(.chorusDepth)),
            ("synth.chorus.speed", .effect(.chorusSpeed)), ("synth.chorus.enabled", .effect(.chorusEnabled)),
            ("tone.frequency", .tone(.frequency)), ("tone.waveform", .tone(.waveform)), ("tone.enabled", .tone(.enabled)),
        ]
        for (text, parameter) in pairs {
            #expect(Float(registry.info(for: ParameterAddress(text)!).defaultValue) == parameter.defaultValue, "\(text)")
        }
        let dB = registry.info(for: ParameterAddress("tone.level")!).defaultValue
        #expect(abs(Double(ParameterStore.Parameter.tone(.level).defaultValue) - pow(10, dB / 20)) < 1e-6)
    }
}
