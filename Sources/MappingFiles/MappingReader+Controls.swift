import ControlDefinitions
import Foundation
import MIDI
import Parameters
import Yams

/// A mapping file's `controls:`: each control, its range and curve, and the
/// conflicts between controls.
extension MappingReader {
    /// A control read from the file, with or without mistakes, for the conflict checks.
    struct Checked {
        var definition: ControlDefinition
        var location: SourceLocation
        var sourceNode: Node?
        /// The control's item in `controls:`, for marks inside it.
        var item: Node
    }

    /// The control(s) an item describes, and whether it was free of mistakes.
    func control(_ node: Node, defaultChannel: ChannelChoice) -> ([ControlDefinition], Node?, Bool)? {
        guard let entries = fields(node, allowed: MappingKeys.control, "a control") else { return nil }
        var byKey: [String: (keyNode: Node, value: Node)] = [:]
        for (key, keyNode, value) in entries { byKey[key] = (keyNode, value) }
        let failuresBefore = diagnostics.count
        let label = byKey["name"].flatMap { string($0.value, "a control name") }
        let what = label.map { "control '\($0)'" } ?? "this control"
        if byKey["name"] == nil { error(node, "missing key 'name' in a control") }
        if let label, label.trimmingCharacters(in: .whitespaces).isEmpty, let n = byKey["name"] {
            error(n.value, "a control name cannot be empty")
        }

        var kind: ControlKind?
        if let k = byKey["kind"] {
            if let text = string(k.value, "a control kind") {
                if text == "xy" { return xyPad(node, byKey, name: label ?? "") }
                kind = ControlKind(rawValue: text)
                if kind == nil {
                    var message = "unknown control kind '\(text)'"
                    let kinds = ControlKind.allCases.map(\.rawValue) + ["xy"]
                    if let s = EditDistance.closest(to: text, among: kinds) {
                        message += "; did you mean '\(s)'?"
                    } else {
                        message += " (one of \(kinds.joined(separator: ", ")))"
                    }
                    error(k.value, message)
                }
            }
        } else {
            error(node, "missing key 'kind' in \(what)")
        }

        // Keys that only make sense for some kinds.
        if let kind {
            let only: [(String, [ControlKind])] = [
                ("encoding", [.encoder]), ("acceleration", [.encoder]), ("resolution", [.encoder]),
                ("follow-value", [.toggle]), ("values", [.selector]), ("shows", [.readout]),
                ("invert", [.fader, .knob, .encoder, .pad, .selector]),
            ]
            for (key, kinds) in only where byKey[key] != nil && !kinds.contains(kind) {
                error(byKey[key]!.keyNode, "'\(key)' applies to \(kinds.map { $0.rawValue + "s" }.joined(separator: ", ")) only, not to \(kind.withArticle)")
            }
        }

        var source: ControlSource?
        var sourceNode: Node?
        var each = false
        if let s = byKey["source"] {
            sourceNode = s.value
            if kind == .readout {
                error(s.keyNode, "a readout has no MIDI source; the engine sets it")
            } else {
                if let (read, choice) = self.source(s.value, defaultChannel: defaultChannel, kind: kind) {
                    source = read
                    each = choice == .each
                }
            }
        } else if kind != nil && kind != .readout {
            error(node, "missing key 'source' in \(what)")
        }

        var shaping = Shaping()
        var shape: Double?
        if let s = byKey["shape"] { shape = number(s.value, in: -50...1000, "shape") }
        if let c = byKey["curve"] {
            shaping.curve = curve(c.value, shape: shape, shapeNode: byKey["shape"]?.value, points: byKey["points"]?.value)
        } else {
            if let s = byKey["shape"] { error(s.keyNode, "'shape' needs a 'curve' (exponential, logarithmic or s-curve)") }
            if let p = byKey["points"] { error(p.keyNode, "'points' needs 'curve: table'") }
        }
        if let i = byKey["invert"] { shaping.inverted = bool(i.value, "invert") ?? false }
        if let s = byKey["steps"] { shaping.steps = integer(s.value, in: 2...128, "steps") }

        var definition = ControlDefinition(name: label ?? "", kind: kind ?? .fader, source: source, shaping: shaping)
        if let r = byKey["range"] { definition.range = range(r.value, "range") }
        if let u = byKey["unit"], let text = string(u.value, "a unit") {
            if let unit = ParameterUnit.namesInFiles[text] {
                definition.unit = unit
            } else {
                var message = "unknown unit '\(text)'"
                if let s = EditDistance.closest(to: text, among: Array(ParameterUnit.namesInFiles.keys).sorted()) {
                    message += "; did you mean '\(s)'?"
                }
                error(u.value, message + " (units: dB, Hz, %, semitones, bpm, ms, s, none)")
            }
        }
        if let v = byKey["values"] {
            if case .sequence(let items) = v.value {
                let values = items.compactMap { number($0, in: -1e9...1e9, "a selector value") }
                if items.count < 2 || items.count > 128 {
                    error(v.value, "a selector needs 2 to 128 values, found \(items.count)")
                } else if values.count == items.count {
                    definition.selectorValues = values
                }
                if byKey["steps"] != nil, let s = byKey["steps"] {
                    error(s.keyNode, "give either 'steps' or 'values', not both")
                }
            } else {
                expected("a list of numbers (selector values)", v.value)
            }
        }
        if let e = byKey["encoding"], let text = string(e.value, "an encoding") {
            if let enc = RelativeEncoding(rawValue: text) {
                definition.encoding = enc
            } else {
                let names = RelativeEncoding.allCases.map(\.rawValue)
                var message = "unknown encoding '\(text)'"
                if let s = EditDistance.closest(to: text, among: names) { message += "; did you mean '\(s)'?" }
                error(e.value, message + " (one of \(names.joined(separator: ", ")))")
            }
        }
        if let a = byKey["acceleration"] { definition.acceleration = number(a.value, in: 0...4, "acceleration") ?? 0 }
        if let r = byKey["resolution"] { definition.encoderResolution = integer(r.value, in: 1...16383, "resolution") ?? 127 }
        if let f = byKey["follow-value"] { definition.followsValue = bool(f.value, "follow-value") ?? false }
        if let f = byKey["feedback"] {
            definition.feedback = bool(f.value, "feedback") ?? true
            if kind == .readout { error(f.keyNode, "a readout has no MIDI source to send feedback to") }
        }
        if let s = byKey["soft-takeover"] {
            let on = bool(s.value, "soft-takeover") ?? false
            if on, let kind, !kind.isAbsolute {
                error(s.value, "soft takeover applies to faders, knobs and selectors, not to \(kind.withArticle)")
            }
            definition.softTakeover = on
        } else {
            definition.softTakeover = kind == .fader || kind == .knob
        }
        if let g = byKey["group"] { definition.group = groupName(g.value) }
        if let s = byKey["shows"], let text = string(s.value, "a parameter address") {
            definition.readoutParameter = address(text, s.value)
        }

        for key in ["targets-x", "targets-y", "targets-touch"] where byKey[key] != nil {
            error(byKey[key]!.keyNode, "'\(key)' applies to xy pads only (kind: xy)")
        }
        var templates: [String?] = []
        if let t = byKey["targets"] {
            (definition.targets, templates) = targets(t.value, each: each)
        } else if kind != nil && kind != .readout {
            error(node, "missing key 'targets' in \(what)")
        }

        // Defaults are checked against the control's value range once targets are known.
        if let d = byKey["default"], let value = number(d.value, in: -1e9...1e9, "default") {
            let range = definition.range
                ?? definition.selectorValues.map { ValueRange($0.min()!, $0.max()!) }
                ?? definition.targets.first.map {
                    $0.range ?? ValueRange(registry.info(for: $0.address).range.lowerBound,
                                           registry.info(for: $0.address).range.upperBound)
                }
            if let range, value < range.lower || value > range.upper {
                error(d.value, "default \(Self.format(value)) is out of the control's range \(Self.format(range.lower))...\(Self.format(range.upper))")
            } else {
                definition.defaultValue = value
            }
        }
        // An explicit control range must fit every target that follows it.
        if let r = definition.range {
            for binding in definition.targets where binding.range == nil {
                let info = registry.info(for: binding.address)
                if r.lower < info.range.lowerBound - 1e-9 || r.upper > info.range.upperBound + 1e-9 {
                    error(byKey["range"]!.value, "range \(Self.format(r.lower))...\(Self.format(r.upper)) is outside \(binding.address)'s range \(Self.format(info.range.lowerBound))...\(Self.format(info.range.upperBound))")
                }
            }
        }
        let ok = diagnostics.count == failuresBefore
        guard each, let source else { return ([definition], sourceNode, ok) }
        // `channel: each`: one control per channel, `*` in targets replaced by that channel.
        let copies = (0..<16).map { c -> ControlDefinition in
            var copy = definition
            copy.name = "\(definition.name) (ch \(c + 1))"
            copy.source = ControlSource(source.message, channel: Channel(c))
            for (i, template) in templates.enumerated() {
                if let template, let a = ParameterAddress(template.replacingOccurrences(of: "*", with: String(c + 1))) {
                    copy.targets[i].address = a
                }
            }
            return copy
        }
        return (copies, sourceNode, ok)
    }

    func range(_ node: Node, _ what: String) -> ValueRange? {
        guard case .sequence(let items) = node, items.count == 2 else {
            expected("a list of two numbers [from, to] (\(what))", node)
            return nil
        }
        guard let a = number(items[0], in: -1e9...1e9, "\(what) start"), let b = number(items[1], in: -1e9...1e9, "\(what) end")
        else { return nil }
        if a == b {
            error(node, "\(what) [\(Self.format(a)), \(Self.format(b))] is empty")
            return nil
        }
        return ValueRange(a, b)
    }

    func curve(_ node: Node, shape: Double?, shapeNode: Node?, points: Node?) -> Curve {
        guard let name = string(node, "a curve name") else { return .linear }
        if points != nil, name != "table" { error(points, "'points' applies to 'curve: table' only") }
        switch name {
        case "linear":
            if let shapeNode { error(shapeNode, "a linear curve has no shape") }
            return .linear
        case "exponential":
            if let shape, shape == 0 || abs(shape) > 20 {
                error(shapeNode, "an exponential curve needs a shape in -20...20 other than 0")
            }
            return .exponential(shape: shape ?? Curve.defaultExponentialShape)
        case "logarithmic":
            if let shape, shape <= 0 { error(shapeNode, "a logarithmic curve needs a shape above 0") }
            return .logarithmic(shape: shape ?? Curve.defaultLogarithmicShape)
        case "s-curve":
            if let shape, shape < 1 || shape > 20 { error(shapeNode, "an s-curve needs a shape in 1...20") }
            return .sCurve(shape: shape ?? Curve.defaultSCurveShape)
        case "table":
            if let shapeNode { error(shapeNode, "a table curve has no shape; it has 'points'") }
            guard let points else {
                error(node, "'curve: table' needs 'points': a list of [x, y] pairs in 0...1")
                return .linear
            }
            return .table(tablePoints(points))
        default:
            var message = "unknown curve '\(name)'"
            if let s = EditDistance.closest(to: name, among: MappingKeys.curves) { message += "; did you mean '\(s)'?" }
            error(node, message + " (one of \(MappingKeys.curves.joined(separator: ", ")))")
            return .linear
        }
    }

    func tablePoints(_ node: Node) -> [Curve.Point] {
        guard case .sequence(let items) = node else {
            expected("a list of [x, y] pairs", node)
            return []
        }
        var result: [Curve.Point] = []
        for item in items {
            guard case .sequence(let pair) = item, pair.count == 2 else {
                expected("a pair [x, y]", item)
                continue
            }
            guard let x = number(pair[0], in: 0...1, "x"), let y = number(pair[1], in: 0...1, "y") else { continue }
            if let last = result.last, x <= last.x {
                error(pair[0], "table points must rise in x: \(Self.format(x)) follows \(Self.format(last.x))")
                continue
            }
            result.append(Curve.Point(x, y))
        }
        if items.count < 2 { error(node, "a table needs at least 2 points") }
        return result
    }


    // MARK: Conflicts

    func checkConflicts(_ all: [Checked]) {
        var names: [String: Int] = [:]
        for (i, entry) in all.enumerated() {
            // An xy pad's name is taken too (the page shows the pad by it): once, with its first part.
            var taken = [entry.definition.name]
            if let pad = entry.definition.pad, i == 0 || all[i - 1].location != entry.location { taken.append(pad.name) }
            for name in taken where !name.isEmpty {
                if let j = names[name] {
                    error(at: entry.location, "control name '\(name)' is already used at line \(all[j].location.line)")
                } else {
                    names[name] = i
                }
            }
        }
        for i in all.indices {
            guard let a = all[i].definition.source else { continue }
            for j in 0..<i {
                guard let b = all[j].definition.source else { continue }
                let here = location(all[i].sourceNode)
                let other = all[j].definition.name
                let otherLine = location(all[j].sourceNode).line
                if a.overlaps(b) {
                    error(at: here, "\(a) is already used by control '\(other)' (line \(otherLine))")
                    break
                }
                // Plain CCs that collide with the NRPN/RPN controllers of another control.
                let (plain, numbered) = a.isParameterNumber ? (b, a) : (a, b)
                if numbered.isParameterNumber, !plain.isParameterNumber,
                    plain.channel == nil || numbered.channel == nil || plain.channel == numbered.channel,
                    let cc = plain.controllers.first(where: { [6, 38, 96, 97, 98, 99, 100, 101].contains($0) })
                {
                    let uses = a.isParameterNumber ? "CC \(cc)" : "NRPN/RPN"
                    error(at: here, "CC \(cc) is an NRPN/RPN controller, and control '\(other)' (line \(otherLine)) uses \(uses) on the same channel")
                    break
                }
            }
        }
    }
}

extension MappingReader {
    /// A control's `group:`: a name that is not empty.
    func groupName(_ node: Node) -> String? {
        guard let text = string(node, "a group name") else { return nil }
        guard !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            error(node, "a group name cannot be empty")
            return nil
        }
        return text
    }

    /// `groups:` the order of the page's groups: distinct names, each the
    /// `group:` of some control, and every control's `group:` among them.
    func groups(_ node: Node, controls: [Node]) -> [String] {
        guard case .sequence(let items) = node else {
            expected("a list of group names", node)
            return []
        }
        var names: [String] = []
        var nodes: [Node] = []
        for item in items {
            guard let name = string(item, "a group name") else { continue }
            if names.contains(name) { error(item, "group '\(name)' is listed twice") } else { names.append(name); nodes.append(item) }
        }
        var used: Set<String> = []
        for control in controls {
            // (An empty name is reported where the control reads it.)
            guard let g = control["group"], case .scalar(let s) = g,
                  !s.string.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            used.insert(s.string)
            if !names.contains(s.string) {
                var message = "group '\(s.string)' is not in the file's 'groups:'"
                if let close = EditDistance.closest(to: s.string, among: names) { message += "; did you mean '\(close)'?" }
                error(g, message)
            }
        }
        for (item, name) in zip(nodes, names) where !used.contains(name) {
            error(item, "group '\(name)' has no control (give one 'group: \(name)')")
        }
        return names
    }
}

extension MappingReader {
    static let xyKeys = ["name", "kind", "group", "targets-x", "targets-y", "targets-touch"]

    /// `kind: xy`: a square pad on the page, read as its parts (`PadPart`):
    /// no MIDI source (a hardware XY pad sends two CCs: map them as two faders).
    func xyPad(_ node: Node, _ byKey: [String: (keyNode: Node, value: Node)], name: String) -> ([ControlDefinition], Node?, Bool) {
        let before = diagnostics.count
        for (key, entry) in byKey.sorted(by: { $0.key < $1.key }) where !Self.xyKeys.contains(key) {
            if key == "source" {
                error(entry.keyNode, "an xy pad has no MIDI source: it is played on the page (map a hardware XY pad's two CCs as two faders)")
            } else {
                error(entry.keyNode, "'\(key)' does not apply to an xy pad (it has targets-x, targets-y, targets-touch and group)")
            }
        }
        if byKey["targets-x"] == nil && byKey["targets-y"] == nil {
            error(node, "xy pad '\(name)' needs 'targets-x' or 'targets-y'")
        }
        var parts: [ControlDefinition] = []
        var touch: [TargetBinding] = []
        for (part, key) in [(PadPart.Part.x, "targets-x"), (.y, "targets-y")] {
            guard let t = byKey[key] else { continue }
            var axis = ControlDefinition(name: "\(name) \(part.rawValue)", kind: .fader, source: nil, softTakeover: false)
            axis.targets = targets(t.value, each: false).0
            axis.pad = PadPart(name: name, part: part)
            // A channel's note on an axis sounds while the pad is touched.
            for b in axis.targets { if case .channelNote(let c) = b.address { touch.append(TargetBinding(.channelGate(c))) } }
            parts.append(axis)
        }
        if let t = byKey["targets-touch"] { touch += targets(t.value, each: false).0 }
        var seen: Set<ParameterAddress> = []
        touch = touch.filter { seen.insert($0.address).inserted }
        if !touch.isEmpty {
            var press = ControlDefinition(name: "\(name) touch", kind: .button, source: nil, targets: touch)
            press.pad = PadPart(name: name, part: .touch)
            parts.append(press)
        }
        // The parts stay together on the page: the group given, else the x axis's.
        let shared = byKey["group"].flatMap { groupName($0.value) } ?? parts.first?.drivenGroup
        for i in parts.indices { parts[i].group = shared }
        return (parts, nil, diagnostics.count == before)
    }
}
