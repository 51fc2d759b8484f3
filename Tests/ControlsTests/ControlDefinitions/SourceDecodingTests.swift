import ControlDefinitions
import Controls
import MIDI
import Testing

@Suite struct RelativeEncodingTests {
    @Test func twosComplement_decodes() {
        let e = RelativeEncoding.twosComplement
        #expect(e.delta(1) == 1)
        #expect(e.delta(63) == 63)
        #expect(e.delta(127) == -1)
        #expect(e.delta(64) == -64)
        #expect(e.delta(0) == 0)
    }

    @Test func signMagnitude_decodes() {
        let e = RelativeEncoding.signMagnitude
        #expect(e.delta(1) == 1)
        #expect(e.delta(65) == -1)
        #expect(e.delta(127) == -63)
        #expect(e.delta(64) == 0)
    }

    @Test func offset64_decodes() {
        let e = RelativeEncoding.offset64
        #expect(e.delta(64) == 0)
        #expect(e.delta(65) == 1)
        #expect(e.delta(67) == 3)
        #expect(e.delta(63) == -1)
        #expect(e.delta(61) == -3)
        #expect(e.delta(0) == 0)  // Arturia's neutral message
    }
}

@Suite struct CC14AssemblerTests {
    @Test func msbFirst_resetsLSBThenRefines() {
        var a = CC14Assembler()
        #expect(a.receive(channel: 0, controller: 7, value: 64, order: .msbFirst) == UInt14(64 * 128))
        #expect(a.receive(channel: 0, controller: 39, value: 5, order: .msbFirst) == UInt14(64 * 128 + 5))
        // A new MSB resets the LSB: no glitch to 65·128 + 5.
        #expect(a.receive(channel: 0, controller: 7, value: 65, order: .msbFirst) == UInt14(65 * 128))
    }

    @Test func lsbFirst_waitsForTheMSB() {
        var a = CC14Assembler()
        #expect(a.receive(channel: 0, controller: 33, value: 100, order: .lsbFirst) == nil)
        #expect(a.receive(channel: 0, controller: 1, value: 2, order: .lsbFirst) == UInt14(2 * 128 + 100))
        #expect(a.receive(channel: 0, controller: 33, value: 0, order: .lsbFirst) == nil)
        #expect(a.receive(channel: 0, controller: 1, value: 3, order: .lsbFirst) == UInt14(3 * 128))
    }

    @Test func auto_learnsTheOrderPerChannel() {
        var a = CC14Assembler()
        // Channel 1 sends LSB first, channel 2 MSB first.
        #expect(a.receive(channel: 0, controller: 32, value: 1, order: .auto) == nil)
        #expect(a.receive(channel: 1, controller: 0, value: 9, order: .auto) == UInt14(9 * 128))
        #expect(a.receive(channel: 0, controller: 0, value: 10, order: .auto) == UInt14(10 * 128 + 1))
        #expect(a.receive(channel: 1, controller: 32, value: 7, order: .auto) == UInt14(9 * 128 + 7))
    }

    @Test func receive_ignoresControllersAbove63() {
        var a = CC14Assembler()
        #expect(a.receive(channel: 0, controller: 64, value: 1, order: .msbFirst) == nil)
    }
}

@Suite struct ParameterNumberAssemblerTests {
    typealias Event = ParameterNumberAssembler.Event

    @Test func nrpn_fullSequenceGivesMSBThenBoth() {
        var a = ParameterNumberAssembler()
        #expect(a.receive(channel: 0, controller: 99, value: 1) == nil)
        #expect(a.receive(channel: 0, controller: 98, value: 2) == nil)
        let p = UInt14(msb: 1, lsb: 2)
        #expect(a.receive(channel: 0, controller: 6, value: 10) == Event(channel: 0, kind: .nrpn, parameter: p, action: .set(msb: 10, lsb: nil)))
        #expect(a.receive(channel: 0, controller: 38, value: 3) == Event(channel: 0, kind: .nrpn, parameter: p, action: .set(msb: 10, lsb: 3)))
    }

    @Test func rpn_runningDataEntryAndIncrement() {
        var a = ParameterNumberAssembler()
        _ = a.receive(channel: 3, controller: 101, value: 0)
        _ = a.receive(channel: 3, controller: 100, value: 0)
        let p = UInt14(0)
        #expect(a.receive(channel: 3, controller: 6, value: 2)?.action == .set(msb: 2, lsb: nil))
        #expect(a.receive(channel: 3, controller: 6, value: 12)?.action == .set(msb: 12, lsb: nil))
        #expect(a.receive(channel: 3, controller: 96, value: 0) == Event(channel: 3, kind: .rpn, parameter: p, action: .increment))
        #expect(a.receive(channel: 3, controller: 97, value: 0)?.action == .decrement)
    }

    @Test func null_deselects() {
        var a = ParameterNumberAssembler()
        _ = a.receive(channel: 0, controller: 101, value: 0)
        _ = a.receive(channel: 0, controller: 100, value: 0)
        _ = a.receive(channel: 0, controller: 101, value: 127)
        _ = a.receive(channel: 0, controller: 100, value: 127)
        #expect(a.receive(channel: 0, controller: 6, value: 5) == nil)
    }

    @Test func dataEntry_withoutSelectionIsIgnored() {
        var a = ParameterNumberAssembler()
        #expect(a.receive(channel: 0, controller: 6, value: 5) == nil)
        #expect(a.receive(channel: 0, controller: 96, value: 0) == nil)
    }

    @Test func channels_keepSeparateState() {
        var a = ParameterNumberAssembler()
        _ = a.receive(channel: 0, controller: 99, value: 0)
        _ = a.receive(channel: 1, controller: 101, value: 0)
        _ = a.receive(channel: 0, controller: 98, value: 5)
        _ = a.receive(channel: 1, controller: 100, value: 1)
        #expect(a.receive(channel: 1, controller: 6, value: 7) == Event(channel: 1, kind: .rpn, parameter: 1, action: .set(msb: 7, lsb: nil)))
        #expect(a.receive(channel: 0, controller: 6, value: 9) == Event(channel: 0, kind: .nrpn, parameter: 5, action: .set(msb: 9, lsb: nil)))
    }
}
