import Engine

/// The messages that wait behind a program change whose preset is loading
/// (`OnDemandInstrument`), in arrival order, in a store allocated once.
///
/// A channel with a message here is held: every later message for it waits
/// here too, so they reach the synth in the order they came, after the
/// program change, in the block its preset is ready. A SysEx here (the bytes
/// beside, in `sysExSlots` slots) holds every channel: it may reset or
/// retype any of them.
///
/// When the store fills (a flood of messages while a preset loads), no note
/// is left sounding: note-ons are refused first (while fewer than `reserve`
/// entries are free, and counted in `droppedNoteOns`: their note-offs then
/// find nothing to end); a message that comes with the store full evicts the
/// newest held note-on; with no note-on held, a message that ends sound
/// (note-off, pedal up, all notes or sound off, reset controllers, a mode
/// change) is applied at once — out of order, but no held note can start
/// after it — with the held values of the same pedal on its channel taken out,
/// and any other message is refused (`droppedOthers`).
///
/// Each entry keeps the live take's number of the input message it came
/// from (`TimedMessage.take`, 0: none), handed to `release` with it, so the
/// take can stamp it where it was applied (`TakeStamps`).
///
/// Threads: made before rendering; then only the render thread uses it
/// (no allocation, no lock).
package struct HeldMessages {
    package let capacity: Int
    /// Entries kept free of note-ons, for the messages that end notes.
    package let reserve: Int
    package static let sysExSlots = 8, sysExBytes = 512

    private let entries: UnsafeMutablePointer<ChannelMessage>
    /// Each entry's take number, beside it.
    private let takes: UnsafeMutablePointer<UInt32>
    package private(set) var count = 0
    /// Bit c: channel c has a message here.
    package private(set) var heldChannels: UInt16 = 0
    /// SysEx waiting, oldest first: a ring of slots (`sysExFirst` the oldest).
    private let sysExStore: UnsafeMutablePointer<UInt8>
    private let sysExLengths: UnsafeMutablePointer<Int>
    package private(set) var sysExCount = 0
    private var sysExFirst = 0

    /// Note-ons refused or evicted because the store was full.
    package private(set) var droppedNoteOns = 0
    /// Other messages refused because the store was full (controllers, bends,
    /// pressure, pedal down, SysEx).
    package private(set) var droppedOthers = 0

    package init(capacity: Int = 1024, reserve: Int = 256) {
        precondition(capacity > reserve && reserve > 0)
        self.capacity = capacity
        self.reserve = reserve
        entries = .allocate(capacity: capacity)
        takes = .allocate(capacity: capacity)
        takes.initialize(repeating: 0, count: capacity)
        sysExStore = .allocate(capacity: Self.sysExSlots * Self.sysExBytes)
        sysExLengths = .allocate(capacity: Self.sysExSlots)
        sysExLengths.initialize(repeating: 0, count: Self.sysExSlots)
    }

    /// Frees the store. Once, by the owner, after the last use.
    package func deallocate() {
        entries.deallocate(); takes.deallocate(); sysExStore.deallocate(); sysExLengths.deallocate()
    }

    package var isEmpty: Bool { count == 0 }

    /// Whether a message for `channel` must wait behind what is held.
    @inline(__always)
    package func holds(channel: Int) -> Bool {
        sysExCount > 0 || heldChannels & 1 << channel != 0
    }

    /// The entry at `index` (0: the oldest); a SysEx is `isSysEx`, its bytes `sysEx(at:)`.
    package subscript(index: Int) -> ChannelMessage { entries[index] }

    /// What became of a message given to `hold`.
    package enum Admission: Equatable {
        /// Waiting in the store.
        case held
        /// Program changes held back to back (only bank selects between) make one:
        /// the earlier one was taken out, this one waits in its place.
        case replacedWaitingProgram
        /// Refused: the store is full (counted).
        case dropped
        /// Not held: apply it now (the store is full and holds no note-on).
        case applyNow
    }

    /// Holds a channel message (not a SysEx), with the take's number of its input message (0: none).
    package mutating func hold(_ message: ChannelMessage, take: UInt32 = 0) -> Admission {
        precondition(!message.isSysEx)
        if message.kind == 0x90 && message.data2 > 0 {
            guard count < capacity - reserve else { droppedNoteOns += 1; return .dropped }
        } else if count == capacity {
            if let newest = newestNoteOn() {
                remove(at: newest)
                droppedNoteOns += 1
            } else if Self.endsSound(message) {
                if message.kind == 0xB0 { removeHeld(controller: message.data1, channel: message.channel) }
                return .applyNow
            } else {
                droppedOthers += 1
                return .dropped
            }
        }
        var admission = Admission.held
        if message.kind == 0xC0, let earlier = waitingProgramBackToBack(channel: message.channel) {
            remove(at: earlier)
            admission = .replacedWaitingProgram
        }
        entries[count] = message
        takes[count] = take
        count += 1
        heldChannels |= 1 << message.channel
        return admission
    }

    /// Holds a SysEx message (the bytes between F0 and F7); false when
    /// refused (the store or its SysEx slots full, or longer than `sysExBytes`; counted).
    package mutating func holdSysEx(_ data: UnsafeBufferPointer<UInt8>) -> Bool {
        guard count < capacity - reserve, sysExCount < Self.sysExSlots, data.count <= Self.sysExBytes else {
            droppedOthers += 1
            return false
        }
        let slot = (sysExFirst + sysExCount) % Self.sysExSlots
        if let bytes = data.baseAddress { (sysExStore + slot * Self.sysExBytes).update(from: bytes, count: data.count) }
        sysExLengths[slot] = data.count
        sysExCount += 1
        entries[count] = .sysExPlaceholder(0)
        takes[count] = 0
        count += 1
        return true
    }

    /// Releases held messages in order: `release` is called with each entry,
    /// its take number, and a SysEx's bytes (valid during the call; nil for a
    /// channel message) and says whether it was applied (true: taken out) or must
    /// still wait (false: it stays, and so does every later entry of its
    /// channel — of every channel after a SysEx that stays). Render thread.
    package mutating func release(_ release: (ChannelMessage, UInt32, UnsafeBufferPointer<UInt8>?) -> Bool) {
        var blocked: UInt16 = 0, kept = 0
        for i in 0..<count {
            let message = entries[i], take = takes[i]
            if message.isSysEx {
                let bytes = UnsafeBufferPointer(start: sysExStore + sysExFirst * Self.sysExBytes, count: sysExLengths[sysExFirst])
                if blocked == 0 && release(message, take, bytes) {
                    sysExFirst = (sysExFirst + 1) % Self.sysExSlots
                    sysExCount -= 1
                    continue
                }
                blocked = 0xFFFF
            } else if blocked & 1 << message.channel == 0 && release(message, take, nil) {
                continue
            } else {
                blocked |= 1 << message.channel
            }
            entries[kept] = message
            takes[kept] = take
            kept += 1
        }
        count = kept
        recountChannels()
    }

    /// Takes out every held note-on (after all sound off: they would start after it).
    package mutating func dropNoteOns() {
        var kept = 0
        for i in 0..<count where !(entries[i].kind == 0x90 && entries[i].data2 > 0) {
            entries[kept] = entries[i]
            takes[kept] = takes[i]
            kept += 1
        }
        count = kept
        recountChannels()
    }

    // MARK: Overflow and coalescing

    /// Note-offs and what ends notes or pedals: never refused.
    @inline(__always)
    static func endsSound(_ message: ChannelMessage) -> Bool {
        switch message.kind {
        case 0x80: return true
        case 0x90: return message.data2 == 0
        case 0xB0:
            switch message.data1 {
            case 64, 66, 67: return message.data2 < 64        // sustain, sostenuto, soft pedal up
            case 120, 121, 123...127: return true            // all sound off, reset controllers, all notes off, modes
            default: return false
            }
        default: return false
        }
    }

    private func newestNoteOn() -> Int? {
        var i = count - 1
        while i >= 0 {
            if entries[i].kind == 0x90 && entries[i].data2 > 0 { return i }
            i -= 1
        }
        return nil
    }

    /// The held program change of `channel` with nothing after it on the
    /// channel but bank selects (and no SysEx after it): a program change now
    /// makes it void — nothing sounded with it, and the bank it would select
    /// from is the one the new one selects from.
    private func waitingProgramBackToBack(channel: Int) -> Int? {
        var i = count - 1
        while i >= 0 {
            let m = entries[i]
            if m.isSysEx { return nil }
            if m.channel == channel {
                if m.kind == 0xC0 { return i }
                guard m.kind == 0xB0 && (m.data1 == 0 || m.data1 == 32) else { return nil }
            }
            i -= 1
        }
        return nil
    }

    /// Takes out the held values of `controller` on `channel` (a pedal's up, applied now, supersedes them).
    private mutating func removeHeld(controller: UInt8, channel: Int) {
        var kept = 0
        for i in 0..<count {
            let m = entries[i]
            if !m.isSysEx && m.kind == 0xB0 && m.channel == channel && m.data1 == controller { continue }
            entries[kept] = m
            takes[kept] = takes[i]
            kept += 1
        }
        count = kept
        recountChannels()
    }

    private mutating func remove(at index: Int) {
        (entries + index).update(from: entries + index + 1, count: count - index - 1)
        (takes + index).update(from: takes + index + 1, count: count - index - 1)
        count -= 1
        recountChannels()
    }

    private mutating func recountChannels() {
        var channels: UInt16 = 0
        for i in 0..<count where !entries[i].isSysEx { channels |= 1 << entries[i].channel }
        heldChannels = channels
    }
}
