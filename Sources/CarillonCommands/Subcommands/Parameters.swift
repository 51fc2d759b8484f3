import ArgumentParser
import Hosting
import Controls
import Foundation
import Parameters

/// `carillon parameters`: the parameter table, the names mapping files,
/// scenes, the web surface and `--set`-like options use.
struct Parameters: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List every parameter a control can drive: name, range, unit, default and what it drives.",
        discussion: """
            Examples:
              carillon parameters
              carillon parameters --json | jq '.[] | select(.address | startswith("osc."))'
              carillon parameters --markdown > docs/parameters.md
              carillon parameters --instrument 1=http://drobilla.net/plugins/mda/JX10 | grep plugin

            Families of one kind print as one row: N is a MIDI channel (1...16) or a \
            track (1...8), C a controller number (0...127). --json lists every address. \
            With --instrument or --insert, the plugins' controls are listed too.
            """)

    @Flag(help: "Every address as a JSON array of objects (address, min, max, default, unit, kind, drives).")
    var json = false

    @Flag(help: "The table as Markdown (docs/parameters.md is this output).")
    var markdown = false

    /// The plugins whose controls are listed too.
    @OptionGroup var plugins: PluginOptions

    func validate() throws {
        if json && markdown { throw ValidationError("use either --json or --markdown, not both") }
    }

    func run() throws {
        plugins.registerParameters()
        let all = ParameterRegistry.standard.all
        if json {
            print(Self.json(all))
        } else if markdown {
            print(Self.markdown(Self.rows(all)), terminator: "")
        } else {
            print(Self.text(Self.rows(all)), terminator: "")
        }
    }

    /// One printed row: a family of addresses that differ only in their numbers.
    struct Row: Equatable {
        var pattern: String
        var range: ClosedRange<Double>
        var unit: ParameterUnit
        var kind: ParameterInfo.Kind
        /// The default, and the numbers (C) whose default differs from it.
        var defaultValue: Double
        var otherDefaults: [(number: Int, value: Double)]
        var drives: String

        static func == (a: Row, b: Row) -> Bool { a.pattern == b.pattern }
    }

    /// `strip.3.gain` → `strip.N.gain`, `channel.1.cc.74` → `channel.N.cc.C`, in
    /// table order; a family's default is its most common one.
    static func rows(_ infos: [ParameterInfo]) -> [Row] {
        var order: [String] = []
        var members: [String: [ParameterInfo]] = [:]
        for info in infos {
            // A plugin's control is its own row: its range and meaning are its plugin's.
            let isPlugin = if case .plugin = info.address { true } else { false }
            let pattern = isPlugin ? info.address.description : Self.pattern(info.address.description)
            if members[pattern] == nil { order.append(pattern) }
            members[pattern, default: []].append(info)
        }
        return order.map { pattern in
            let family = members[pattern]!
            var counts: [Double: Int] = [:]
            for f in family { counts[f.defaultValue, default: 0] += 1 }
            let common = counts.max { a, b in a.value < b.value || (a.value == b.value && a.key > b.key) }!.key
            var others: [(Int, Double)] = []
            if pattern.hasSuffix(".C") {
                var seen = Set<Int>()
                for f in family where f.defaultValue != common {
                    let number = Int(f.address.description.split(separator: ".").last!)!
                    if seen.insert(number).inserted { others.append((number, f.defaultValue)) }
                }
            }
            let first = family[0]
            return Row(pattern: pattern, range: first.range, unit: first.unit, kind: first.kind,
                       defaultValue: common, otherDefaults: others, drives: first.address.drives)
        }
    }

    static func pattern(_ address: String) -> String {
        var letters = ["N", "C"][...]
        return address.split(separator: ".", omittingEmptySubsequences: false).map { part in
            Int(part) != nil ? String(letters.popFirst() ?? "N") : String(part)
        }.joined(separator: ".")
    }

    static func range(_ row: Row) -> String {
        switch row.kind {
        case .toggle: "off/on"
        case .trigger: "press"
        default: "\(parameterNumber(row.range.lowerBound))…\(parameterNumber(row.range.upperBound))"
        }
    }

    static func defaultText(_ row: Row) -> String {
        let base: String
        switch row.kind {
        case .toggle: base = row.defaultValue >= 0.5 ? "on" : "off"
        case .trigger: base = "—"
        default: base = parameterNumber(row.defaultValue)
        }
        guard !row.otherDefaults.isEmpty else { return base }
        return base + " (" + row.otherDefaults.map { "C \($0.number): \(parameterNumber($0.value))" }.joined(separator: ", ") + ")"
    }

    static func text(_ rows: [Row]) -> String {
        let table = rows.map { [$0.pattern, range($0), $0.unit.rawValue, defaultText($0), $0.drives] }
        let header = ["PARAMETER", "RANGE", "UNIT", "DEFAULT", "DRIVES"]
        var widths = header.map(\.count)
        for r in table { for (i, c) in r.enumerated() where i < 4 { widths[i] = max(widths[i], c.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, c in i < 4 ? c.padding(toLength: widths[i], withPad: " ", startingAt: 0) : c }
                .joined(separator: "  ") + "\n"
        }
        return line(header) + table.map(line).joined()
    }

    static func markdown(_ rows: [Row]) -> String {
        var out = """
            # Parameters

            Every parameter a mapping's control (`targets:`), a scene (`set:`), the web surface or \
            MIDI learn can drive. N is a MIDI channel (1…16) or a track (1…8), C a controller \
            number (0…127). Values are in the unit shown; toggles take 0 (off) or 1 (on), presses 1.

            Generated by `carillon parameters --markdown` from the parameter table \
            (`Sources/Parameters/ParameterTable.swift`); a test fails when this file and \
            the command differ. `carillon parameters --json` lists every address.

            | Parameter | Range | Unit | Default | Drives |
            | --- | --- | --- | --- | --- |

            """
        for r in rows {
            out += "| `\(r.pattern)` | \(range(r)) | \(r.unit.rawValue) | \(defaultText(r)) | \(r.drives) |\n"
        }
        return out
    }

    static func json(_ infos: [ParameterInfo]) -> String {
        struct Entry: Encodable {
            var address: String, min: Double, max: Double, `default`: Double, unit: String, kind: String, drives: String
        }
        let entries = infos.map {
            Entry(address: $0.address.description, min: $0.range.lowerBound, max: $0.range.upperBound,
                  default: $0.defaultValue, unit: $0.unit.rawValue, kind: $0.kind.rawValue, drives: $0.address.drives)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(entries), as: UTF8.self)) ?? "[]"
    }
}
