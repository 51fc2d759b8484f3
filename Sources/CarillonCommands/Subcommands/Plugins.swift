import ArgumentParser
import Foundation
import LV2

/// `carillon plugins`: the installed LV2 plugins, as Carillon would host them.
struct Plugins: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the installed LV2 plugins: instruments and effects, their ports and controls.",
        discussion: """
            Examples:
              carillon plugins
              carillon plugins piano
              carillon plugins --json | jq '.[] | select(.kind == "instrument") | .uri'

            Plugins are found where lilv looks: the folders in LV2_PATH, else \
            ~/.lv2, /usr/local/lib/lv2 and /usr/lib/lv2. Debian packages such as \
            mda-lv2, x42-plugins or dragonfly-reverb-lv2 install there. Each \
            control port is listed with its range, default and unit as the \
            plugin's data gives them.
            """)

    @Argument(help: ArgumentHelp("Only plugins whose URI, name or class contains this (any case).", valueName: "filter"))
    var filter: String?

    @Flag(help: "Print JSON for scripts: an array of plugins with their ports.")
    var json = false

    func run() throws {
        let world: LV2World
        do { world = try LV2World() } catch {
            Diagnostics.error("\(error)")
            throw ExitCode.failure
        }
        let needle = filter?.lowercased()
        let plugins = world.plugins.filter { p in
            needle.map { p.uri.lowercased().contains($0) || p.name.lowercased().contains($0) || p.classLabel.lowercased().contains($0) } ?? true
        }
        if json {
            print(Self.json(plugins))
            return
        }
        if plugins.isEmpty {
            let lv2Path = ProcessInfo.processInfo.environment["LV2_PATH"]
            Diagnostics.error(filter.map { "no installed LV2 plugin matches '\($0)'" } ?? "no LV2 plugins are installed"
                + (lv2Path.map { " (LV2_PATH=\($0))" } ?? "") + " — e.g. sudo apt install mda-lv2")
            throw ExitCode.failure
        }
        print(plugins.map(Self.text).joined(separator: "\n"), terminator: "")
    }

    /// One plugin as a block of lines: URI, what it is, its controls.
    static func text(_ p: LV2PluginInfo) -> String {
        var ports = "audio \(p.audioInputs) in, \(p.audioOutputs) out"
        if p.midiInputs > 0 { ports += ", MIDI in" }
        if p.midiOutputs > 0 { ports += ", MIDI out" }
        var out = "\(p.uri)\n  \(p.name): \(p.kind.rawValue) (\(p.classLabel)), \(ports)"
        if p.reportsLatency { out += ", reports latency" }
        out += "\n"
        for c in p.controls where c.isInput {
            out += "  \(c.symbol.padding(toLength: max(18, c.symbol.count), withPad: " ", startingAt: 0))  \(range(c))"
            out += c.name == c.symbol ? "\n" : "  \(c.name)\n"
        }
        if !p.otherPorts.isEmpty { out += "  other ports: \(p.otherPorts.joined(separator: ", "))\n" }
        if !p.requiredFeatures.isEmpty { out += "  requires: \(p.requiredFeatures.joined(separator: ", "))\n" }
        return out
    }

    /// `0…1 (default 0.5) Hz`, `off/on (default on)`, `saw|square|… (default saw)`.
    static func range(_ c: LV2PluginInfo.Control) -> String {
        func number(_ x: Float?) -> String {
            guard let x else { return "?" }
            return c.integer || x == x.rounded() ? String(Int(x)) : String(format: "%g", Double(x))
        }
        if c.toggle { return "off/on (default \((c.defaultValue ?? 0) >= 0.5 ? "on" : "off"))" }
        if c.enumeration, !c.scalePoints.isEmpty {
            let labels = c.scalePoints.map(\.label).joined(separator: "|")
            let chosen = c.scalePoints.first { $0.value == c.defaultValue }?.label ?? number(c.defaultValue)
            return "\(labels) (default \(chosen))"
        }
        return "\(number(c.minimum))…\(number(c.maximum)) (default \(number(c.defaultValue)))" + (c.unit.map { " \($0)" } ?? "")
    }

    static func json(_ plugins: [LV2PluginInfo]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(plugins), as: UTF8.self)) ?? "[]"
    }
}
