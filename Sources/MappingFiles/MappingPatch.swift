import ControlDefinitions
import Foundation
import MIDI
import Yams

/// Edits to a mapping file's text that keep the user's comments and layout:
/// MIDI learn changes one `source:` line or adds one control at the end of
/// `controls:`, and leaves every other character alone. The YAML tree (Yams)
/// is only read, to find where things are; it is never written back.
public enum MappingPatch {
    /// Why a patch could not be made (the text is left as it was).
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        public var message: String
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// One `key: value` line of a new control, value already in YAML.
    public typealias Field = (key: String, value: String)

    // MARK: - Setting a control's source

    /// The text with control `name`'s `source:` replaced by `source` (or
    /// inserted after its `name:` when it has none). A control that
    /// `channel: each` repeats (shown as "Volume (ch 3)") is found by its name
    /// in the file and keeps listening on each channel.
    public static func settingSource(_ source: ControlSource, ofControl name: String, in text: String)
        throws(Failure) -> String
    {
        let doc = try Document(text)
        var found = doc.control(named: name)
        var each = false
        if found == nil, let base = eachBaseName(name), let item = doc.control(named: base) {
            found = item
            each = true
        }
        guard let item = found, case .mapping(let pairs) = item else {
            throw Failure("no control named '\(name)' in the file")
        }
        // A control inside a source or the file's default may already say `channel: each`.
        if let sourceNode = pairs["source"], case .mapping(let s) = sourceNode, s["channel"]?.string == "each" {
            each = true
        }
        let value = sourceText(source, defaultChannel: doc.defaultChannel, each: each)
        var lines = Lines(text)
        if let keyNode = pairs.keys.first(where: { $0.string == "source" }), let sourceNode = pairs["source"] {
            try lines.replaceValue(key: keyNode, value: sourceNode, with: value)
        } else if let mark = item.mark, lines.character(line: mark.line, column: mark.column) == "{" {
            // `- { name: X, kind: fader, ... }`: the new pair goes first inside the braces.
            let spaced = lines.character(line: mark.line, column: mark.column + 1) == " "
            lines.insert(spaced ? " source: \(value)," : "source: \(value), ", atLine: mark.line, column: mark.column + 1)
        } else {
            guard let nameKey = pairs.keys.first(where: { $0.string == "name" }), let mark = nameKey.mark
            else { throw Failure("cannot find control '\(name)' in the text") }
            let end = lines.lastLine(ofValueAt: pairs["name"]!, keyColumn: mark.column)
            lines.insertLine(String(repeating: " ", count: mark.column - 1) + "source: \(value)", after: end)
        }
        return lines.text
    }

    // MARK: - Adding a control

    /// The text with a new control appended at the end of `controls:`, in the
    /// file's own indentation (and blank lines between controls, if it uses them).
    public static func appendingControl(_ fields: [Field], to text: String) throws(Failure) -> String {
        let doc = try Document(text)
        guard let (keyNode, controls) = doc.topPair("controls") else {
            throw Failure("the file has no 'controls:' list")
        }
        var lines = Lines(text)
        let keyMark = keyNode.mark.map { (line: $0.line, column: $0.column) } ?? (line: 1, column: 1)
        switch controls {
        case .sequence(let items) where !items.isEmpty && !lines.opensFlow(controls):
            let first = items[0], last = items[items.count - 1]
            guard let firstMark = first.mark, let lastMark = last.mark else { throw Failure("cannot place a control") }
            // The dash of the first item sets the indentation; its first key, the keys'.
            let dashColumn = lines.dashColumn(line: firstMark.line, before: firstMark.column) ?? max(1, firstMark.column - 2)
            let keyOffset = lines.opensFlow(first) ? 2 : firstMark.column - dashColumn
            let spaced = items.count >= 2 && items[1].mark.map { lines.isBlank(($0.line) - 1) } == true
            let end = lines.lastLine(ofItemAt: lastMark.line, dashColumn: dashColumn)
            var block = spaced ? [""] : []
            block += entry(fields, dashColumn: dashColumn, keyOffset: keyOffset)
            lines.insertLines(block, after: end)
        case .sequence(let items) where items.isEmpty && lines.opensFlow(controls):
            // `controls: []`: the brackets go, a block list follows.
            guard let mark = controls.mark else { throw Failure("cannot place a control") }
            lines.removeFlowBrackets(line: mark.line, column: mark.column)
            lines.insertLines(entry(fields, dashColumn: keyMark.column + 2, keyOffset: 2), after: mark.line)
        case .scalar where controls.isNullScalar:
            lines.insertLines(entry(fields, dashColumn: keyMark.column + 2, keyOffset: 2), after: keyMark.line)
        default:
            throw Failure("'controls:' is not a block list; add the control by hand")
        }
        return lines.text
    }

    /// `- key: value` lines with the dash at `dashColumn` (1-based) and keys at `dashColumn + keyOffset`.
    private static func entry(_ fields: [Field], dashColumn: Int, keyOffset: Int) -> [String] {
        fields.enumerated().map { i, field in
            let indent = String(repeating: " ", count: dashColumn - 1)
            let lead = i == 0 ? "-" + String(repeating: " ", count: max(1, keyOffset - 1)) : String(repeating: " ", count: keyOffset)
            return indent + lead + "\(field.key): \(field.value)"
        }
    }

    // MARK: - Saving a scene

    /// The text with scene `name` saved in `scenes:`: `- name: NAME` then
    /// `fields`, and the `zones:` of scene `zonesOf` copied as written (its
    /// comments too). A scene of that name is replaced where it stands (its own
    /// lines only); else the scene goes at the end of `scenes:`, which is added
    /// at the end of the file when there is none. Everything else is left as it was.
    ///
    /// The replaced scene's comments go with its keys (`SceneComments`): those
    /// of a key the new scene still has are kept, the rest are dropped.
    public static func savingScene(_ name: String, fields: [Field], zonesOf: String? = nil,
                                   in text: String) throws(Failure) -> String {
        let doc = try Document(text)
        var lines = Lines(text)
        var zones: (lines: [String], keyColumn: Int)?
        if let zonesOf { zones = try zonesLines(ofScene: zonesOf, in: doc, lines: lines) }
        let all = [("name", scalar(name))] + fields
        guard let (keyNode, scenes) = doc.topPair("scenes") else {
            // After the file's last line that holds anything, a blank line between.
            var last = lines.lines.count
            while last > 0 && lines.isBlank(last) { last -= 1 }
            let block = (last > 0 ? [""] : []) + ["scenes:"] + entry(all, dashColumn: 3, keyOffset: 2) + reindented(zones, keyColumn: 5)
            lines.insertLines(block, after: last)
            return lines.text
        }
        let keyMark = keyNode.mark.map { (line: $0.line, column: $0.column) } ?? (line: 1, column: 1)
        switch scenes {
        case .sequence(let items) where !items.isEmpty && !lines.opensFlow(scenes):
            guard let firstMark = items[0].mark else { throw Failure("cannot place a scene") }
            let dashColumn = lines.dashColumn(line: firstMark.line, before: firstMark.column) ?? max(1, firstMark.column - 2)
            let keyOffset = lines.opensFlow(items[0]) ? 2 : firstMark.column - dashColumn
            let block = entry(all, dashColumn: dashColumn, keyOffset: keyOffset)
                + reindented(zones, keyColumn: dashColumn + keyOffset)
            if let old = items.first(where: { item in
                if case .mapping(let pairs) = item { return pairs["name"]?.string == name }
                return false
            }), let mark = old.mark {
                let dashLine = mark.line
                guard lines.dashColumn(line: dashLine, before: mark.column) == dashColumn else {
                    throw Failure("scene '\(name)' is not laid out as the others; save it under another name")
                }
                let end = lines.lastLine(ofItemAt: dashLine, dashColumn: dashColumn)
                let comments = SceneComments(of: old, lines: lines, through: end, zonesCopied: zonesOf == name)
                let keys = all.map(\.key) + (zones == nil ? [] : ["zones"])
                let commented = comments.placed(in: block, keys: keys, keyColumn: dashColumn + keyOffset)
                lines.removeLines(dashLine...end)
                lines.insertLines(commented, after: dashLine - 1)
            } else {
                guard let lastMark = items[items.count - 1].mark else { throw Failure("cannot place a scene") }
                let spaced = items.count >= 2 && items[1].mark.map { lines.isBlank(($0.line) - 1) } == true
                let end = lines.lastLine(ofItemAt: lastMark.line, dashColumn: dashColumn)
                lines.insertLines((spaced ? [""] : []) + block, after: end)
            }
        case .sequence(let items) where items.isEmpty && lines.opensFlow(scenes):
            guard let mark = scenes.mark else { throw Failure("cannot place a scene") }
            lines.removeFlowBrackets(line: mark.line, column: mark.column)
            lines.insertLines(entry(all, dashColumn: keyMark.column + 2, keyOffset: 2)
                              + reindented(zones, keyColumn: keyMark.column + 4), after: mark.line)
        case .scalar where scenes.isNullScalar:
            lines.insertLines(entry(all, dashColumn: keyMark.column + 2, keyOffset: 2)
                              + reindented(zones, keyColumn: keyMark.column + 4), after: keyMark.line)
        default:
            throw Failure("'scenes:' is not a block list; add the scene by hand")
        }
        return lines.text
    }

    /// The text with each selector on `scene.select` that says `values:` or
    /// `steps:` reaching every scene place 0..<`sceneCount` (a saved scene
    /// added at the end would be out of its reach, which `mapping check`
    /// refuses): the missing places added to `values:`, `steps:` raised.
    public static func reachingEveryScene(_ sceneCount: Int, controls: [ControlDefinition], in text: String) throws(Failure) -> String {
        var text = text
        for def in controls where def.selectsScenesByPlace {
            let doc = try Document(text)
            guard let item = doc.control(named: def.name), case .mapping(let pairs) = item else { continue }
            var lines = Lines(text)
            if let key = pairs.keys.first(where: { $0.string == "values" }), let node = pairs["values"],
               let values = def.selectorValues {
                let missing = (0..<sceneCount).map(Double.init).filter { !values.contains($0) }
                guard !missing.isEmpty else { continue }
                let all = (values + missing).map(MappingReader.format)
                try lines.replaceValue(key: key, value: node, with: "[" + all.joined(separator: ", ") + "]")
            } else if let key = pairs.keys.first(where: { $0.string == "steps" }), let node = pairs["steps"],
                      let steps = def.shaping.steps, steps < sceneCount {
                try lines.replaceValue(key: key, value: node, with: "\(sceneCount)")
            } else {
                continue
            }
            text = lines.text
        }
        return text
    }

    /// The lines of scene `name`'s `zones:` (key, value and the comments among
    /// them) and the column its key is at; nil when the scene has no zones of its own.
    private static func zonesLines(ofScene name: String, in doc: Document, lines: Lines) throws(Failure)
        -> (lines: [String], keyColumn: Int)? {
        guard let (_, scenes) = doc.topPair("scenes"), case .sequence(let items) = scenes else { return nil }
        for item in items {
            guard case .mapping(let pairs) = item, pairs["name"]?.string == name else { continue }
            guard let (key, value) = pairs.first(where: { $0.key.string == "zones" }) else { return nil }
            guard let mark = key.mark, lines.indent(mark.line) == mark.column - 1 else {
                throw Failure("scene '\(name)' writes its zones inline; save the scene by hand")
            }
            let end = lines.lastLine(ofValueAt: value, keyColumn: mark.column)
            return (Array(lines.lines[(mark.line - 1)..<end]), mark.column)
        }
        return nil
    }

    /// The comments of a scene being replaced, by the key of the scene they go
    /// with: a comment line before a key's line goes with that key (kept above
    /// it); a comment at the end of a key's line stays at its end; a comment
    /// inside a key's value (a block's lines, which the saved scene writes on
    /// one line) is kept as a comment line below the key. The comments of a
    /// key the saved scene does not have are dropped; `zones:`'s go with the
    /// zones: only a scene saved over itself copies them (before its key, the
    /// copy's own), another's zones bring their own.
    private struct SceneComments {
        var before: [String: [String]] = [:], atEnd: [String: (text: String, column: Int)] = [:], inside: [String: [String]] = [:]

        init(of item: Node, lines: Lines, through end: Int, zonesCopied: Bool) {
            guard case .mapping(let pairs) = item, let start = item.mark?.line else { return }
            let keyLines = pairs.compactMap { k, _ in k.mark.map { (key: k.string ?? "", line: $0.line, column: $0.column) } }
                .sorted { $0.line < $1.line }
            guard let keyColumn = keyLines.last?.column else { return }
            func owner(_ l: Int) -> String? { keyLines.last { $0.line <= l }?.key }
            for l in start...end {
                if lines.isComment(l) {
                    let text = lines.lines[l - 1].trimmingCharacters(in: .whitespaces)
                    // At the keys' indent: it goes with the next key; deeper: inside the value above it.
                    let next = ((l + 1)...max(l + 1, end)).first { $0 <= end && !lines.isBlank($0) && !lines.isComment($0) }
                    if (lines.indent(l) ?? 0) <= keyColumn - 1, let next, let key = keyLines.first(where: { $0.line == next })?.key {
                        before[key, default: []].append(text)
                    } else if let key = owner(l) {
                        inside[key, default: []].append(text)
                    }
                } else if let (text, column) = lines.trailingComment(l), let key = owner(l) {
                    if keyLines.contains(where: { $0.line == l && $0.key == key }) { atEnd[key] = (text, column) } else { inside[key, default: []].append(text) }
                }
            }
            if !zonesCopied { before["zones"] = nil }
            atEnd["zones"] = nil; inside["zones"] = nil   // the copy has them
        }

        /// `block` (a line per key in `keys`, in order, then the zones' further lines) with the comments in place.
        func placed(in block: [String], keys: [String], keyColumn: Int) -> [String] {
            let indent = String(repeating: " ", count: keyColumn - 1)
            var out: [String] = []
            for (i, line) in block.enumerated() {
                let key = i < keys.count ? keys[i] : nil
                out += (key.flatMap { before[$0] } ?? []).map { indent + $0 }
                if let key, let end = atEnd[key] {
                    let width = line.unicodeScalars.count
                    out.append(line + String(repeating: " ", count: end.column - 1 > width ? end.column - 1 - width : 2) + end.text)
                } else {
                    out.append(line)
                }
                out += (key.flatMap { inside[$0] } ?? []).map { indent + $0 }
            }
            return out
        }
    }

    /// Copied lines moved so their first key stands at `keyColumn`.
    private static func reindented(_ copied: (lines: [String], keyColumn: Int)?, keyColumn: Int) -> [String] {
        guard let copied else { return [] }
        let shift = keyColumn - copied.keyColumn
        return copied.lines.map { line in
            if shift >= 0 { return line.isEmpty ? line : String(repeating: " ", count: shift) + line }
            let spaces = line.prefix { $0 == " " }.count
            return String(line.dropFirst(min(spaces, -shift)))
        }
    }

    // MARK: - Source text

    /// The file's top-level `channel:` as written ("1", "each", "any"), nil when absent or unreadable.
    public static func defaultChannel(in text: String) -> String? { (try? Document(text))?.defaultChannel }

    /// `{ cc: 21 }`, `{ cc14: 1, channel: 2 }`, `{ nrpn: [3, 17], bits: 7 }`, `{ note: 36, channel: each }`.
    /// The channel is left out when the file's default (`channel:` at the top) already says it.
    package static func sourceText(_ source: ControlSource, defaultChannel: String?, each: Bool) -> String {
        var parts: [String]
        switch source.message {
        case .cc(let n): parts = ["cc: \(n)"]
        case .cc14(let msb, let order): parts = ["cc14: \(msb)"] + (order == .auto ? [] : ["order: \(order.rawValue)"])
        case .nrpn(let n, let bits), .rpn(let n, let bits):
            let key = if case .nrpn = source.message { "nrpn" } else { "rpn" }
            parts = ["\(key): [\(n.msb), \(n.lsb)]"] + (bits == 7 ? ["bits: 7"] : [])
        case .note(let n): parts = ["note: \(n)"]
        case .programChange: parts = ["program-change: true"]
        case .pitchBend: parts = ["pitch-bend: true"]
        case .channelPressure: parts = ["channel-pressure: true"]
        }
        let written: String? = each ? "each" : source.channel.map { String($0.intValue + 1) } ?? "any"
        let implied = defaultChannel ?? "any"
        if let written, written != implied { parts.append("channel: \(written)") }
        return "{ " + parts.joined(separator: ", ") + " }"
    }

    /// "Volume (ch 3)" → "Volume": the name `channel: each` gives its copies.
    static func eachBaseName(_ name: String) -> String? {
        guard name.hasSuffix(")"), let open = name.range(of: " (ch ", options: .backwards) else { return nil }
        let number = name[open.upperBound..<name.index(before: name.endIndex)]
        guard let n = Int(number), (1...16).contains(n) else { return nil }
        return String(name[..<open.lowerBound])
    }

    /// A control name as YAML: plain when that reads back the same, else quoted.
    public static func scalar(_ text: String) -> String {
        let plain = text.range(of: #"^[A-Za-z][A-Za-z0-9 ._()+/-]*$"#, options: .regularExpression) != nil
            && !text.hasSuffix(" ") && !["true", "false", "yes", "no", "on", "off", "null"].contains(text.lowercased())
        if plain { return text }
        return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

// MARK: - The composed tree, for positions

/// The file's YAML tree, read only to find where things are.
private struct Document {
    let root: Node.Mapping

    init(_ text: String) throws(MappingPatch.Failure) {
        let node: Node?
        do { node = try Yams.compose(yaml: text) } catch {
            throw MappingPatch.Failure("the file is not valid YAML; fix it first (carillon mapping check)")
        }
        guard case .mapping(let root)? = node else { throw MappingPatch.Failure("the file is not a mapping") }
        self.root = root
    }

    func topPair(_ key: String) -> (Node, Node)? {
        for (k, v) in root where k.string == key { return (k, v) }
        return nil
    }

    /// The file's `channel:` as written ("1", "each", "any"), nil when absent.
    var defaultChannel: String? {
        guard let (_, v) = topPair("channel"), let s = v.string else { return nil }
        return ["all", "omni"].contains(s) ? "any" : s
    }

    func control(named name: String) -> Node? {
        guard let (_, controls) = topPair("controls"), case .sequence(let items) = controls else { return nil }
        return items.first { item in
            guard case .mapping(let pairs) = item else { return false }
            return pairs["name"]?.string == name
        }
    }
}

extension Node {
    fileprivate var isNullScalar: Bool {
        if case .scalar(let s) = self { return s.string.isEmpty || s.string == "~" || s.string == "null" }
        return false
    }
}

// MARK: - Lines of text, edited by position

/// The text as lines (columns count Unicode scalars, as libyaml's marks do).
/// Line endings are kept as they were: "\n" joins, a line's own "\r" stays on it.
private struct Lines {
    var lines: [String]

    init(_ text: String) { lines = text.components(separatedBy: "\n") }

    var text: String { lines.joined(separator: "\n") }

    private func scalars(_ line: Int) -> [Unicode.Scalar] { Array(lines[line - 1].unicodeScalars) }

    private static func string(_ s: some Sequence<Unicode.Scalar>) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: s)
        return String(view)
    }

    /// The character at a 1-based place (Yams does not keep a node's style: the text tells).
    func character(line: Int, column: Int) -> Unicode.Scalar? {
        guard line >= 1, line <= lines.count else { return nil }
        let s = scalars(line)
        return column >= 1 && column <= s.count ? s[column - 1] : nil
    }

    /// True when a node is written in flow style (`{…}` or `[…]`).
    func opensFlow(_ node: Node) -> Bool {
        guard let mark = node.mark else { return false }
        return ["{", "["].contains(character(line: mark.line, column: mark.column))
    }

    func isBlank(_ line: Int) -> Bool {
        line >= 1 && line <= lines.count && lines[line - 1].trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
    }

    /// Leading spaces of a line; nil for a blank one.
    func indent(_ line: Int) -> Int? {
        let s = scalars(line)
        guard let i = s.firstIndex(where: { $0 != " " && $0 != "\t" }), s[i] != "\r" else { return nil }
        return i
    }

    func isComment(_ line: Int) -> Bool {
        guard let i = indent(line) else { return false }
        return scalars(line)[i] == "#"
    }

    /// The comment at the end of a line that holds YAML (from its `#`, outside
    /// quotes, after a space) and its 1-based column; nil for none.
    func trailingComment(_ line: Int) -> (text: String, column: Int)? {
        let s = scalars(line)
        var quote: Unicode.Scalar?
        var i = 0
        while i < s.count {
            let c = s[i]
            if let q = quote {
                if c == "\\" && q == "\"" { i += 1 } else if c == q { quote = nil }
            } else if (c == "\"" || c == "'") && (i == 0 || [" ", "\t", ":", "[", "{", ","].contains(s[i - 1])) {
                quote = c   // a quoted scalar starts here (an apostrophe inside a plain one does not)
            } else if c == "#" && i > 0 && (s[i - 1] == " " || s[i - 1] == "\t") {
                return (Self.string(s[i...]).trimmingCharacters(in: .whitespacesAndNewlines), i + 1)
            }
            i += 1
        }
        return nil
    }

    /// The 1-based column of the `-` that opens a sequence item starting at `column`.
    func dashColumn(line: Int, before column: Int) -> Int? {
        let s = scalars(line)
        var i = min(column - 2, s.count - 1)
        while i >= 0 {
            if s[i] == "-" { return i + 1 }
            if s[i] != " " { return nil }
            i -= 1
        }
        return nil
    }

    /// The last line of the item whose dash is on `line`: the lines after it
    /// that are blank or indented past the dash belong to it (trailing blank
    /// lines do not).
    func lastLine(ofItemAt line: Int, dashColumn: Int) -> Int {
        var last = line, l = line + 1
        while l <= lines.count {
            if let indent = indent(l) {
                guard indent > dashColumn - 1 else { break }
                last = l
            }
            l += 1
        }
        return last
    }

    /// The last line of a value that starts at `value`: a flow collection or
    /// quoted scalar ends where its brackets or quotes close; a block
    /// collection runs while lines are indented past the key.
    func lastLine(ofValueAt value: Node, keyColumn: Int) -> Int {
        guard let mark = value.mark else { return 1 }
        if let (line, _) = flowEnd(line: mark.line, column: mark.column) { return line }
        var last = mark.line, l = mark.line + 1
        while l <= lines.count {
            if let indent = indent(l) {
                guard indent > keyColumn - 1 else { break }
                if !isComment(l) { last = l }
            }
            l += 1
        }
        return last
    }

    /// Where a flow collection (`{…}`, `[…]`) or a quoted scalar that starts
    /// at `line`:`column` ends: the line and the 0-based index just past its closing
    /// character. Nil for anything else.
    func flowEnd(line start: Int, column: Int) -> (Int, Int)? {
        var line = start, i = column - 1
        var s = scalars(line)
        guard i < s.count, ["{", "[", "\"", "'"].contains(s[i]) else { return nil }
        var depth = 0
        var quote: Unicode.Scalar?
        while true {
            while i < s.count {
                let c = s[i]
                if let q = quote {
                    if c == "\\" && q == "\"" { i += 1 } else if c == q { quote = nil; if depth == 0 { return (line, i + 1) } }
                } else if c == "\"" || c == "'" {
                    quote = c
                } else if c == "{" || c == "[" {
                    depth += 1
                } else if c == "}" || c == "]" {
                    depth -= 1
                    if depth == 0 { return (line, i + 1) }
                } else if c == "#" && (i == 0 || s[i - 1] == " ") {
                    break  // a comment: the rest of this line is not YAML
                }
                i += 1
            }
            line += 1
            guard line <= lines.count else { return nil }
            s = scalars(line)
            i = 0
        }
    }

    /// Replaces the value of `key` (a `source:` entry) by `text` on the key's
    /// line, keeping what follows a one-line value (a comment, `,` or `}` in
    /// a flow item) and every comment line inside a block value.
    mutating func replaceValue(key: Node, value: Node, with text: String) throws(MappingPatch.Failure) {
        guard let keyMark = key.mark, let mark = value.mark else { throw MappingPatch.Failure("cannot find 'source:'") }
        let keyLine = scalars(keyMark.line)
        // The value's start on the key's line, or just after the colon when it starts below.
        let sameLine = mark.line == keyMark.line
        var start: Int
        if sameLine {
            start = mark.column - 1
        } else {
            guard let colon = keyLine[(keyMark.column - 1)...].firstIndex(of: ":") else {
                throw MappingPatch.Failure("cannot find 'source:'")
            }
            start = colon + 1
        }
        if let (endLine, endIndex) = flowEnd(line: mark.line, column: mark.column) {
            // `{ … }` (perhaps over several lines): keep what follows its close.
            let tail = Self.string(scalars(endLine)[endIndex...])
            let head = Self.string(keyLine[..<start])
            let comments = ((keyMark.line + 1)..<(endLine + 1)).filter { $0 < endLine && isComment($0) }.map { lines[$0 - 1] }
            lines.replaceSubrange((keyMark.line - 1)..<endLine, with: [head + text + tail] + comments)
            return
        }
        if sameLine {
            // A plain scalar (`source: pitch-bend`): up to a comment or the line's end.
            var end = keyLine.count
            if let hash = (start..<keyLine.count).first(where: { keyLine[$0] == "#" && keyLine[$0 - 1] == " " }) { end = hash }
            if keyLine.last == "\r" { end = min(end, keyLine.count - 1) }
            while end > start, keyLine[end - 1] == " " { end -= 1 }
            let tail = Self.string(keyLine[end...])
            lines[keyMark.line - 1] = Self.string(keyLine[..<start]) + text + tail
            return
        }
        // A block mapping below the key: its lines go, its comments stay.
        let last = lastLine(ofValueAt: value, keyColumn: keyMark.column)
        let rest = Self.string(keyLine[start...]).trimmingCharacters(in: .whitespaces)
        let head = Self.string(keyLine[..<start])
        let first = head + " " + text + (rest.hasPrefix("#") ? "  " + rest : "")
        let comments = ((keyMark.line + 1)...max(keyMark.line + 1, last)).filter { $0 <= last && isComment($0) }
            .map { lines[$0 - 1] }
        lines.replaceSubrange((keyMark.line - 1)..<last, with: [first] + comments)
    }

    mutating func insert(_ text: String, atLine line: Int, column: Int) {
        var s = scalars(line)
        s.insert(contentsOf: text.unicodeScalars, at: min(column - 1, s.count))
        lines[line - 1] = Self.string(s)
    }

    /// Removes `[]` at a 1-based column (an empty flow list).
    mutating func removeFlowBrackets(line: Int, column: Int) {
        guard let (endLine, endIndex) = flowEnd(line: line, column: column), endLine == line else { return }
        var s = scalars(line)
        var start = column - 1
        while start > 0, s[start - 1] == " " { start -= 1 }
        s.removeSubrange(start..<endIndex)
        while let last = s.last, last == " " { s.removeLast() }
        lines[line - 1] = Self.string(s)
    }

    mutating func insertLine(_ text: String, after line: Int) { insertLines([text], after: line) }

    /// Removes lines (1-based, inclusive).
    mutating func removeLines(_ range: ClosedRange<Int>) { lines.removeSubrange((range.lowerBound - 1)..<range.upperBound) }

    mutating func insertLines(_ new: [String], after line: Int) {
        // Keep the file's line endings.
        let crlf = lines.first?.hasSuffix("\r") == true
        let adjusted = crlf ? new.map { $0 + "\r" } : new
        // A file without a final newline: the new lines still end up on lines of their own.
        if line == lines.count, !lines[line - 1].isEmpty {
            lines.append(contentsOf: adjusted)
        } else {
            lines.insert(contentsOf: adjusted, at: line)
        }
    }
}
