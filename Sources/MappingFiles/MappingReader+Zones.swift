import ControlDefinitions
import Foundation
import MIDI
import Parameters
import Rig
import Synchronization
import Yams

/// A mapping file's `zones:` (top level and in scenes): splits, layers,
/// transposition, velocity shaping and routing to external ports (docs/zones.md).
extension MappingReader {
    /// `zones:` a list of zones. Zones with mistakes are reported and left out.
    func zones(_ node: Node) -> [Zone] {
        guard case .sequence(let items) = node else {
            expected("a list of zones", node)
            return []
        }
        var result: [Zone] = []
        var lines: [String: Int] = [:]
        for item in items {
            let before = diagnostics.count
            guard let entries = fields(item, allowed: MappingKeys.zone, "a zone") else { continue }
            var zone = Zone(name: "", destinations: [])
            var named = false, routed = false
            var octaves = 0
            var unusableEffects: [(Node, String, String)] = []
            for (key, keyNode, value) in entries {
                switch key {
                case "name":
                    guard let text = string(value, "a zone name") else { continue }
                    named = true
                    if text.trimmingCharacters(in: .whitespaces).isEmpty {
                        error(value, "a zone name cannot be empty")
                    } else if let line = lines[text] {
                        error(value, "zone name '\(text)' is already used at line \(line)")
                    } else {
                        lines[text] = location(value).line
                    }
                    zone.name = text
                case "source":
                    if isNumberScalar(value) {
                        if let id = integer(value, in: 0...Int(UInt32.max), "source port ID") { zone.source = .id(SourceID(id)) }
                    } else if let text = string(value, "a source port name or ID") {
                        zone.source = .name(text)
                    }
                case "channels", "channel":
                    zone.channels = inputChannels(value)
                case "keys":
                    if let r = noteRange(value, "keys") { zone.keys = r }
                case "velocities":
                    if let r = noteRange(value, "velocities", numbersOnly: true) {
                        if r.lowerBound.value == 0 { error(value, "velocities start at 1 (a note-on at velocity 0 is a note-off)") } else { zone.velocities = r }
                    }
                case "messages":
                    zone.kinds = messageKinds(value)
                case "to":
                    routed = true
                    zone.destinations = destinations(value)
                case "transpose":
                    zone.transpose = integer(value, in: -127...127, "transpose (semitones)") ?? 0
                case "octaves":
                    octaves = integer(value, in: -10...10, "octaves") ?? 0
                case "velocity":
                    zone.velocity = velocityShape(value)
                case "cc":
                    zone.controllers = controllerMap(value)
                case "bend-range":
                    zone.bendRange = bendRange(value)
                case "midi-fx":
                    guard case .sequence(let uris) = value else {
                        expected("a list of LV2 plugin URIs", value)
                        continue
                    }
                    zone.midiFX = uris.compactMap { node in
                        guard let uri = string(node, "an LV2 plugin URI") else { return nil }
                        if let problem = ControlMapping.midiEffectProblem(uri) { unusableEffects.append((node, uri, problem)) }
                        return uri
                    }
                default:
                    _ = keyNode
                }
            }
            zone.transpose += 12 * octaves
            // Said once the zone's name is known (it may come after midi-fx:), at the URI.
            for (node, uri, problem) in unusableEffects { error(node, "zone '\(zone.name)', midi-fx \(uri): \(problem)") }
            if !named { error(item, "missing key 'name' in a zone") }
            if !routed { error(item, "zone '\(zone.name)' has no 'to:' (a channel 1...16, a port { port: NAME, channel: N }, or a list of them)") }
            if diagnostics.count == before { result.append(zone) }
        }
        return result
    }

    /// `channels:` of a zone: one input channel 1...16, a list of them, or `any`.
    func inputChannels(_ node: Node) -> Set<Channel>? {
        if case .scalar(let s) = node, node.tagName == .str, ["any", "all", "omni"].contains(s.string) { return nil }
        let items: [Node]
        if case .sequence(let list) = node { items = Array(list) } else { items = [node] }
        var set = Set<Channel>()
        for item in items {
            if let n = integer(item, in: 1...16, "channel") { set.insert(Channel(n - 1)) }
        }
        return set
    }

    /// `C-1..B2`, `48..127`, `C4` or `60`: a range of notes (or of velocities, by number only).
    func noteRange(_ node: Node, _ what: String, numbersOnly: Bool = false) -> ClosedRange<UInt7>? {
        if isNumberScalar(node) {
            guard let n = integer(node, in: 0...127, what) else { return nil }
            return UInt7(n)...UInt7(n)
        }
        guard let text = string(node, "a range LOW..HIGH") else { return nil }
        if numbersOnly {
            let parts = text.split(separator: "..", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, let lo = Int(parts[0]), let hi = Int(parts[1]) else {
                error(node, "\(what) is a range of numbers LOW..HIGH, e.g. 1..63; found '\(text)'")
                return nil
            }
            guard (0...127).contains(lo), (0...127).contains(hi) else {
                error(node, "\(what) \(text) is out of range 0...127")
                return nil
            }
            guard lo <= hi else {
                error(node, "\(what) range is backwards: \(lo) is above \(hi)")
                return nil
            }
            return UInt7(lo)...UInt7(hi)
        }
        // A number outside 0...127 is "out of range", not "unknown note".
        for part in text.split(separator: "..") {
            let p = part.trimmingCharacters(in: .whitespaces)
            if let n = Int(p), !(0...127).contains(n) {
                error(node, "key \(n) is out of range 0...127")
                return nil
            }
        }
        switch NoteName.parseRange(text) {
        case .success(let r): return r
        case .failure(let e):
            error(node, e.message)
            return nil
        }
    }

    /// `messages:` a list of `notes`, `cc`, `pitch-bend`, `pressure`, `program`.
    func messageKinds(_ node: Node) -> MessageKinds {
        let items: [Node]
        if case .sequence(let list) = node { items = Array(list) } else { items = [node] }
        var kinds: MessageKinds = []
        let names = MessageKinds.names.map(\.0)
        for item in items {
            guard let name = string(item, "a message kind") else { continue }
            guard let kind = MessageKinds.names.first(where: { $0.0 == name })?.1 else {
                var message = "unknown message kind '\(name)'"
                if let s = EditDistance.closest(to: name, among: names) { message += "; did you mean '\(s)'?" }
                error(item, message + " (one of \(names.joined(separator: ", ")))")
                continue
            }
            kinds.insert(kind)
        }
        if items.isEmpty { error(node, "'messages:' is empty; list at least one of \(names.joined(separator: ", "))") }
        return kinds
    }

    /// `to:` a channel 1...16, a port `{ port: NAME, channel: N }`, or a list of either.
    func destinations(_ node: Node) -> [Zone.Destination] {
        let items: [Node]
        if case .sequence(let list) = node {
            items = Array(list)
            if items.isEmpty { error(node, "'to:' is empty; give a channel 1...16, a port { port: NAME, channel: N }, or a list of them") }
        } else {
            items = [node]
        }
        var result: [Zone.Destination] = []
        for item in items {
            if case .mapping = item {
                guard let entries = fields(item, allowed: MappingKeys.port, "a port destination") else { continue }
                var name: String?, channel: Channel?
                for (key, _, v) in entries {
                    switch key {
                    case "port":
                        name = string(v, "a port name")
                        if name?.trimmingCharacters(in: .whitespaces).isEmpty == true { error(v, "a port name cannot be empty"); name = nil }
                    case "channel": channel = integer(v, in: 1...16, "channel").map { Channel($0 - 1) }
                    default: break
                    }
                }
                if entries.first(where: { $0.key == "port" }) == nil { error(item, "missing key 'port' in a port destination") }
                if entries.first(where: { $0.key == "channel" }) == nil { error(item, "missing key 'channel' in a port destination") }
                if let name, let channel { result.append(.port(name, channel: channel)) }
            } else if isNumberScalar(item) {
                if let n = integer(item, in: 1...16, "channel") { result.append(.channel(Channel(n - 1))) }
            } else {
                expected("a channel 1...16 or a port { port: NAME, channel: N }", item)
            }
        }
        return result
    }

    /// `velocity:` a number (fixed), `{ scale, offset }`, or `{ curve, shape | points }`.
    func velocityShape(_ node: Node) -> VelocityShape {
        if isNumberScalar(node) {
            guard let v = integer(node, in: 1...127, "fixed velocity") else { return .unchanged }
            return .fixed(UInt7(v))
        }
        guard let entries = fields(node, allowed: MappingKeys.velocity, "a velocity shape") else { return .unchanged }
        let byKey = Dictionary(entries.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        let linear = byKey["scale"] != nil || byKey["offset"] != nil
        if let fixed = byKey["fixed"] {
            if linear || byKey["curve"] != nil { error(fixed.keyNode, "a velocity shape is one of: fixed, scale + offset, or a curve") }
            return integer(fixed.value, in: 1...127, "fixed velocity").map { .fixed(UInt7($0)) } ?? .unchanged
        }
        if let c = byKey["curve"] {
            if linear { error(c.keyNode, "a velocity shape is one of: fixed, scale + offset, or a curve") }
            var shape: Double?
            if let s = byKey["shape"] { shape = number(s.value, in: -50...1000, "shape") }
            let curve = curve(c.value, shape: shape, shapeNode: byKey["shape"]?.value, points: byKey["points"]?.value)
            return .curve(VelocityCurve(name: Self.curveName(curve), shape: curve.apply))
        }
        if let s = byKey["shape"] { error(s.keyNode, "'shape' needs a 'curve' (exponential, logarithmic or s-curve)") }
        if let p = byKey["points"] { error(p.keyNode, "'points' needs 'curve: table'") }
        guard linear else {
            error(node, "a velocity shape needs 'fixed', 'scale'/'offset' or 'curve'")
            return .unchanged
        }
        let scale = byKey["scale"].flatMap { number($0.value, in: 0...10, "velocity scale") } ?? 1
        let offset = byKey["offset"].flatMap { number($0.value, in: -127...127, "velocity offset") } ?? 0
        return .linear(scale: scale, offset: offset)
    }

    static func curveName(_ curve: Curve) -> String {
        switch curve {
        case .linear: "linear"
        case .exponential(let k): "exponential \(format(k))"
        case .logarithmic(let k): "logarithmic \(format(k))"
        case .sCurve(let k): "s-curve \(format(k))"
        case .table(let points): "table " + points.map { "[\(format($0.x)), \(format($0.y))]" }.joined(separator: " ")
        }
    }

    /// `cc:` controller renumbering, `{ 1: 11, 7: drop }`.
    func controllerMap(_ node: Node) -> [UInt7: UInt7?] {
        guard case .mapping(let pairs) = node else {
            expected("a mapping from controller number to controller number or 'drop'", node)
            return [:]
        }
        var result: [UInt7: UInt7?] = [:]
        for (k, v) in pairs {
            guard let from = integer(k, in: 0...119, "controller") else { continue }
            if case .scalar(let s) = v, s.string == "drop" || v.tagName == .null {
                result[UInt7(from)] = .some(nil)
            } else if let to = integer(v, in: 0...119, "controller") {
                result[UInt7(from)] = UInt7(to)
            }
        }
        return result
    }

    /// `bend-range:` semitones (0...24), or `{ semitones, cents }`.
    func bendRange(_ node: Node) -> Zone.BendRange? {
        if isNumberScalar(node) { return integer(node, in: 0...24, "bend range (semitones)").map { .init(semitones: UInt7($0)) } }
        guard let entries = fields(node, allowed: ["semitones", "cents"], "a bend range") else { return nil }
        var range = Zone.BendRange(semitones: 2)
        for (key, _, v) in entries {
            if key == "semitones", let n = integer(v, in: 0...24, "bend range (semitones)") { range.semitones = UInt7(n) }
            if key == "cents", let n = integer(v, in: 0...99, "bend range (cents)") { range.cents = UInt7(n) }
        }
        return range
    }
}

/// A zone's `midi-fx:` as a mapping file names it, read before the file is
/// (`ControlMapping.midiEffects(path:)`): the plugins' controls must be
/// parameters by the time the file's targets are resolved.
public struct MappingMIDIEffects: Hashable, Sendable {
    /// The scene (its place in `scenes:` and its name) whose own `zones:` list the zone; nil: the top level's.
    public var scene: Int?
    public var sceneName: String?
    public var zone: String
    public var uris: [String]
    public init(scene: Int?, sceneName: String?, zone: String, uris: [String]) {
        self.scene = scene; self.sceneName = sceneName; self.zone = zone; self.uris = uris
    }

    /// Every zone of `mapping` (the top level's, then each scene's own) with `midi-fx`.
    public static func all(in mapping: ControlMapping) -> [MappingMIDIEffects] {
        var found = mapping.zones.filter { !$0.midiFX.isEmpty }.map { MappingMIDIEffects(scene: nil, sceneName: nil, zone: $0.name, uris: $0.midiFX) }
        for (s, scene) in mapping.scenes.enumerated() {
            for zone in scene.zones ?? [] where !zone.midiFX.isEmpty {
                found.append(MappingMIDIEffects(scene: s, sceneName: scene.name, zone: zone.name, uris: zone.midiFX))
            }
        }
        return found
    }
}

extension ControlMapping {
    private static let midiEffectCheck = Mutex<(@Sendable (String) -> String?)?>(nil)

    /// How a load checks each `midi-fx` URI (nil: usable; else the problem, said
    /// at the URI's line and column with the file's other mistakes). Set by a
    /// program that hosts plugins (`PluginHost.checkMIDIEffectsAtLoad()`);
    /// unset, URIs are read unchecked.
    public static func checkMIDIEffects(with check: @escaping @Sendable (String) -> String?) {
        midiEffectCheck.withLock { $0 = check }
    }

    /// The problem with `uri` as a `midi-fx` plugin, if a check is set and finds one.
    public static func midiEffectProblem(_ uri: String) -> String? {
        midiEffectCheck.withLock { $0 }?(uri)
    }

    /// A mapping file's zones with `midi-fx:` (the top level's, then each
    /// scene's own), read before the file is. Nothing is checked here; `load`
    /// reports every mistake.
    public static func midiEffects(path: String) -> [MappingMIDIEffects] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              case .mapping(let top)? = try? Yams.compose(yaml: text) else { return [] }
        func zones(_ node: Node?, scene: Int?, sceneName: String?) -> [MappingMIDIEffects] {
            guard case .sequence(let list)? = node else { return [] }
            return list.compactMap { item in
                guard case .mapping(let zone) = item, case .scalar(let name)? = zone["name"],
                      case .sequence(let uris)? = zone["midi-fx"] else { return nil }
                let found = uris.compactMap { node -> String? in
                    if case .scalar(let uri) = node, !uri.string.isEmpty { uri.string } else { nil }
                }
                return found.isEmpty ? nil : MappingMIDIEffects(scene: scene, sceneName: sceneName, zone: name.string, uris: found)
            }
        }
        var result = zones(top["zones"], scene: nil, sceneName: nil)
        if case .sequence(let scenes)? = top["scenes"] {
            for (s, scene) in scenes.enumerated() {
                guard case .mapping(let fields) = scene else { continue }
                let name: String? = if case .scalar(let n)? = fields["name"] { n.string } else { nil }
                result += zones(fields["zones"], scene: s, sceneName: name)
            }
        }
        return result
    }
}
