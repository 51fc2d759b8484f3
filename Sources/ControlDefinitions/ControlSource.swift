import MIDI

/// Which MIDI messages move a control. `channel` nil means any channel.
public struct ControlSource: Hashable, Sendable {
    public enum Message: Hashable, Sendable {
        /// A 7-bit control change, 0...127.
        case cc(UInt7)
        /// A 14-bit control change: MSB controller 0...31, LSB controller MSB + 32.
        case cc14(msb: UInt7, order: ByteOrder)
        /// A non-registered parameter number (CC 99/98, data entry 6/38, increment/decrement 96/97).
        case nrpn(UInt14, bits: Int)
        /// A registered parameter number (CC 101/100, data entry 6/38, increment/decrement 96/97).
        case rpn(UInt14, bits: Int)
        /// Note on (velocity) and note off of one note.
        case note(UInt7)
        case programChange
        case pitchBend
        case channelPressure
    }

    /// Which of a 14-bit pair a controller sends first.
    public enum ByteOrder: String, Hashable, Sendable, CaseIterable {
        /// The MIDI 1.0 rule: the MSB first (it resets the LSB to 0), then the LSB refines it.
        case msbFirst = "msb-first"
        /// The LSB first, held until the MSB arrives and completes the value.
        case lsbFirst = "lsb-first"
        /// Whichever of the pair arrives first on a channel decides the order.
        case auto
    }

    public var message: Message
    public var channel: Channel?

    public init(_ message: Message, channel: Channel? = nil) {
        self.message = message
        self.channel = channel
    }

    /// The steps in the source's full range minus one: 127 for 7-bit, 16383 for 14-bit.
    public var resolution: Int {
        switch message {
        case .cc, .note, .programChange, .channelPressure: 127
        case .cc14, .pitchBend: 16383
        case .nrpn(_, let bits), .rpn(_, let bits): bits == 7 ? 127 : 16383
        }
    }

    /// True when both sources could be moved by the same message.
    public func overlaps(_ other: ControlSource) -> Bool {
        if let a = channel, let b = other.channel, a != b { return false }
        return !Set(wireKeys).isDisjoint(with: other.wireKeys)
    }

    /// What a source listens to, to detect two controls on one source.
    private var wireKeys: [String] {
        switch message {
        case .cc(let n): ["cc\(n)"]
        case .cc14(let msb, _): ["cc\(msb)", "cc\(msb.intValue + 32)"]
        case .nrpn(let n, _): ["nrpn\(n)"]
        case .rpn(let n, _): ["rpn\(n)"]
        case .note(let n): ["note\(n)"]
        case .programChange: ["program"]
        case .pitchBend: ["bend"]
        case .channelPressure: ["pressure"]
        }
    }

    /// True for a source that uses the NRPN/RPN controllers (6, 38, 96–101).
    public var isParameterNumber: Bool {
        switch message {
        case .nrpn, .rpn: true
        default: false
        }
    }

    /// The controller numbers this source reads directly, if it reads CCs.
    public var controllers: [Int] {
        switch message {
        case .cc(let n): [n.intValue]
        case .cc14(let msb, _): [msb.intValue, msb.intValue + 32]
        default: []
        }
    }
}

extension ControlSource: CustomStringConvertible {
    /// Short text for tables and messages: "CC 7 on channel 1", "CC 1+33 on any channel".
    public var description: String {
        let ch = channel.map { "on channel \($0.intValue + 1)" } ?? "on any channel"
        switch message {
        case .cc(let n): return "CC \(n) \(ch)"
        case .cc14(let msb, _): return "CC \(msb)+\(msb.intValue + 32) \(ch)"
        case .nrpn(let n, let bits): return "NRPN \(n)\(bits == 7 ? " (7-bit)" : "") \(ch)"
        case .rpn(let n, let bits): return "RPN \(n)\(bits == 7 ? " (7-bit)" : "") \(ch)"
        case .note(let n): return "note \(n) \(ch)"
        case .programChange: return "program change \(ch)"
        case .pitchBend: return "pitch bend \(ch)"
        case .channelPressure: return "channel pressure \(ch)"
        }
    }
}
