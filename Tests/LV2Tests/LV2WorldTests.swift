import Foundation
import LV2
import Testing

/// The installed plugins as lilv reads them, checked against lilv-utils'
/// own tools (`lv2ls`, `lv2info`) on Debian's mda-lv2 (scripts/setup installs both).
@Suite struct LV2WorldTests {
    static let mda = "http://drobilla.net/plugins/mda/"

    static func output(_ tool: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/" + tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// `lv2info`'s ports: symbol → (input, control, minimum, maximum, default).
    struct ReferencePort: Equatable {
        var input = false, control = false
        var minimum: Float?, maximum: Float?, defaultValue: Float?
    }

    static func referencePorts(_ uri: String) throws -> [String: ReferencePort] {
        var ports: [String: ReferencePort] = [:]
        var current = ReferencePort(), symbol: String?
        func flush() { if let symbol { ports[symbol] = current } }
        for raw in try output("lv2info", [uri]).split(separator: "\n", omittingEmptySubsequences: false) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("Port ") && line.hasSuffix(":") {
                flush(); current = ReferencePort(); symbol = nil
            }
            if line.hasSuffix("#InputPort") { current.input = true }
            if line.hasSuffix("#ControlPort") { current.control = true }
            func value(_ key: String) -> String? {
                line.hasPrefix(key) ? line.dropFirst(key.count).trimmingCharacters(in: .whitespaces) : nil
            }
            if let s = value("Symbol:") { symbol = s }
            if let v = value("Minimum:") { current.minimum = Float(v) }
            if let v = value("Maximum:") { current.maximum = Float(v) }
            if let v = value("Default:") { current.defaultValue = Float(v) }
        }
        flush()
        return ports
    }

    @Test func plugins_areTheOnesLv2lsLists() throws {
        let world = try LV2World()
        let reference = Set(try Self.output("lv2ls", []).split(separator: "\n").map(String.init))
        #expect(reference.contains(Self.mda + "Piano"), "mda-lv2 is not installed: run scripts/setup")
        #expect(Set(world.plugins.map(\.uri)) == reference)
    }

    @Test func everyMdaPlugin_hasLv2infosControlsRangesAndDefaults() throws {
        let world = try LV2World()
        let plugins = world.plugins.filter { $0.uri.hasPrefix(Self.mda) }
        #expect(plugins.count >= 30)
        for plugin in plugins {
            let reference = try Self.referencePorts(plugin.uri).filter { $0.value.control }
            #expect(Set(plugin.controls.map(\.symbol)) == Set(reference.keys), "\(plugin.uri)")
            for control in plugin.controls {
                guard let r = reference[control.symbol] else { continue }
                // lv2info prints six decimals.
                func near(_ a: Float?, _ b: Float?) -> Bool { a == nil ? b == nil : b != nil && abs(a! - b!) <= 1e-6 * max(1, abs(b!)) }
                #expect(control.isInput == r.input, "\(plugin.uri) \(control.symbol)")
                #expect(near(control.minimum, r.minimum) && near(control.maximum, r.maximum)
                        && near(control.defaultValue, r.defaultValue), "\(plugin.uri) \(control.symbol)")
            }
        }
    }

    @Test func instrumentsAndEffects_areToldApart() throws {
        let world = try LV2World()
        for name in ["Piano", "EPiano", "JX10", "DX10"] {
            let p = try world.plugin(uri: Self.mda + name)
            #expect(p.kind == .instrument && p.midiInputs == 1 && p.audioInputs == 0 && p.audioOutputs >= 1, "\(name)")
            #expect(p.requiredFeatures.contains("http://lv2plug.in/ns/ext/urid#map"), "\(name)")
        }
        // Units by their symbol, from the units specification.
        let jx10 = try world.plugin(uri: Self.mda + "JX10")
        #expect(jx10.controls.first { $0.symbol == "osc_tune" }?.unit == "semi")
        #expect(jx10.controls.first { $0.symbol == "osc_fine" }?.unit == "ct")
        let delay = try world.plugin(uri: Self.mda + "Delay")
        #expect(delay.kind == .effect && delay.audioInputs >= 1 && delay.audioOutputs >= 1 && delay.midiInputs == 0)
        #expect(delay.otherPorts.isEmpty)
    }

    @Test func unknownURI_namesTheClosestPlugin() throws {
        let world = try LV2World()
        #expect {
            _ = try world.plugin(uri: Self.mda + "Pianno")
        } throws: { error in
            guard let e = error as? LV2Error, case .unknownPlugin(_, let suggestions) = e.kind else { return false }
            return suggestions == [Self.mda + "Piano"] && e.description.contains("carillon plugins")
        }
        // A name too short to go by: no guess rather than a wrong one.
        #expect {
            _ = try world.plugin(uri: "urn:x")
        } throws: { error in
            guard let e = error as? LV2Error, case .unknownPlugin(_, let suggestions) = e.kind else { return false }
            return suggestions.isEmpty
        }
        // Another word for the plugin's name: found by its name.
        #expect {
            _ = try world.plugin(uri: "http://example.org/overdrive")
        } throws: { error in
            guard let e = error as? LV2Error, case .unknownPlugin(_, let suggestions) = e.kind else { return false }
            return suggestions == [Self.mda + "Overdrive"]
        }
    }
}
