import MIDI
import Testing

@Suite struct ProgramMapTests {
    @Test func programMap_mapsWhatItNames_andLeavesTheRest() {
        var map = ProgramMap()
        #expect(map.isIdentity)
        for p in 0...7 { map[UInt7(p)] = 5 }
        #expect(!map.isIdentity)
        #expect((0...7).allSatisfy { map[UInt7($0)] == 5 } && map[8] == 8 && map[127] == 127)
    }
}
