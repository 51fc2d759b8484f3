import ALSA
import MIDI
import Testing

@Suite struct HeldNotesTests {
    typealias Held = HeldNotes<String>

    @Test func release_endsHeldNotesInOrder() {
        var held = Held()
        held.track(.noteOn(67, velocity: 90, channel: 0), from: "kbd")
        held.track(.noteOn(60, velocity: 90, channel: 0), from: "kbd")
        held.track(.noteOn(40, velocity: 90, channel: 9), from: "kbd")
        #expect(held.noteCount(of: "kbd") == 3)
        #expect(held.release("kbd") == [
            .noteOff(60, channel: 0), .noteOff(67, channel: 0), .noteOff(40, channel: 9),
        ])
        #expect(held.isEmpty)
        #expect(held.release("kbd").isEmpty)
    }

    @Test func noteOff_andVelocityZeroNoteOn_releaseTheKey() {
        var held = Held()
        held.track(.noteOn(60, velocity: 90, channel: 0), from: "kbd")
        held.track(.noteOn(62, velocity: 90, channel: 0), from: "kbd")
        held.track(.noteOff(60, channel: 0), from: "kbd")
        held.track(.noteOn(62, velocity: 0, channel: 0), from: "kbd")
        #expect(held.isEmpty)
    }

    @Test func sameKeyOnAnotherChannel_isADifferentNote() {
        var held = Held()
        held.track(.noteOn(60, velocity: 90, channel: 0), from: "kbd")
        held.track(.noteOff(60, channel: 1), from: "kbd")
        #expect(held.release("kbd") == [.noteOff(60, channel: 0)])
    }

    @Test func sustainDown_isLiftedOnRelease() {
        var held = Held()
        held.track(.cc(64, value: 127, channel: 0), from: "kbd")
        held.track(.cc(64, value: 100, channel: 3), from: "kbd")
        held.track(.noteOn(60, velocity: 90, channel: 0), from: "kbd")
        held.track(.noteOff(60, channel: 0), from: "kbd")  // still sounding: the pedal holds it
        #expect(held.release("kbd") == [.cc(64, value: 0, channel: 0), .cc(64, value: 0, channel: 3)])
    }

    /// A source gone with sostenuto down would leave the notes it caught ringing.
    @Test func sostenutoDown_isLiftedOnRelease_afterSustain() {
        var held = Held()
        held.track(.cc(66, value: 127, channel: 1), from: "kbd")
        held.track(.cc(64, value: 127, channel: 1), from: "kbd")
        held.track(.cc(66, value: 127, channel: 4), from: "kbd")
        held.track(.cc(66, value: 0, channel: 4), from: "kbd")
        #expect(held.release("kbd") == [.cc(64, value: 0, channel: 1), .cc(66, value: 0, channel: 1)])
        #expect(held.isEmpty)
        held.track(.cc(66, value: 127, channel: 2), from: "kbd")
        held.track(.cc(121, value: 0, channel: 2), from: "kbd")  // reset all controllers lifts it too
        #expect(held.isEmpty)
    }

    @Test func sustainLifted_isForgotten() {
        var held = Held()
        held.track(.cc(64, value: 127, channel: 0), from: "kbd")
        held.track(.cc(64, value: 0, channel: 0), from: "kbd")
        #expect(held.isEmpty)
        held.track(.cc(64, value: 127, channel: 2), from: "kbd")
        held.track(.cc(121, value: 0, channel: 2), from: "kbd")  // reset all controllers
        #expect(held.isEmpty)
    }

    @Test func allNotesOff_clearsOnlyItsChannel() {
        var held = Held()
        held.track(.noteOn(60, velocity: 90, channel: 0), from: "kbd")
        held.track(.noteOn(61, velocity: 90, channel: 1), from: "kbd")
        held.track(.cc(123, value: 0, channel: 0), from: "kbd")
        #expect(held.release("kbd") == [.noteOff(61, channel: 1)])
    }

    @Test func systemReset_clearsTheSource() {
        var held = Held()
        held.track(.noteOn(60, velocity: 90, channel: 0), from: "kbd")
        held.track(.cc(64, value: 127, channel: 0), from: "kbd")
        held.track(.systemReset, from: "kbd")
        #expect(held.isEmpty)
    }

    @Test func sources_areTrackedSeparately() {
        var held = Held()
        held.track(.noteOn(60, velocity: 90, channel: 0), from: "a")
        held.track(.noteOn(60, velocity: 90, channel: 0), from: "b")
        held.track(.noteOff(60, channel: 0), from: "a")
        #expect(held.release("a").isEmpty)
        #expect(held.release("b") == [.noteOff(60, channel: 0)])
    }

    @Test func releaseWhere_releasesEveryMatchingSource() {
        var held = HeldNotes<SeqAddress>()
        let a = SeqAddress(client: 130, port: 0), b = SeqAddress(client: 130, port: 1), c = SeqAddress(client: 24, port: 0)
        for s in [a, b, c] { held.track(.noteOn(60, velocity: 1, channel: 0), from: s) }
        let released = held.release { $0.client == 130 }
        #expect(Set(released.map(\.source)) == [a, b])
        #expect(held.sources == [c])
    }

    @Test func otherMessages_holdNothing() {
        var held = Held()
        for m: MIDIMessage in [.cc(7, value: 100, channel: 0), .pitchBend(0, channel: 0), .programChange(1, channel: 0),
            .sysEx([1]), .timingClock]
        {
            held.track(m, from: "kbd")
        }
        #expect(held.isEmpty)
    }
}
