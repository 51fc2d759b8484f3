import MIDI

/// Follows the NRPN/RPN controllers on each channel: parameter selection
/// (CC 99/98 NRPN, CC 101/100 RPN; 127/127 is the null parameter), data entry
/// (CC 6 MSB, CC 38 LSB, any number of times for the selected parameter) and
/// increment/decrement (CC 96/97).
public struct ParameterNumberAssembler: Sendable {
    public enum Kind: Hashable, Sendable { case nrpn, rpn }

    /// What one control change did to a parameter.
    public struct Event: Hashable, Sendable {
        public enum Action: Hashable, Sendable {
            /// Data entry: the MSB alone (LSB nil) or both bytes.
            case set(msb: UInt7, lsb: UInt7?)
            case increment
            case decrement
        }
        public var channel: Channel
        public var kind: Kind
        public var parameter: UInt14
        public var action: Action

        public init(channel: Channel, kind: Kind, parameter: UInt14, action: Action) {
            self.channel = channel
            self.kind = kind
            self.parameter = parameter
            self.action = action
        }
    }

    private struct State: Sendable {
        var kind: Kind?
        var nrpnMSB: UInt8?
        var nrpnLSB: UInt8?
        var rpnMSB: UInt8?
        var rpnLSB: UInt8?
        var dataMSB: UInt8?
    }

    private var states = [State](repeating: State(), count: 16)

    public init() {}

    /// True for the controllers this assembler follows.
    public static func handles(_ controller: UInt7) -> Bool {
        switch controller.value {
        case 6, 38, 96, 97, 98, 99, 100, 101: true
        default: false
        }
    }

    /// Feeds one control change; returns an event when it enters data for, or
    /// steps, a selected parameter.
    public mutating func receive(channel: Channel, controller: UInt7, value: UInt7) -> Event? {
        let ch = channel.intValue
        var s = states[ch]
        defer { states[ch] = s }
        let v = value.value
        switch controller.value {
        case 99: s.nrpnMSB = v; s.kind = .nrpn; s.dataMSB = nil
        case 98: s.nrpnLSB = v; s.kind = .nrpn; s.dataMSB = nil
        case 101: s.rpnMSB = v; s.kind = .rpn; s.dataMSB = nil
        case 100: s.rpnLSB = v; s.kind = .rpn; s.dataMSB = nil
        case 6, 38, 96, 97:
            guard let kind = s.kind, let parameter = Self.selected(s, kind) else { return nil }
            let action: Event.Action
            switch controller.value {
            case 6:
                s.dataMSB = v
                action = .set(msb: value, lsb: nil)
            case 38:
                // An LSB without an MSB for this parameter refines 0.
                action = .set(msb: UInt7(unchecked: s.dataMSB ?? 0), lsb: value)
            case 96: action = .increment
            default: action = .decrement
            }
            return Event(channel: channel, kind: kind, parameter: parameter, action: action)
        default:
            return nil
        }
        return nil
    }

    private static func selected(_ s: State, _ kind: Kind) -> UInt14? {
        let (msb, lsb) = kind == .nrpn ? (s.nrpnMSB, s.nrpnLSB) : (s.rpnMSB, s.rpnLSB)
        guard let msb, let lsb else { return nil }
        if msb == 127 && lsb == 127 { return nil }  // the null parameter: data entry goes nowhere
        return UInt14(msb: UInt7(unchecked: msb), lsb: UInt7(unchecked: lsb))
    }

    public mutating func reset() { states = [State](repeating: State(), count: 16) }
}
