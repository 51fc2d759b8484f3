import ControlDefinitions
import Foundation
import MIDI
import Parameters
import Yams

/// A control's `source:`: the message it listens to.
extension MappingReader {
    func source(_ node: Node, defaultChannel: ChannelChoice, kind: ControlKind?)
        -> (ControlSource, ChannelChoice)?
    {
        // Shorthand: `source: pitch-bend`.
        if case .scalar(let s) = node, node.tagName == .str {
            let message: ControlSource.Message? = switch s.string {
            case "pitch-bend": .pitchBend
            case "program-change": .programChange
            case "channel-pressure": .channelPressure
            default: nil
            }
            guard let message else {
                var text = "unknown source '\(s.string)'; write a mapping such as { cc: 7, channel: 1 }, or pitch-bend, program-change, channel-pressure"
                if let d = EditDistance.closest(to: s.string, among: ["pitch-bend", "program-change", "channel-pressure"]) {
                    text = "unknown source '\(s.string)'; did you mean '\(d)'?"
                }
                error(node, text)
                return nil
            }
            return checked(ControlSource(message, channel: defaultChannel.channel), kind: kind, node: node)
                .map { ($0, defaultChannel) }
        }
        let failuresBefore = diagnostics.count
        guard let entries = fields(node, allowed: MappingKeys.source, "a source") else { return nil }
        var message: ControlSource.Message?
        var messageKeys: [Node] = []
        var channel = defaultChannel
        var orderNode: Node?, bitsNode: Node?
        var messageKey = ""
        for (key, keyNode, value) in entries {
            switch key {
            case "channel":
                if let c = self.channel(value) { channel = c }
            case "order": orderNode = value
            case "bits": bitsNode = value
            default:
                messageKeys.append(keyNode)
                messageKey = key
                switch key {
                case "cc": message = integer(value, in: 0...127, "controller").map { .cc(UInt7($0)) }
                case "cc14":
                    message = integer(value, in: 0...31, "14-bit controller (MSB)").map { .cc14(msb: UInt7($0), order: .auto) }
                case "nrpn", "rpn":
                    if let n = parameterNumber(value, key) {
                        message = key == "nrpn" ? .nrpn(n, bits: 14) : .rpn(n, bits: 14)
                    }
                case "note": message = integer(value, in: 0...127, "note").map { .note(UInt7($0)) }
                case "program-change", "pitch-bend", "channel-pressure":
                    if bool(value, key) == true {
                        message = key == "program-change" ? .programChange : key == "pitch-bend" ? .pitchBend : .channelPressure
                    } else if value.bool == false {
                        error(value, "'\(key): false' does not name a source; leave it out")
                    }
                default: break
                }
            }
        }
        if messageKeys.count > 1 {
            error(messageKeys[1], "a source has one message type; found '\(messageKeys.map { $0.scalar?.string ?? "" }.joined(separator: "', '"))'")
            return nil
        }
        if messageKeys.isEmpty {
            error(node, "a source needs one of: \(MappingKeys.sourceMessages.joined(separator: ", "))")
            return nil
        }
        if let orderNode {
            if case .cc14(let msb, _)? = message, let text = string(orderNode, "a byte order") {
                if let order = ControlSource.ByteOrder(rawValue: text) {
                    message = .cc14(msb: msb, order: order)
                } else {
                    error(orderNode, "unknown order '\(text)' (one of msb-first, lsb-first, auto)")
                }
            } else if messageKey != "cc14" {
                error(orderNode, "'order' applies to cc14 sources only")
            }
        }
        if let bitsNode {
            if messageKey == "nrpn" || messageKey == "rpn" {
                if let bits = integer(bitsNode, in: 7...14, "bits") {
                    if bits != 7 && bits != 14 {
                        error(bitsNode, "bits must be 7 or 14, found \(bits)")
                    } else if case .nrpn(let n, _)? = message {
                        message = .nrpn(n, bits: bits)
                    } else if case .rpn(let n, _)? = message {
                        message = .rpn(n, bits: bits)
                    }
                }
            } else {
                error(bitsNode, "'bits' applies to nrpn and rpn sources only")
            }
        }
        guard let message, diagnostics.count == failuresBefore else { return nil }
        return checked(ControlSource(message, channel: channel.channel), kind: kind, node: node).map { ($0, channel) }
    }

    func parameterNumber(_ node: Node, _ key: String) -> UInt14? {
        if case .sequence(let items) = node {
            guard items.count == 2 else {
                expected("[MSB, LSB] or a number 0...16383 (\(key))", node)
                return nil
            }
            guard let msb = integer(items[0], in: 0...127, "\(key) MSB"), let lsb = integer(items[1], in: 0...127, "\(key) LSB")
            else { return nil }
            return UInt14(msb: UInt7(msb), lsb: UInt7(lsb))
        }
        return integer(node, in: 0...16383, "\(key) number").map { UInt14($0) }
    }

    /// Which kinds can read which messages.
    func checked(_ source: ControlSource, kind: ControlKind?, node: Node) -> ControlSource? {
        guard let kind else { return source }
        let ok: Bool
        switch (kind, source.message) {
        case (.encoder, .cc), (.encoder, .nrpn), (.encoder, .rpn): ok = true
        case (.encoder, _): ok = false
        case (.pad, .note), (.pad, .cc), (.pad, .channelPressure): ok = true
        case (.pad, _): ok = false
        default: ok = true
        }
        guard ok else {
            error(node, "\(kind.withArticle) cannot read \(source.description.components(separatedBy: " on ").first ?? "this source")"
                + (kind == .encoder ? " (encoders read cc, nrpn or rpn)" : " (pads read note, cc or channel-pressure)"))
            return nil
        }
        return source
    }
}
