import Foundation
import MIDI
import Parameters
import Yams

extension ControlMapping {
    /// Reads and checks a mapping file. Throws every mistake at once; returns
    /// a mapping only when there is none.
    public static func load(path: String, registry: ParameterRegistry = .standard) throws(MappingError)
        -> ControlMapping
    {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw MappingError([MappingDiagnostic(SourceLocation(file: path, line: 0, column: 0),
                                                  "cannot read the file (\(Self.reason(error)))")])
        }
        return try parse(yaml: text, file: path, registry: registry)
    }

    /// Checks mapping text; `file` names it in diagnostics.
    public static func parse(yaml: String, file: String = "<mapping>", registry: ParameterRegistry = .standard)
        throws(MappingError) -> ControlMapping
    {
        let reader = MappingReader(file: file, registry: registry)
        let mapping = reader.read(yaml)
        guard reader.diagnostics.isEmpty, let mapping else {
            throw MappingError(reader.diagnostics.sorted {
                ($0.location.line, $0.location.column) < ($1.location.line, $1.location.column)
            })
        }
        return mapping
    }

    private static func reason(_ error: Error) -> String {
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
    static let top = ["name", "description", "port", "channel", "channels", "tracks", "controls", "scenes"]
    static let scene = ["name", "channels", "set", "controls"]
    static let channelSetup = ["soundfont", "bank", "program", "instrument"]
    static let control = [
        "name", "kind", "source", "targets", "curve", "shape", "points", "invert", "steps", "values", "range",
        "unit", "default", "soft-takeover", "encoding", "acceleration", "resolution", "follow-value", "shows",
        "feedback",
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

    init(file: String, registry: ParameterRegistry) {
        self.file = file
        self.registry = registry
    }

    // MARK: Diagnostics

    private func location(_ node: Node?, fallback: Mark? = nil) -> SourceLocation {
        let mark = node?.mark ?? fallback
        return SourceLocation(file: file, line: mark?.line ?? 1, column: mark?.column ?? 1)
    }

    private func error(_ node: Node?, _ message: String) {
        diagnostics.append(MappingDiagnostic(location(node), message))
    }

    private func error(at location: SourceLocation, _ message: String) {
        diagnostics.append(MappingDiagnostic(location, message))
    }

    // MARK: Typed reads

    private static func describe(_ node: Node) -> String {
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

    private func expected(_ what: String, _ node: Node) {
        error(node, "expected \(what), found \(Self.describe(node))")
    }

    private func isNumberScalar(_ node: Node) -> Bool {
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
        for (key, _, value) in top {
            switch key {
            case "name": mapping.name = string(value)
            case "description": mapping.description = string(value)
            case "port": mapping.port = string(value, "a port name pattern")
            case "channel": defaultChannel = channel(value) ?? .any
            case "channels": mapping.channels = channelSetups(value)
            case "controls": controlsNode = value
            case "scenes": scenesNode = value
            case "tracks": mapping.tracks = tracks(value)
            default: break
            }
        }
        guard let controlsNode else {
            error(root, "missing key 'controls'")
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
                all.append(Checked(definition: definition, location: location(item), sourceNode: sourceNode))
                if ok {
                    mapping.controls.append(definition)
                    mapping.locations.append(location(item))
                }
            }
        }
        checkConflicts(all)
        if let scenesNode { mapping.scenes = scenes(scenesNode, controls: all.map(\.definition)) }
        // A button's release (0) would switch to the first scene: scenes are chosen by selectors.
        for entry in all where entry.definition.targets.contains(where: { $0.address == .sceneSelect }) {
            if entry.definition.kind != .selector {
                error(at: entry.location, "scene.select is driven by a selector (values: [0, 1, …] for the scenes in order; a button or pad source steps to the next), not by \(entry.definition.kind.withArticle)")
            } else if scenesNode == nil {
                error(at: entry.location, "control '\(entry.definition.name)' targets scene.select, but the file has no 'scenes:'")
            }
        }
        return mapping
    }

    private func reportYAML(_ e: YamlError) {
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

    // MARK: Tracks

    /// `tracks:` a list of audio files, relative to the mapping file's folder; each must exist.
    private func tracks(_ node: Node) -> [String] {
        guard case .sequence(let list) = node else {
            expected("a list of audio files", node)
            return []
        }
        if list.count > ControlMapping.maxTracks {
            error(node, "at most \(ControlMapping.maxTracks) tracks, found \(list.count)")
        }
        let folder = (file as NSString).deletingLastPathComponent
        var paths: [String] = []
        for item in list {
            guard let name = string(item, "an audio file name") else { continue }
            let path = name.hasPrefix("/") || folder.isEmpty ? name : folder + "/" + name
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue else {
                error(item, "track file '\(name)' not found (looked for \(path); paths are relative to the mapping file)")
                continue
            }
            paths.append(path)
        }
        return paths
    }

    // MARK: Channels

    /// A source's channel as written: one channel, any channel, or each
    /// channel (the control is repeated for channels 1...16).
    enum ChannelChoice: Equatable {
        case one(Channel)
        case any
        case each

        var channel: Channel? {
            if case .one(let c) = self { return c }
            return nil
        }
    }

    /// 1...16, `any` or `each`.
    private func channel(_ node: Node) -> ChannelChoice? {
        if case .scalar(let s) = node, node.tagName == .str {
            switch s.string {
            case "any", "all", "omni": return .any
            case "each": return .each
            default: break
            }
        }
        guard isNumberScalar(node) else {
            expected("a MIDI channel 1...16, 'any' or 'each'", node)
            return nil
        }
        guard let n = integer(node, in: 1...16, "channel") else { return nil }
        return .one(Channel(n - 1))
    }

    private func channelSetups(_ node: Node) -> [ChannelSetup] {
        guard case .mapping(let mapping) = node else {
            expected("a mapping from channel (1...16) to its set-up", node)
            return []
        }
        var result: [ChannelSetup] = []
        for (keyNode, value) in mapping {
            guard let n = integer(keyNode, in: 1...16, "channel") else { continue }
            var setup = ChannelSetup(channel: Channel(n - 1))
            guard let entries = fields(value, allowed: MappingKeys.channelSetup, "channel \(n) set-up") else { continue }
            for (key, _, v) in entries {
                switch key {
                case "soundfont": setup.soundFont = string(v, "a SoundFont file name")
                case "bank": setup.bank = integer(v, in: 0...16383, "bank")
                case "program": setup.program = integer(v, in: 0...127, "program").map { UInt7($0) }
                case "instrument":
                    guard let name = string(v, "an instrument name") else { break }
                    if let instrument = ChannelInstrument(rawValue: name) {
                        setup.instrument = instrument
                    } else {
                        let names = ChannelInstrument.allCases.map(\.rawValue).joined(separator: ", ")
                        error(v, "unknown instrument '\(name)' (instruments: \(names))")
                    }
                default: break
                }
            }
            result.append(setup)
        }
        return result.sorted { $0.channel < $1.channel }
    }

    // MARK: Scenes

    /// `scenes:`: a list of `{ name, channels, set, controls }`, checked against the controls read.
    private func scenes(_ node: Node, controls: [ControlDefinition]) -> [Scene] {
        guard case .sequence(let items) = node else {
            expected("a list of scenes", node)
            return []
        }
        var result: [Scene] = []
        var lines: [String: Int] = [:]
        let byName = Dictionary(controls.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for item in items {
            guard let entries = fields(item, allowed: MappingKeys.scene, "a scene") else { continue }
            var scene = Scene(name: "", location: location(item))
            var named = false
            for (key, keyNode, value) in entries {
                switch key {
                case "name":
                    guard let text = string(value, "a scene name") else { continue }
                    named = true
                    if text.trimmingCharacters(in: .whitespaces).isEmpty {
                        error(value, "a scene name cannot be empty")
                    } else if let line = lines[text] {
                        error(value, "scene name '\(text)' is already used at line \(line)")
                    } else {
                        lines[text] = location(value).line
                    }
                    scene.name = text
                case "channels":
                    scene.channels = sceneChannels(value)
                case "set":
                    guard case .mapping(let pairs) = value else {
                        expected("a mapping from parameter address to value", value)
                        continue
                    }
                    for (k, v) in pairs {
                        guard let text = string(k, "a parameter address"), let a = address(text, k) else { continue }
                        if a == .sceneSelect {
                            error(k, "a scene cannot select a scene")
                            continue
                        }
                        let r = registry.info(for: a).range
                        guard let n = number(v, in: r, "\(a)") else { continue }
                        scene.settings.append(Scene.Setting(a, n))
                    }
                case "controls":
                    guard case .mapping(let pairs) = value else {
                        expected("a mapping from control name to value", value)
                        continue
                    }
                    for (k, v) in pairs {
                        guard let name = string(k, "a control name") else { continue }
                        guard let def = byName[name] else {
                            var message = "no control named '\(name)' in this mapping"
                            if let s = EditDistance.closest(to: name, among: Array(byName.keys).sorted()) {
                                message += "; did you mean '\(s)'?"
                            }
                            error(k, message)
                            continue
                        }
                        if def.kind == .readout {
                            error(k, "'\(name)' is a readout; the engine sets it")
                            continue
                        }
                        guard let n = number(v, in: -1e9...1e9, "a control value") else { continue }
                        scene.controls.append((name, n))
                    }
                default:
                    _ = keyNode
                }
            }
            if !named { error(item, "missing key 'name' in a scene") }
            result.append(scene)
        }
        return result
    }

    /// A scene's `channels:`: presets chosen by bank select and program change
    /// from the fonts already loaded, so no SoundFont and no bank above 127
    /// (except 128, the percussion bank, on channel 10).
    private func sceneChannels(_ node: Node) -> [ChannelSetup] {
        guard case .mapping(let mapping) = node else {
            expected("a mapping from channel (1...16) to its preset", node)
            return []
        }
        var result: [ChannelSetup] = []
        for (keyNode, value) in mapping {
            guard let n = integer(keyNode, in: 1...16, "channel") else { continue }
            var setup = ChannelSetup(channel: Channel(n - 1))
            guard let entries = fields(value, allowed: MappingKeys.channelSetup, "channel \(n) preset") else { continue }
            for (key, keyNode, v) in entries {
                switch key {
                case "soundfont":
                    error(keyNode, "a scene cannot change a channel's SoundFont (fonts load once, at start); give it in the top-level 'channels:' and choose its presets here by bank and program")
                case "bank":
                    guard let bank = integer(v, in: 0...16383, "bank") else { continue }
                    if bank > 127 && !(bank == 128 && n == 10) {
                        error(v, "a scene selects banks 0...127 (bank select, CC 0), or 128 on channel 10; found \(bank)")
                        continue
                    }
                    setup.bank = bank
                case "program": setup.program = integer(v, in: 0...127, "program").map { UInt7($0) }
                default: break
                }
            }
            result.append(setup)
        }
        return result.sorted { $0.channel < $1.channel }
    }

    // MARK: Controls

    /// A control read from the file, with or without mistakes, for the conflict checks.
    struct Checked {
        var definition: ControlDefinition
        var location: SourceLocation
        var sourceNode: Node?
    }

    /// The control(s) an item describes, and whether it was free of mistakes.
    private func control(_ node: Node, defaultChannel: ChannelChoice) -> ([ControlDefinition], Node?, Bool)? {
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
                kind = ControlKind(rawValue: text)
                if kind == nil {
                    var message = "unknown control kind '\(text)'"
                    if let s = EditDistance.closest(to: text, among: ControlKind.allCases.map(\.rawValue)) {
                        message += "; did you mean '\(s)'?"
                    } else {
                        message += " (one of \(ControlKind.allCases.map(\.rawValue).joined(separator: ", ")))"
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
        if let s = byKey["shows"], let text = string(s.value, "a parameter address") {
            definition.readoutParameter = address(text, s.value)
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

    private func range(_ node: Node, _ what: String) -> ValueRange? {
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

    private func curve(_ node: Node, shape: Double?, shapeNode: Node?, points: Node?) -> Curve {
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

    private func tablePoints(_ node: Node) -> [Curve.Point] {
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

    // MARK: Sources

    private func source(_ node: Node, defaultChannel: ChannelChoice, kind: ControlKind?)
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

    private func parameterNumber(_ node: Node, _ key: String) -> UInt14? {
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
    private func checked(_ source: ControlSource, kind: ControlKind?, node: Node) -> ControlSource? {
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

    // MARK: Targets

    private func address(_ text: String, _ node: Node) -> ParameterAddress? {
        switch registry.resolve(text) {
        case .success(let a): return a
        case .failure(let unknown):
            var message = "unknown target '\(text)'"
            if let s = unknown.suggestion { message += "; did you mean '\(s)'?" }
            error(node, message)
            return nil
        }
    }

    /// The targets, and for each its `*` template (with `channel: each`) or nil.
    private func targets(_ node: Node, each: Bool) -> ([TargetBinding], [String?]) {
        let items: [Node]
        switch node {
        case .sequence(let list): items = Array(list)
        case .scalar, .mapping: items = [node]
        default:
            expected("a list of targets", node)
            return ([], [])
        }
        if items.isEmpty { error(node, "a control needs at least one target") }
        var result: [TargetBinding] = []
        var templates: [String?] = []
        var seen: Set<ParameterAddress> = []
        for item in items {
            var binding: TargetBinding?
            var template: String?
            if case .mapping = item {
                guard let entries = fields(item, allowed: MappingKeys.target, "a target") else { continue }
                var addressValue: Node?
                var rangeValue: Node?
                for (key, _, value) in entries {
                    if key == "address" { addressValue = value } else { rangeValue = value }
                }
                guard let addressValue else {
                    error(item, "missing key 'address' in a target")
                    continue
                }
                guard let text = string(addressValue, "a parameter address"),
                    let a = templateAddress(text, addressValue, each: each, template: &template)
                else { continue }
                binding = TargetBinding(a)
                if let rangeValue, let r = range(rangeValue, "target range") {
                    let info = registry.info(for: a)
                    if r.lower < info.range.lowerBound - 1e-9 || r.upper > info.range.upperBound + 1e-9 {
                        error(rangeValue, "range \(Self.format(r.from))...\(Self.format(r.to)) is outside \(a)'s range \(Self.format(info.range.lowerBound))...\(Self.format(info.range.upperBound))")
                        continue
                    }
                    binding?.range = r
                }
            } else if let text = string(item, "a parameter address") {
                guard let a = templateAddress(text, item, each: each, template: &template) else { continue }
                binding = TargetBinding(a)
            }
            guard let binding else { continue }
            if !seen.insert(binding.address).inserted {
                error(item, "target '\(binding.address)' is listed twice")
                continue
            }
            result.append(binding)
            templates.append(template)
        }
        return (result, templates)
    }

    /// An address that may hold `*` for the channel when the source has `channel: each`.
    private func templateAddress(_ text: String, _ node: Node, each: Bool, template: inout String?) -> ParameterAddress? {
        guard text.contains("*") else { return address(text, node) }
        guard each else {
            error(node, "'*' in '\(text)' stands for the source's channel; it needs 'channel: each' in the source")
            return nil
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, parts.filter({ $0.contains("*") }) == ["*"], parts[1] == "*" else {
            error(node, "'*' may only stand for the channel, as in strip.*.gain or channel.*.cc.7")
            return nil
        }
        guard let a = address(text.replacingOccurrences(of: "*", with: "1"), node) else { return nil }
        template = text
        return a
    }

    // MARK: Conflicts

    private func checkConflicts(_ all: [Checked]) {
        var names: [String: Int] = [:]
        for (i, entry) in all.enumerated() where !entry.definition.name.isEmpty {
            if let j = names[entry.definition.name] {
                error(at: entry.location, "control name '\(entry.definition.name)' is already used at line \(all[j].location.line)")
            } else {
                names[entry.definition.name] = i
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

extension Node {
    /// The resolved tag's name (Yams keeps `Tag.name` internal).
    fileprivate var tagName: Tag.Name { Tag.Name(rawValue: tag.rawValue) }
}

extension ControlKind {
    /// "a fader", "an encoder".
    fileprivate var withArticle: String { (rawValue.first.map { "aeiou".contains($0) } ?? false ? "an " : "a ") + rawValue }
}
