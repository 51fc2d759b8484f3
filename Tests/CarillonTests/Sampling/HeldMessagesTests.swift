import Engine
import Sampling
import Testing

/// The store of messages waiting behind a loading preset (`HeldMessages`):
/// arrival order kept per channel, other channels free, SysEx holding all,
/// program changes back to back made one, and the overflow policy that never
/// leaves a note sounding.
@Suite struct HeldMessagesTests {
    static let programChange = ChannelMessage(status: 0xC0, data1: 19)

    /// Releases with channel 1's program change still loading: returns what was applied, in order.
    static func release(_ held: inout HeldMessages, loading: Set<UInt8> = [], sysExReady: Bool = true) -> [ChannelMessage] {
        var applied: [ChannelMessage] = []
        held.release { message, _, sysEx in
            if sysEx != nil { guard sysExReady else { return false } }
            if message.kind == 0xC0 && loading.contains(message.data1) { return false }
            applied.append(message)
            return true
        }
        return applied
    }

    @Test func laterMessagesOfTheChannel_waitInOrder_otherChannelsDoNot() {
        var held = HeldMessages(capacity: 64, reserve: 8)
        defer { held.deallocate() }
        let chord: [ChannelMessage] = [.noteOn(48, velocity: 90, channel: 0), .noteOn(55, velocity: 90, channel: 0),
                                       ChannelMessage(status: 0xB0, data1: 64, data2: 127), .noteOff(48, channel: 0),
                                       ChannelMessage(status: 0xE0, data1: 0, data2: 80)]
        #expect(held.hold(Self.programChange) == .held)
        for m in chord { #expect(held.hold(m) == .held) }
        #expect(held.holds(channel: 0))
        #expect(!held.holds(channel: 1), "channel 2 is not held")
        // Still loading: nothing applied, nothing lost.
        #expect(Self.release(&held, loading: [19]).isEmpty)
        #expect(held.count == 1 + chord.count)
        // Ready: the program change first, then the rest as they came.
        #expect(Self.release(&held) == [Self.programChange] + chord)
        #expect(held.isEmpty && !held.holds(channel: 0))
    }

    /// Each entry's take number stays with it through a partial release (another
    /// channel still waiting) and a replaced program change, as `--record-midi` needs.
    @Test func takeNumbers_travelWithTheirMessages() {
        var held = HeldMessages(capacity: 8, reserve: 2)
        defer { held.deallocate() }
        func releaseAll(loading: Set<UInt8> = []) -> [UInt32] {
            var takes: [UInt32] = []
            held.release { message, take, _ in
                if message.kind == 0xC0 && loading.contains(message.data1) { return false }
                takes.append(take)
                return true
            }
            return takes
        }
        _ = held.hold(ChannelMessage(status: 0xC1, data1: 73), take: 1)                  // channel 2 waits for 73
        _ = held.hold(.noteOn(72, velocity: 100, channel: 1), take: 2)
        _ = held.hold(ChannelMessage(status: 0xC0, data1: 56), take: 3)                  // channel 1: replaced below
        _ = held.hold(ChannelMessage(status: 0xB0, data1: 0, data2: 8), take: 4)
        #expect(held.hold(ChannelMessage(status: 0xC0, data1: 4), take: 5) == .replacedWaitingProgram)
        _ = held.hold(ChannelMessage(status: 0xB0, data1: 64, data2: 127), take: 6)      // sustain down on channel 1
        _ = held.hold(.noteOn(60, velocity: 100, channel: 0), take: 7)
        // Channel 1 ready, channel 2 still loading: 4, 5, 6, 7 in order.
        #expect(releaseAll(loading: [73]) == [4, 5, 6, 7])
        _ = held.hold(.noteOn(74, velocity: 90, channel: 1), take: 8)
        #expect(releaseAll() == [1, 2, 8])
        #expect(held.isEmpty)
    }

    @Test func aReadyChannel_isReleased_whileAnotherStillWaits() {
        var held = HeldMessages(capacity: 64, reserve: 8)
        defer { held.deallocate() }
        let organ = ChannelMessage(status: 0xC0, data1: 19), flute = ChannelMessage(status: 0xC1, data1: 73)
        _ = held.hold(organ); _ = held.hold(.noteOn(60, velocity: 100, channel: 0))
        _ = held.hold(flute); _ = held.hold(.noteOn(72, velocity: 100, channel: 1))
        _ = held.hold(.noteOff(60, channel: 0))
        #expect(Self.release(&held, loading: [73]) == [organ, .noteOn(60, velocity: 100, channel: 0), .noteOff(60, channel: 0)])
        #expect(held.count == 2 && held.holds(channel: 1) && !held.holds(channel: 0))
    }

    @Test func aSecondProgramChange_whileWaiting_isQueuedBehind_orReplacesOneWithNothingBetween() {
        var held = HeldMessages(capacity: 64, reserve: 8)
        defer { held.deallocate() }
        _ = held.hold(ChannelMessage(status: 0xC0, data1: 56))
        _ = held.hold(ChannelMessage(status: 0xB0, data1: 0, data2: 8))
        // Only a bank select between: the first never sounds, so one program change does the same.
        #expect(held.hold(ChannelMessage(status: 0xC0, data1: 4)) == .replacedWaitingProgram)
        _ = held.hold(.noteOn(60, velocity: 100, channel: 0))
        // A note between: both stay, in order (the note plays on 8:4, the next ones on 0:19).
        #expect(held.hold(ChannelMessage(status: 0xC0, data1: 19)) == .held)
        #expect(Self.release(&held) == [ChannelMessage(status: 0xB0, data1: 0, data2: 8), ChannelMessage(status: 0xC0, data1: 4),
                                        .noteOn(60, velocity: 100, channel: 0), ChannelMessage(status: 0xC0, data1: 19)])
    }

    @Test func aSysEx_holdsEveryChannelBehindIt() {
        var held = HeldMessages(capacity: 64, reserve: 8)
        defer { held.deallocate() }
        _ = held.hold(Self.programChange)
        let gmOn: [UInt8] = [0x7E, 0x7F, 0x09, 0x01]
        #expect(gmOn.withUnsafeBufferPointer { held.holdSysEx($0) })
        #expect(held.holds(channel: 5))
        _ = held.hold(.noteOn(36, velocity: 100, channel: 9))
        // Channel 1 still loading: the SysEx and channel 10's note after it wait.
        #expect(Self.release(&held, loading: [19]).isEmpty)
        var bytes: [UInt8] = []
        held.release { _, _, sysEx in if let sysEx { bytes = Array(sysEx) }; return true }
        #expect(bytes == gmOn && held.isEmpty && !held.holds(channel: 5))
    }

    // MARK: Overflow: never a note left sounding

    @Test func noteOns_areRefusedFirst_leavingTheReserveToNoteOffs() {
        var held = HeldMessages(capacity: 16, reserve: 4)
        defer { held.deallocate() }
        _ = held.hold(Self.programChange)
        var admitted: [UInt8] = []
        for key in UInt8(40)..<60 where held.hold(.noteOn(key, velocity: 100, channel: 0)) == .held { admitted.append(key) }
        #expect(admitted.count == 11 && held.droppedNoteOns == 9, "\(admitted.count) admitted, \(held.droppedNoteOns) dropped")
        // Every note-off still finds room (the reserve), in order.
        for key in UInt8(40)..<44 { #expect(held.hold(.noteOff(key, channel: 0)) == .held) }
        #expect(held.count == 16)
        // Full: the next note-off evicts the newest held note-on (its note then never starts).
        #expect(held.hold(.noteOff(44, channel: 0)) == .held)
        #expect(held.droppedNoteOns == 10 && held.count == 16)
        let applied = Self.release(&held)
        #expect(!applied.contains(.noteOn(50, velocity: 100, channel: 0)), "the newest note-on (50) was evicted")
        #expect(Self.soundingAfter(applied).isEmpty || Self.soundingAfter(applied) == Set(UInt8(45)...49),
                "sounding: \(Self.soundingAfter(applied))")
    }

    /// Keys whose last note message in `applied` is a note-on.
    static func soundingAfter(_ applied: [ChannelMessage]) -> Set<UInt8> {
        var on = Set<UInt8>()
        for m in applied where m.kind == 0x90 || m.kind == 0x80 {
            if m.kind == 0x90 && m.data2 > 0 { on.insert(m.data1) } else { on.remove(m.data1) }
        }
        return on
    }

    /// A flood of notes, each pressed and released, while the preset loads:
    /// whatever the store keeps, every note that starts ends.
    @Test func aFloodOfNotes_leavesNoNoteSounding() {
        for capacity in [8, 16, 64] {
            var held = HeldMessages(capacity: capacity, reserve: capacity / 4)
            defer { held.deallocate() }
            _ = held.hold(Self.programChange)
            var appliedAtOnce: [ChannelMessage] = []
            for round in 0..<10 {
                for key in UInt8(36)..<UInt8(36 + 12) {
                    let on = ChannelMessage.noteOn(key + UInt8(round % 3), velocity: 100, channel: 0)
                    let off = ChannelMessage.noteOff(key + UInt8(round % 3), channel: 0)
                    for m in [on, off] where held.hold(m) == .applyNow { appliedAtOnce.append(m) }
                }
            }
            let applied = appliedAtOnce + Self.release(&held)
            #expect(Self.soundingAfter(applied).isEmpty, "capacity \(capacity): \(Self.soundingAfter(applied)) left sounding")
            #expect(held.droppedNoteOns > 0)
        }
    }

    @Test func full_withNoNoteOnHeld_aNoteOffOrPedalUpIsAppliedAtOnce_otherMessagesDropped() {
        var held = HeldMessages(capacity: 8, reserve: 2)
        defer { held.deallocate() }
        _ = held.hold(Self.programChange)
        _ = held.hold(ChannelMessage(status: 0xB0, data1: 64, data2: 127))   // pedal down, held
        for value in UInt8(0)..<6 { _ = held.hold(ChannelMessage(status: 0xB0, data1: 1, data2: value)) }
        #expect(held.count == 8)
        #expect(held.hold(.noteOff(60, channel: 0)) == .applyNow)
        #expect(held.hold(ChannelMessage(status: 0xB0, data1: 7, data2: 90)) == .dropped)
        #expect(held.droppedOthers == 1)
        // Pedal up at once: the held pedal down goes too, or it would hold the channel's next notes.
        #expect(held.hold(ChannelMessage(status: 0xB0, data1: 64, data2: 0)) == .applyNow)
        let applied = Self.release(&held)
        #expect(!applied.contains(ChannelMessage(status: 0xB0, data1: 64, data2: 127)))
        #expect(applied.first == Self.programChange && applied.count == 7)
    }
}
