import ControlDefinitions
import Parameters

/// Controls that belong together on a page, as a controller's strip does: a
/// mapping's `group:`, or else what the controls drive (all of channel 3's
/// controls, the oscillator's, the transport's).
public struct ControlGroup: Hashable, Sendable {
    public var name: String
    /// The controls' names top to bottom: dials, selectors, buttons and pads,
    /// faders, readouts (a hardware strip's knob over its buttons over its
    /// fader); mapping order within each.
    public var controls: [String]
    /// The mixer strip whose meter goes beside the group's fader: the strip
    /// the first fader on a strip parameter moves, else the first control's
    /// on one, else none (a pitch-bend fader has no meter).
    public var strip: ParameterAddress.StripID?
    /// Every control drives the transport: the page puts the group in the transport's bar.
    public var isTransport: Bool

    /// The groups of `definitions`: in `order` (a mapping's `groups:`) first,
    /// the others in the order their first control comes.
    public static func arrange(_ definitions: [ControlDefinition], order: [String] = []) -> [ControlGroup] {
        var names = order
        var members: [String: [ControlDefinition]] = [:]
        for d in definitions {
            let name = d.group ?? d.drivenGroup
            if members[name] == nil, !names.contains(name) { names.append(name) }
            members[name, default: []].append(d)
        }
        return names.compactMap { name in
            guard let list = members[name] else { return nil }
            // The meter goes beside the fader: the strip a fader's gain (or pan …) moves, else another control's.
            let strip = (list.filter { $0.kind == .fader } + list).lazy.compactMap(\.mixerStrip).first
            let addresses = list.flatMap(\.drivenAddresses)
            let sorted = list.enumerated().sorted { a, b in
                (a.element.kind.rankInGroup, a.offset) < (b.element.kind.rankInGroup, b.offset)
            }
            return ControlGroup(
                name: name, controls: sorted.map(\.element.name), strip: strip,
                isTransport: !addresses.isEmpty && addresses.allSatisfy {
                    if case .transport = $0 { true } else { false }
                })
        }
    }
}

extension ControlKind {
    /// Top to bottom in a group.
    var rankInGroup: Int {
        switch self {
        case .knob, .encoder: 0
        case .selector: 1
        case .toggle, .button, .momentary, .pad: 2
        case .fader: 3
        case .readout: 4
        }
    }
}
