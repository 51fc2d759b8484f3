import ControlDefinitions
import Foundation
import MIDI
import Parameters

/// What MIDI learn binds: an existing control (by name), or a parameter (by
/// address) — the control that drives it, or a new one when none does.
public enum LearnTarget: Hashable, Sendable, CustomStringConvertible {
    case control(String)
    case parameter(ParameterAddress)

    public var description: String {
        switch self {
        case .control(let name): name
        case .parameter(let address): address.description
        }
    }
}

/// A binding MIDI learn made and wrote into the mapping file.
public struct LearnedBinding: Hashable, Sendable, CustomStringConvertible {
    /// The control that now reads `source` (a new one when `created`).
    public var control: String
    public var source: ControlSource
    public var created: Bool
    /// The mapping file that holds it.
    public var file: String

    public var description: String {
        "\(created ? "new control " : "")'\(control)' ← \(source) (saved in \(file))"
    }
}

/// What MIDI learn reports to its observers.
public enum LearnEvent: Hashable, Sendable, CustomStringConvertible {
    case armed(LearnTarget)
    case bound(LearnedBinding)
    /// Nothing was bound or written: the message says why (a checker's `file:line:column: error: …`).
    case failed(LearnTarget, String)
    case cancelled(LearnTarget)

    public var description: String {
        switch self {
        case .armed(let t): "learning: \(t) — move a control on your controller"
        case .bound(let b): "learned: \(b)"
        case .failed(let t, let why): "learn failed for '\(t)': \(why)"
        case .cancelled(let t): "learn cancelled for '\(t)'"
        }
    }
}

/// Why learn cannot be armed.
public enum LearnError: Error, Hashable, Sendable, CustomStringConvertible {
    case noMapping
    case unknownControl(String)
    case readout(String)
    /// A part of an xy pad (played on the page; the file's pad has no source to write).
    case padPart(String, pad: String)

    public var description: String {
        switch self {
        case .noMapping: "MIDI learn needs a mapping file (--mapping) to write the binding into"
        case .unknownControl(let name): "no control named '\(name)'"
        case .readout(let name): "'\(name)' is a readout; the engine sets it, no MIDI source can"
        case .padPart(let name, let pad):
            "'\(name)' is part of the xy pad '\(pad)', played on the page; learn a fader for its parameter instead"
        }
    }
}

/// Watches the MIDI stream for the message that should bind: a CC whose
/// value moves (a repeat of the last value does not), a 14-bit CC pair
/// (MSB 0–31 with its LSB 32–63, either first), an NRPN/RPN data entry
/// (7-bit, or 14-bit when the LSB follows), a note-on. Every CC value is
/// followed even while not armed, so "moves" means "differs from what this
/// controller last sent". Not thread-safe: the hub calls it under its lock.
struct LearnDetector {
    enum Outcome: Equatable {
        /// Not for learn: the controls and the sampler get it as usual.
        case ignored
        /// Learn took it (it may still become half of a pair).
        case consumed
        /// This source binds now.
        case bound(ControlSource)
    }

    private struct NumberKey: Hashable {
        var kind: ParameterNumberAssembler.Kind
        var channel: UInt8
        var parameter: UInt16
    }

    private var lastCC = [Int16](repeating: -1, count: 16 * 128)
    private var lastNumber: [NumberKey: Int] = [:]
    private var numbers = ParameterNumberAssembler()
    /// A candidate waiting for its other half (a 14-bit pair, an NRPN LSB) until `age` ticks pass.
    private(set) var pending: ControlSource?
    private var age = 0

    /// Ticks a pending candidate waits for its partner: the pair's two
    /// messages come back to back, a tick (one render block) is plenty.
    static let pairTicks = 2

    mutating func reset() { pending = nil; age = 0 }

    mutating func observe(_ message: MIDIMessage, armed: Bool) -> Outcome {
        switch message {
        case .controlChange(let m):
            return controlChange(m, armed: armed)
        case .noteOn(let m) where m.velocity.value > 0:
            guard armed else { return .ignored }
            if let p = pending { reset(); return .bound(p) }
            return .bound(ControlSource(.note(m.note), channel: m.channel))
        default:
            return .ignored
        }
    }

    /// The control thread's tick: a candidate whose partner did not come binds alone.
    mutating func tick() -> ControlSource? {
        guard let p = pending else { return nil }
        age += 1
        guard age >= Self.pairTicks else { return nil }
        reset()
        return p
    }

    private mutating func controlChange(_ m: MIDIMessage.ControlChange, armed: Bool) -> Outcome {
        let ch = m.channel
        if ParameterNumberAssembler.handles(m.controller) {
            guard let event = numbers.receive(channel: ch, controller: m.controller, value: m.value) else {
                return armed ? .consumed : .ignored
            }
            let key = NumberKey(kind: event.kind, channel: UInt8(ch.intValue), parameter: event.parameter.value)
            let message: (Int) -> ControlSource.Message = { bits in
                event.kind == .nrpn ? .nrpn(event.parameter, bits: bits) : .rpn(event.parameter, bits: bits)
            }
            var moved = true
            var lsbCame = false
            if case .set(let msb, let lsb) = event.action {
                let value = Int(msb.value) << 7 | Int(lsb?.value ?? 0)
                moved = lastNumber[key] != value
                lastNumber[key] = value
                lsbCame = lsb != nil
            }
            guard armed else { return .ignored }
            if lsbCame, let p = pending, p.message == message(7), p.channel == ch {
                reset()
                return .bound(ControlSource(message(14), channel: ch))  // the LSB followed: 14-bit
            }
            guard moved else { return .consumed }
            if let p = pending, !(p.message == message(7) && p.channel == ch) { reset(); return .bound(p) }
            if case .set(_, nil) = event.action {
                pending = ControlSource(message(7), channel: ch)
                age = 0
                return .consumed
            }
            return .bound(ControlSource(message(14), channel: ch))
        }
        let n = m.controller.intValue
        let slot = ch.intValue * 128 + n
        let moved = lastCC[slot] != Int16(m.value.value)
        lastCC[slot] = Int16(m.value.value)
        guard armed else { return .ignored }
        // The other half of a 14-bit pair binds both, moved or not (an LSB may repeat).
        if let p = pending, p.channel == ch, case .cc(let first) = p.message {
            let f = first.intValue
            if f < 32 && n == f + 32 { reset(); return .bound(ControlSource(.cc14(msb: first, order: .auto), channel: ch)) }
            if f >= 32 && f < 64 && n == f - 32 {
                reset()
                return .bound(ControlSource(.cc14(msb: m.controller, order: .auto), channel: ch))
            }
            if f == n { return .consumed }
        }
        guard moved else { return .ignored }
        if let p = pending { reset(); return .bound(p) }
        if n < 64 {
            // 0–63 may be half of a 14-bit pair: wait a moment for the other half.
            pending = ControlSource(.cc(m.controller), channel: ch)
            age = 0
            return .consumed
        }
        return .bound(ControlSource(.cc(m.controller), channel: ch))
    }
}
