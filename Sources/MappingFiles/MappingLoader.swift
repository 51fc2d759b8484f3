import ControlDefinitions
import Foundation
import MIDI
import Parameters
import Yams

extension ControlMapping {
    /// Reads and checks a mapping file. Throws every mistake at once; returns
    /// a mapping only when there is none.
    public static func load(path: String, registry: ParameterRegistry = .standard,
                            presets: PresetLookup? = nil) throws(MappingError) -> ControlMapping
    {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw MappingError([MappingDiagnostic(SourceLocation(file: path, line: 0, column: 0),
                                                  "cannot read the file (\(Self.reason(error)))")])
        }
        return try parse(yaml: text, file: path, registry: registry, presets: presets)
    }

    /// Checks mapping text; `file` names it in diagnostics. Presets named by
    /// name are looked up with `presets`, else as `lookUpPresets(with:)` set.
    public static func parse(yaml: String, file: String = "<mapping>", registry: ParameterRegistry = .standard,
                             presets: PresetLookup? = nil) throws(MappingError) -> ControlMapping
    {
        let reader = MappingReader(file: file, registry: registry)
        reader.presetLookup = presets ?? presetLookup
        let mapping = reader.read(yaml)
        guard reader.diagnostics.isEmpty, let mapping else {
            throw MappingError(reader.diagnostics.sorted {
                ($0.location.line, $0.location.column) < ($1.location.line, $1.location.column)
            })
        }
        return mapping
    }

    static func reason(_ error: Error) -> String {
        let ns = error as NSError
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain,
            let code = POSIXErrorCode(rawValue: Int32(underlying.code))
        {
            return String(cString: strerror(code.rawValue))
        }
        return ns.localizedDescription
    }
}

/// The keys a mapping file may use, in one place (for "did you mean" and the README).
enum MappingKeys {
    static let top = ["name", "description", "port", "channel", "channels", "inserts", "tracks", "controls", "scenes", "groups", "zones"]
    static let scene = ["name", "channels", "set", "controls", "zones"]
    static let zone = [
        "name", "source", "channels", "channel", "keys", "velocities", "messages", "to", "transpose", "octaves", "velocity",
        "cc", "bend-range", "midi-fx",
    ]
    static let port = ["port", "channel"]
    static let velocity = ["fixed", "scale", "offset", "curve", "shape", "points"]
    static let channelSetup = ["soundfont", "bank", "program", "instrument", "lv2"]
    static let control = [
        "name", "kind", "source", "targets", "curve", "shape", "points", "invert", "steps", "values", "range",
        "unit", "default", "soft-takeover", "encoding", "acceleration", "resolution", "follow-value", "shows",
        "feedback", "group", "targets-x", "targets-y", "targets-touch",
    ]
    static let sourceMessages = ["cc", "cc14", "nrpn", "rpn", "note", "program-change", "pitch-bend", "channel-pressure"]
    static let source = sourceMessages + ["channel", "order", "bits"]
    static let target = ["address", "range"]
    static let curves = ["linear", "exponential", "logarithmic", "s-curve", "table"]
}

/// Walks a composed YAML tree, collecting every mistake with its mark.
final class MappingReader {
    let file: String
    let registry: ParameterRegistry
    private(set) var diagnostics: [MappingDiagnostic] = []
    /// Presets named by name (`program: "Warm Pad"`), resolved once the whole file is read.
    var presetNames: [PresetNameUse] = []
    /// How preset names are looked up (nil: they cannot be).
    var presetLookup: ControlMapping.PresetLookup?
    /// The scene whose `channels:` are being read (its place in `scenes:`), nil at the top level.
    var sceneBeingRead: Int?

    init(file: String, registry: ParameterRegistry) {
        self.file = file
        self.registry = registry
    }

    // MARK: Diagnostics

    func location(_ node: Node?, fallback: Mark? = nil) -> SourceLocation {
        let mark = node?.mark ?? fallback
        return SourceLocation(file: file, line: mark?.line ?? 1, column: mark?.column ?? 1)
    }

    func error(_ node: Node?, _ message: String) {
        diagnostics.append(MappingDiagnostic(location(node), message))
    }

    func error(at location: SourceLocation, _ message: String) {
        diagnostics.append(MappingDiagnostic(location, message))
    }

    // MARK: Typed reads

    static func describe(_ node: Node) -> String {
        switch node {
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        case .alias: return "an alias"
        case .scalar(let s):
            switch node.tagName {
            case .null: return "nothing"
            case .bool: return "a boolean"
            case .int: return "an integer"
            case .float: return "a number"
            default:
                let text = s.string.count > 40 ? String(s.string.prefix(40)) + "…" : s.string
                return "'\(text)'"
            }
        }
    }

    func expected(_ what: String, _ node: Node) {
        error(node, "expected \(what), found \(Self.describe(node))")
    }

    func isNumberScalar(_ node: Node) -> Bool {
        guard case .scalar = node else { return false }
        return node.tagName == .int || node.tagName == .float
    }

    func string(_ node: Node, _ what: String = "a string") -> String? {
        guard case .scalar(let s) = node, node.tagName != .null else {
            expected(what, node)
            return nil
        }
        return s.string
    }

    func integer(_ node: Node, in range: ClosedRange<Int>, _ what: String) -> Int? {
        guard case .scalar = node, node.tagName == .int, let value = node.int else {
            if isNumberScalar(node) {
                error(node, "\(what) must be a whole number, found \(node.scalar?.string ?? "")")
            } else {
                expected("an integer (\(what))", node)
            }
            return nil
        }
        guard range.contains(value) else {
            error(node, "\(what) \(value) is out of range \(range.lowerBound)...\(range.upperBound)")
            return nil
        }
        return value
    }

    func number(_ node: Node, in range: ClosedRange<Double>? = nil, _ what: String) -> Double? {
        guard isNumberScalar(node), let value = node.float ?? node.int.map(Double.init), value.isFinite else {
            expected("a number (\(what))", node)
            return nil
        }
        if let range, !range.contains(value) {
            error(node, "\(what) \(Self.format(value)) is out of range \(Self.format(range.lowerBound))...\(Self.format(range.upperBound))")
            return nil
        }
        return value
    }

    func bool(_ node: Node, _ what: String) -> Bool? {
        guard case .scalar = node, node.tagName == .bool, let value = node.bool else {
            expected("true or false (\(what))", node)
            return nil
        }
        return value
    }

    static func format(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(v)
    }

    /// The pairs of a mapping node whose keys are all known; reports the others.
    func fields(_ node: Node, allowed: [String], _ what: String) -> [(key: String, keyNode: Node, value: Node)]? {
        guard case .mapping(let mapping) = node else {
            expected("a mapping (\(what))", node)
            return nil
        }
        var result: [(String, Node, Node)] = []
        for (keyNode, value) in mapping {
            guard case .scalar(let k) = keyNode else {
                error(keyNode, "expected a key name in \(what), found \(Self.describe(keyNode))")
                continue
            }
            let key = k.string
            guard allowed.contains(key) else {
                var message = "unknown key '\(key)' in \(what)"
                if let suggestion = EditDistance.closest(to: key, among: allowed) {
                    message += "; did you mean '\(suggestion)'?"
                }
                error(keyNode, message)
                continue
            }
            result.append((key, keyNode, value))
        }
        return result
    }

    // MARK: Document

    func read(_ yaml: String) -> ControlMapping? {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch let e as YamlError {
            reportYAML(e)
            return nil
        } catch let other {
            error(at: SourceLocation(file: file, line: 1, column: 1), "cannot read YAML (\(other))")
            return nil
        }
        guard let root else {
            error(at: SourceLocation(file: file, line: 1, column: 1), "the file is empty; expected a mapping with 'controls'")
            return nil
        }
        guard let top = fields(root, allowed: MappingKeys.top, "the mapping file") else { return nil }
        var mapping = ControlMapping(file: file)
        var defaultChannel = ChannelChoice.any
        var controlsNode: Node?
        var scenesNode: Node?
        var groupsNode: Node?
        var zonesGiven = false
        for (key, _, value) in top {
            switch key {
            case "name": mapping.name = string(value)
            case "description": mapping.description = string(value)
            case "port": mapping.port = string(value, "a port name pattern")
            case "channel": defaultChannel = channel(value) ?? .any
            case "channels": mapping.channels = channelSetups(value)
            case "inserts": mapping.inserts = inserts(value)
            case "controls": controlsNode = value
            case "scenes": scenesNode = value
            case "tracks": mapping.tracks = tracks(value)
            case "groups": groupsNode = value
            case "zones": mapping.zones = zones(value); zonesGiven = true
            default: break
            }
        }
        // A rig of zones needs no controls.
        guard let controlsNode else {
            if zonesGiven {
                if let scenesNode { mapping.scenes = scenes(scenesNode, controls: []) }
                resolvePresetNames(in: &mapping)
                return mapping
            }
            error(root, "missing key 'controls' (or 'zones')")
            return nil
        }
        guard case .sequence(let list) = controlsNode else {
            expected("a list of controls", controlsNode)
            return nil
        }
        // Controls with mistakes still take part in the checks for duplicate
        // names and sources, so one run reports those too.
        var all: [Checked] = []
        for item in list {
            guard let (definitions, sourceNode, ok) = control(item, defaultChannel: defaultChannel) else { continue }
            for definition in definitions {
                all.append(Checked(definition: definition, location: location(item), sourceNode: sourceNode, item: item))
                if ok {
                    mapping.controls.append(definition)
                    mapping.locations.append(location(item))
                }
            }
        }
        checkConflicts(all)
        if let groupsNode { mapping.groups = groups(groupsNode, controls: Array(list)) }
        if let scenesNode { mapping.scenes = scenes(scenesNode, controls: all.map(\.definition)) }
        // A button's release (0) would switch to the first scene: scenes are chosen by selectors.
        for entry in all where entry.definition.targets.contains(where: { $0.address == .sceneSelect }) {
            if entry.definition.kind != .selector {
                error(at: entry.location, "scene.select is driven by a selector (values: [0, 1, …] for the scenes in order; a button or pad source steps to the next), not by \(entry.definition.kind.withArticle)")
            } else if scenesNode == nil {
                error(at: entry.location, "control '\(entry.definition.name)' targets scene.select, but the file has no 'scenes:'")
            } else {
                checkSceneReach(entry, scenes: mapping.scenes.map(\.name))
            }
        }
        for k in mapping.controls.indices { mapping.controls[k].stepThroughScenes(mapping.scenes.count) }
        resolvePresetNames(in: &mapping)
        return mapping
    }

    func reportYAML(_ e: YamlError) {
        let here = SourceLocation(file: file, line: 1, column: 1)
        func at(_ mark: Mark) -> SourceLocation { SourceLocation(file: file, line: mark.line, column: mark.column) }
        switch e {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let extra = context.map { " (\($0.text) at \($0.mark.line):\($0.mark.column))" } ?? ""
            error(at: at(mark), "invalid YAML: \(problem)\(extra)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            let names = duplicates.map { "'\($0)'" }.joined(separator: ", ")
            error(at: at(context.mark), "duplicate key \(names) in one mapping")
        case .reader(let problem, let offset, _, let yaml):
            var loc = here
            if let offset {
                let prefix = yaml.utf8.prefix(offset)
                let line = prefix.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
                let column = prefix.reversed().firstIndex(of: UInt8(ascii: "\n")).map { prefix.distance(from: $0.base, to: prefix.endIndex) + 1 } ?? prefix.count + 1
                loc = SourceLocation(file: file, line: line, column: column)
            }
            error(at: loc, "invalid YAML: \(problem)")
        default:
            error(at: here, "invalid YAML: \(e)")
        }
    }
}

extension Node {
    /// The resolved tag's name (Yams keeps `Tag.name` internal).
    var tagName: Tag.Name { Tag.Name(rawValue: tag.rawValue) }
}

extension ControlKind {
    /// "a fader", "an encoder".
    var withArticle: String { (rawValue.first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + rawValue }
}
