import Foundation
import MIDI
import Parameters
import Yams

/// A mapping file's `tracks:`, `channel:` and `channels:` sections.
extension MappingReader {
    /// `tracks:` a list of audio files, relative to the mapping file's folder; each must exist.
    func tracks(_ node: Node) -> [String] {
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
    func channel(_ node: Node) -> ChannelChoice? {
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

    func channelSetups(_ node: Node) -> [ChannelSetup] {
        channelSetups(node, each: "set-up") { setup, key, keyNode, v in
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
            case "lv2":
                guard let uri = string(v, "an LV2 plugin's URI ('carillon plugins' lists them)") else { break }
                if uri.isEmpty { error(v, "an empty LV2 URI") } else { setup.lv2 = uri }
            default: break
            }
            if setup.instrument != nil && setup.lv2 != nil, key == "instrument" || key == "lv2" {
                error(keyNode, "channel \(setup.channel.intValue + 1) has both 'instrument:' and 'lv2:'; give it one")
            }
        }
    }

    /// A mapping from channel (1...16) to its `each` (set-up, preset): every
    /// entry of a channel handed to `read` (key, key node, value), in channel order.
    func channelSetups(_ node: Node, each: String,
                       read: (_ setup: inout ChannelSetup, _ key: String, _ keyNode: Node, _ value: Node) -> Void) -> [ChannelSetup] {
        guard case .mapping(let mapping) = node else {
            expected("a mapping from channel (1...16) to its \(each)", node)
            return []
        }
        var result: [ChannelSetup] = []
        for (keyNode, value) in mapping {
            guard let n = integer(keyNode, in: 1...16, "channel") else { continue }
            var setup = ChannelSetup(channel: Channel(n - 1))
            guard let entries = fields(value, allowed: MappingKeys.channelSetup, "channel \(n) \(each)") else { continue }
            for (key, keyNode, v) in entries { read(&setup, key, keyNode, v) }
            result.append(setup)
        }
        return result.sorted { $0.channel < $1.channel }
    }
}

extension ControlMapping {
    /// The `lv2:` instruments of a mapping file's `channels:` (0-based channel,
    /// URI), read before the file is: their controls must be parameters
    /// (`plugin.N.SYMBOL`) by the time its targets are resolved. Nothing is
    /// checked here; `load` reports every mistake.
    public static func lv2Instruments(path: String) -> [(channel: Int, uri: String)] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              case .mapping(let top)? = try? Yams.compose(yaml: text),
              case .mapping(let channels)? = top["channels"] else { return [] }
        var found: [(channel: Int, uri: String)] = []
        for (key, value) in channels {
            guard case .scalar(let k) = key, let n = Int(k.string), (1...16).contains(n),
                  case .mapping(let setup) = value, case .scalar(let uri)? = setup["lv2"], !uri.string.isEmpty else { continue }
            found.append((n - 1, uri.string))
        }
        return found.sorted { $0.channel < $1.channel }
    }
}
