import Foundation
import Parameters

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
                output += "\(file): ok, \(mapping.controls.count) control\(mapping.controls.count == 1 ? "" : "s")"
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
        for (i, scene) in scenes.enumerated() {
            var parts = scene.channels.map { setup in
                "channel \(setup.channel.intValue + 1)"
                    + (setup.bank.map { " bank \($0)" } ?? "") + (setup.program.map { " program \($0)" } ?? "")
            }
            parts += scene.settings.map { "\($0.address) \(Self.short($0.value))" }
            parts += scene.controls.map { "\($0.name) \(Self.short($0.value))" }
            lines.append("scene \(i) '\(scene.name)': " + parts.joined(separator: ", "))
        }
        let widths = (0..<3).map { c in rows.map { $0[c].count }.max() ?? 0 }
        for row in rows {
            var line = ""
            for c in 0..<3 { line += row[c].padding(toLength: widths[c] + 2, withPad: " ", startingAt: 0) }
            lines.append(line + row[3])
        }
        return lines.joined(separator: "\n")
    }

    private static func short(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e9 ? String(Int(v)) : String(format: "%g", v)
    }
}
