import Foundation
import MIDI
import Parameters
import Rig

/// What `carillon mapping check` does, as a function of its arguments, so
/// it can be tested without a process.
public enum MappingCheck {
    public struct Outcome: Sendable {
        /// Text for standard output (summaries, tables).
        public var output: String
        /// Diagnostics for standard error, one per line.
        public var errors: String
        /// True when any file had a mistake (exit status 1).
        public var failed: Bool
    }

    public static func run(files: [String], explain: Bool, registry: ParameterRegistry = .standard) -> Outcome {
        var output = "", errors = "", failed = false
        for file in files {
            do {
                let mapping = try ControlMapping.load(path: file, registry: registry)
                let zoneCount = mapping.zones.count
                output += "\(file): ok, \(mapping.controls.count) control\(mapping.controls.count == 1 ? "" : "s")"
                    + (zoneCount > 0 ? ", \(zoneCount) zone\(zoneCount == 1 ? "" : "s")" : "")
                    + (mapping.name.map { " (\($0))" } ?? "") + "\n"
                if explain { output += mapping.explanation(registry: registry) + "\n" }
            } catch {
                failed = true
                for d in error.diagnostics { errors += d.description + "\n" }
            }
        }
        return Outcome(output: output, errors: errors, failed: failed)
    }
}

extension ControlMapping {
    /// A plain-text table of controls, sources and targets (`--explain`).
    public func explanation(registry: ParameterRegistry = .standard) -> String {
        var rows: [[String]] = [["CONTROL", "KIND", "SOURCE", "TARGETS"]]
        for def in controls {
            let source = def.source?.description ?? (def.pad != nil ? "(xy pad on the page)" : "(set by engine)")
            var detail: [String] = []
            if case .encoder = def.kind { detail.append(def.encoding.rawValue) }
            if def.softTakeover { detail.append("pick-up") }
            switch def.shaping.curve {
            case .linear: break
            case .exponential(let k): detail.append("exp \(k)")
            case .logarithmic(let k): detail.append("log \(k)")
            case .sCurve(let k): detail.append("s-curve \(k)")
            case .table(let p): detail.append("table \(p.count) pts")
            }
            if def.shaping.inverted { detail.append("inverted") }
            let kind = def.kind.rawValue + (detail.isEmpty ? "" : " (\(detail.joined(separator: ", ")))")
            var targets = def.targets.map { binding -> String in
                let info = registry.info(for: binding.address)
                let r = binding.range ?? def.range
                let unit = (def.unit ?? info.unit).rawValue
                let span = r.map { "\(Self.short($0.from))…\(Self.short($0.to))" }
                    ?? "\(Self.short(info.range.lowerBound))…\(Self.short(info.range.upperBound))"
                return "\(binding.address) [\(span)\(unit.isEmpty ? "" : " " + unit)]"
            }
            if let shown = def.readoutParameter { targets.append("shows \(shown)") }
            rows.append([def.name, kind, source, targets.joined(separator: ", ")])
        }
        var lines: [String] = []
        if let name { lines.append("\(name)" + (port.map { " — port '\($0)'" } ?? "")) }
        for setup in channels {
            var parts: [String] = []
            if let f = setup.soundFont { parts.append("soundfont \(f)") }
            if let b = setup.bank { parts.append("bank \(b)") }
            if let p = setup.program { parts.append("program \(p)") }
            lines.append("channel \(setup.channel.intValue + 1): " + parts.joined(separator: ", "))
        }
        lines += zones.map { "zone " + Self.explain($0) }
        for (i, scene) in scenes.enumerated() {
            var parts = scene.channels.map { setup in
                "channel \(setup.channel.intValue + 1)"
                    + (setup.bank.map { " bank \($0)" } ?? "") + (setup.program.map { " program \($0)" } ?? "")
            }
            parts += scene.settings.map { "\($0.address) \(Self.short($0.value))" }
            parts += scene.controls.map { "\($0.name) \(Self.short($0.value))" }
            lines.append("scene \(i) '\(scene.name)': " + parts.joined(separator: ", "))
            if let own = scene.zones {
                lines += own.isEmpty ? ["  no zones (every note goes where it would without zones)"] : own.map { "  zone " + Self.explain($0) }
            }
        }
        let widths = (0..<3).map { c in rows.map { $0[c].count }.max() ?? 0 }
        for row in rows {
            var line = ""
            for c in 0..<3 { line += row[c].padding(toLength: widths[c] + 2, withPad: " ", startingAt: 0) }
            lines.append(line + row[3])
        }
        return lines.joined(separator: "\n")
    }

    /// One zone on a line: `'Bass' keys C-1..B2 (0…47) → channel 2, transpose +12`.
    static func explain(_ zone: Zone) -> String {
        func note(_ n: UInt7) -> String { NoteName.name(of: n) }
        var parts = ["'\(zone.name)' keys \(note(zone.keys.lowerBound))..\(note(zone.keys.upperBound)) (\(zone.keys.lowerBound)…\(zone.keys.upperBound))"]
        switch zone.source {
        case .name(let n): parts.append("from '\(n)'")
        case .id(let id): parts.append("from port \(id)")
        case nil: break
        }
        if let channels = zone.channels { parts.append("on channel" + (channels.count == 1 ? " " : "s ") + channels.map { $0.intValue + 1 }.sorted().map(String.init).joined(separator: ",")) }
        if zone.velocities != 1...127 { parts.append("velocities \(zone.velocities.lowerBound)…\(zone.velocities.upperBound)") }
        if zone.kinds != .all { parts.append("only " + MessageKinds.names.filter { zone.kinds.contains($0.1) }.map(\.0).joined(separator: ", ")) }
        let to = zone.destinations.map { d -> String in
            switch d {
            case .channel(let c): "channel \(c.intValue + 1)"
            case .port(let name, let c): "port '\(name)' channel \(c.intValue + 1)"
            }
        }
        parts[parts.count - 1] += " → " + to.joined(separator: " + ")
        if zone.transpose != 0 { parts.append("transpose \(zone.transpose > 0 ? "+" : "")\(zone.transpose)") }
        switch zone.velocity {
        case .unchanged: break
        case .fixed(let v): parts.append("velocity \(v)")
        case .linear(let scale, let offset): parts.append("velocity ×\(short(scale)) \(offset < 0 ? "−" : "+") \(short(abs(offset)))")
        case .curve(let c): parts.append("velocity \(c.name)")
        }
        let renumbered = zone.controllers.sorted { $0.key < $1.key }.map { from, to in to.map { "cc \(from)→\($0)" } ?? "cc \(from) dropped" }
        parts += renumbered
        if let b = zone.bendRange { parts.append("bend ±\(b.semitones)" + (b.cents.value > 0 ? ".\(b.cents)" : "") + " st") }
        if !zone.midiFX.isEmpty { parts.append("midi-fx " + zone.midiFX.joined(separator: ", ")) }
        return parts.joined(separator: ", ")
    }

    private static func short(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e9 ? String(Int(v)) : String(format: "%g", v)
    }
}
