import Testing
@testable import MIDI

@Suite struct BoundedIntegersTests {
    @Test func exactly_rejectsOutOfRange() {
        #expect(UInt7(exactly: 128) == nil)
        #expect(UInt4(exactly: 16) == nil)
        #expect(UInt14(exactly: 16384) == nil)
        #expect(UInt7(exactly: -1) == nil)
        #expect(UInt7(exactly: 127) == .max)
    }

    @Test func truncating_masks() {
        #expect(UInt7(truncatingIfNeeded: 0xFF) == 127)
        #expect(UInt4(truncatingIfNeeded: 0x93) == 3)
    }

    @Test func uint14_msbLsb() {
        #expect(UInt14(msb: 127, lsb: 127) == .max)
        #expect(UInt14(msb: 64, lsb: 0) == .midpoint)
        #expect(UInt14(12345).msb == 96 && UInt14(12345).lsb == 57)
    }
}
