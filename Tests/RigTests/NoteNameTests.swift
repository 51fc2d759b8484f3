import MIDI
import Rig
import Testing

@Suite struct NoteNameTests {
    @Test func parse_namesWithMiddleCAtC4() {
        #expect(NoteName.parse("C4") == 60)
        #expect(NoteName.parse("C-1") == 0)
        #expect(NoteName.parse("C3") == 48)
        #expect(NoteName.parse("G9") == 127)
        #expect(NoteName.parse("B2") == 47)
    }

    @Test func parse_sharpsFlatsAnyCase() {
        #expect(NoteName.parse("C#4") == 61)
        #expect(NoteName.parse("Db4") == 61)
        #expect(NoteName.parse("db4") == 61)
        #expect(NoteName.parse("c#4") == 61)
        #expect(NoteName.parse("bb3") == 58)
    }

    @Test func parse_numbersAndRejects() {
        #expect(NoteName.parse("0") == 0)
        #expect(NoteName.parse("127") == 127)
        #expect(NoteName.parse("128") == nil)
        #expect(NoteName.parse("G#9") == nil)
        #expect(NoteName.parse("H4") == nil)
        #expect(NoteName.parse("C10") == nil)
        #expect(NoteName.parse("") == nil)
    }

    @Test func parseRange_splitsAndChecksOrder() {
        #expect(NoteName.parseRange("C-1..B2") == .success(0...47))
        #expect(NoteName.parseRange("C3..G9") == .success(48...127))
        #expect(NoteName.parseRange("60") == .success(60...60))
        #expect(NoteName.parseRange("C4..C3") == .failure(.backwards(60, 48)))
        #expect(NoteName.parseRange("C4..X3") == .failure(.unknownNote("X3")))
    }

    @Test func name_roundTrips() {
        for n in 0...127 { #expect(NoteName.parse(NoteName.name(of: UInt7(n))) == UInt7(n)) }
    }
}
