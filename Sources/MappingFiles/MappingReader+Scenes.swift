import ControlDefinitions
import Foundation
import MIDI
import Parameters
import Rig
import Yams

/// A mapping file's `scenes:` section.
extension MappingReader {
    /// `scenes:`: a list of `{ name, channels, set, controls }`, checked against the controls read.
    func scenes(_ node: Node, controls: [ControlDefinition]) -> [Scene] {
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
                    sceneBeingRead = result.count
                    defer { sceneBeingRead = nil }
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
                case "zones":
                    scene.zones = zones(value)
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
    func sceneChannels(_ node: Node) -> [ChannelSetup] {
        channelSetups(node, each: "preset") { setup, key, keyNode, v in
            switch key {
            case "soundfont":
                error(keyNode, "a scene cannot change a channel's SoundFont (fonts load once, at start); give it in the top-level 'channels:' and choose its presets here by bank and program")
            case "bank":
                guard let bank = integer(v, in: 0...16383, "bank") else { return }
                if bank > 127 && !(bank == 128 && setup.channel.intValue == 9) {
                    error(v, "a scene selects banks 0...127 (bank select, CC 0), or 128 on channel 10; found \(bank)")
                    return
                }
                setup.bank = bank
            case "program": setup.program = program(v, channel: setup.channel)
            case "instrument", "lv2":
                error(keyNode, "a scene cannot change a channel's instrument (instruments load once, at start); give it in the top-level 'channels:'")
            default: break
            }
        }
    }
}
