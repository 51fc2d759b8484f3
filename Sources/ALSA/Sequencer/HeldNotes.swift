import MIDI

/// Which notes and pedals (sustain, sostenuto) each MIDI source holds down, so that when a
/// source goes away (unsubscribed, port or client gone) what it started can be
/// ended: FluidSynth would leave those notes hanging (its issue #1129).
///
/// Pure bookkeeping: feed it every message a source sends (`track`), ask it for
/// the messages that release a source (`release`).
public struct HeldNotes<Source: Hashable> {
    private struct Key: Hashable, Comparable {
        var channel: UInt8
        var note: UInt8
        static func < (a: Key, b: Key) -> Bool { (a.channel, a.note) < (b.channel, b.note) }
    }

    private var notes: [Source: Set<Key>] = [:]
    /// Bit n set: the sustain pedal (CC 64) of channel n is down.
    private var sustain: [Source: UInt16] = [:]
    /// Bit n set: the sostenuto pedal (CC 66) of channel n is down.
    private var sostenuto: [Source: UInt16] = [:]

    public init() {}

    /// True when no source holds a note or a pedal.
    public var isEmpty: Bool { notes.isEmpty && sustain.isEmpty && sostenuto.isEmpty }

    /// The sources holding something.
    public var sources: [Source] { Array(Set(notes.keys).union(sustain.keys).union(sostenuto.keys)) }

    /// How many notes `source` holds.
    public func noteCount(of source: Source) -> Int { notes[source]?.count ?? 0 }

    /// Updates what `source` holds after it sent `message`.
    public mutating func track(_ message: MIDIMessage, from source: Source) {
        switch message {
        case .noteOn(let m) where m.velocity.value > 0:
            notes[source, default: []].insert(Key(channel: m.channel.value, note: m.note.value))
        case .noteOn(let m):
            removeNote(Key(channel: m.channel.value, note: m.note.value), of: source)
        case .noteOff(let m):
            removeNote(Key(channel: m.channel.value, note: m.note.value), of: source)
        case .controlChange(let m):
            let bit = UInt16(1) << m.channel.value
            switch m.controller.value {
            case 64:
                if m.value.value >= 64 { sustain[source, default: 0] |= bit } else { Self.clear(bit, of: source, in: &sustain) }
            case 66:
                if m.value.value >= 64 { sostenuto[source, default: 0] |= bit } else { Self.clear(bit, of: source, in: &sostenuto) }
            case 121:  // reset all controllers lifts the pedals
                Self.clear(bit, of: source, in: &sustain)
                Self.clear(bit, of: source, in: &sostenuto)
            case 120, 123:  // all sound off, all notes off
                if var held = notes[source] {
                    held = held.filter { $0.channel != m.channel.value }
                    notes[source] = held.isEmpty ? nil : held
                }
            default: break
            }
        case .systemReset:
            notes[source] = nil
            sustain[source] = nil
            sostenuto[source] = nil
        default: break
        }
    }

    /// Forgets what `source` holds and returns the messages that end it:
    /// a note-off (velocity 0) for each held note, then CC 64 = 0 for each
    /// channel whose sustain pedal is down and CC 66 = 0 for each whose
    /// sostenuto is; ordered by channel and note.
    public mutating func release(_ source: Source) -> [MIDIMessage] {
        var out: [MIDIMessage] = []
        if let held = notes.removeValue(forKey: source) {
            for key in held.sorted() {
                out.append(.noteOff(UInt7(key.note), velocity: 0, channel: Channel(key.channel)))
            }
        }
        for (controller, down) in [(UInt7(64), sustain.removeValue(forKey: source)), (66, sostenuto.removeValue(forKey: source))] {
            guard let down else { continue }
            for channel in 0..<16 where down & (1 << channel) != 0 {
                out.append(.cc(controller, value: 0, channel: Channel(channel)))
            }
        }
        return out
    }

    /// Releases every source for which `predicate` holds (e.g. every port of a client that exited).
    public mutating func release(where predicate: (Source) -> Bool) -> [(source: Source, messages: [MIDIMessage])] {
        sources.filter(predicate).map { ($0, release($0)) }
    }

    private mutating func removeNote(_ key: Key, of source: Source) {
        guard var held = notes[source] else { return }
        held.remove(key)
        notes[source] = held.isEmpty ? nil : held
    }

    private static func clear(_ bit: UInt16, of source: Source, in pedals: inout [Source: UInt16]) {
        guard let down = pedals[source] else { return }
        let left = down & ~bit
        pedals[source] = left == 0 ? nil : left
    }
}
