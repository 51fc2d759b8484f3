import Parameters
import Testing
import Foundation
@testable import Hosting
import Controls
import Engine

/// `synth.reverb.*`, `synth.chorus.*` and `tone.*` changes from controls land
/// in the parameter store slots the render thread reads.
@Suite struct EffectRoutingTests {
    func route(_ text: String, _ value: Float, _ store: ParameterStore) {
        ParameterRouting(parameters: store, events: nil, transport: nil).apply(ParameterChange(ParameterAddress(text)!, value))
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
        #expect(store.value(.reverb(.roomSize)) == 0.8)
        #expect(store.value(.reverb(.damping)) == 0.3)
        #expect(store.value(.reverb(.width)) == 20)
        #expect(store.value(.reverb(.enabled)) == 0)
        #expect(store.value(.chorus(.voices)) == 5)
        #expect(store.value(.chorus(.depth)) == 12)
        #expect(store.value(.chorus(.speed)) == 1.5)
        #expect(store.value(.chorus(.enabled)) == 1)
        #expect(store.value(.tone(.frequency)) == 1_000)
        #expect(abs(store.value(.strip(.tone, .gain)) - 0.501_187) < 1e-5)
        #expect(store.value(.tone(.waveform)) == 2)
        #expect(store.value(.tone(.enabled)) == 1)
        route("tone.level", -60, store)
        #expect(store.value(.strip(.tone, .gain)) == 0)
    }

    @Test func channelAddresses_becomeChannelMessagesInTheQueue() {
        let queue = EventQueue()
        let routing = ParameterRouting(parameters: ParameterStore(), events: EventQueueProducer(queue), transport: nil)
        routing.apply(ParameterChange(.channelCC(2, 74), 90.4))
        routing.apply(ParameterChange(.channelProgram(9), 300))
        routing.apply(ParameterChange(.channelPitchBend(0), 16383))
        var got: [ChannelMessage] = []
        while let e = queue.peek() { got.append(e.message); queue.pop() }
        #expect(got == [.controlChange(74, value: 90, channel: 2), .programChange(127, channel: 9),
                        ChannelMessage(status: 0xE0, data1: 0x7F, data2: 0x7F)])
    }

    @Test func transportAddresses_driveTheTransport() {
        let transport = Transport()
        let routing = ParameterRouting(parameters: ParameterStore(), events: nil, transport: transport, pieceTempo: 100)
        routing.apply(ParameterChange(.transport(.tempo), 150))
        #expect(transport.tempoScale == 1.5)
        routing.apply(ParameterChange(.transport(.stop), 1))
        #expect(!transport.isPlaying)
        routing.apply(ParameterChange(.transport(.loop), 1))
        #expect(transport.isLooping)
    }

    /// Every parameter of the table reaches the engine: a store slot, the queue or the transport.
    @Test func everyTableRow_isApplied() {
        let store = ParameterStore(), queue = EventQueue(capacity: 4096), transport = Transport()
        let routing = ParameterRouting(parameters: store, events: EventQueueProducer(queue), transport: transport)
        for address in ParameterAddress.all {
            let spec = address.spec
            let value = spec.range.upperBound
            let before = store.read(address.index).counter, queued = queue.count
            routing.apply(ParameterChange(address, Float(value)))
            switch spec.application {
            case .store, .instrumentEffect:
                #expect(store.read(address.index).counter == before &+ 1, "\(address)")
                #expect(store.value(address) == spec.storeValue(value), "\(address)")
            case .channelMessage(.notePitch):
                #expect(queue.count == queued, "\(address)")  // a pitch alone: its gate is closed
            case .channelMessage:
                #expect(queue.count == queued + 1, "\(address)")  // a gate opening: the note-on
                queue.pop()
            case .transport:
                break  // covered above
            case .scene, .keyboard:
                #expect(queue.count == queued, "\(address)")  // the hub's and the input side's: nothing reaches the engine
            }
        }
    }
}
