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
            case "program": setup.program = program(v, channel: setup.channel)
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
    /// A mapping file's LV2 plugins: its `lv2:` instruments (0-based channel,
    /// URI) and its `inserts:`, read before the file is: their controls must be
    /// parameters (`plugin.N.SYMBOL`, `insert.STRIP.K.SYMBOL`) by the time its
    /// targets are resolved. Nothing is checked here; `load` reports every mistake.
    public static func lv2Plugins(path: String) -> (instruments: [(channel: Int, uri: String)], inserts: [MappingInsert]) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              case .mapping(let top)? = try? Yams.compose(yaml: text) else { return ([], []) }
        var instruments: [(channel: Int, uri: String)] = []
        if case .mapping(let channels)? = top["channels"] {
            for (key, value) in channels {
                guard case .scalar(let k) = key, let n = Int(k.string), (1...16).contains(n),
                      case .mapping(let setup) = value, case .scalar(let uri)? = setup["lv2"], !uri.string.isEmpty else { continue }
                instruments.append((n - 1, uri.string))
            }
        }
        var inserts: [MappingInsert] = []
        if case .mapping(let strips)? = top["inserts"] {
            for (key, value) in strips {
                guard case .scalar(let k) = key, MappingInsert.stripKeys.contains(k.string) else { continue }
                let uris: [Node] = if case .sequence(let list) = value { Array(list) } else { [value] }
                for case .scalar(let uri) in uris where !uri.string.isEmpty {
                    inserts.append(MappingInsert(strip: k.string, uri: uri.string))
                }
            }
        }
        return (instruments.sorted { $0.channel < $1.channel }, inserts)
    }
}

extension MappingReader {
    /// `inserts:` a mapping from strip (`master`, `1`…`16`, `osc`, `tone`,
    /// `track1`…) to an LV2 effect's URI or a list of them, run in that order.
    func inserts(_ node: Node) -> [MappingInsert] {
        guard case .mapping(let strips) = node else {
            expected("a mapping from strip (master, 1...16, osc, tone, track1...) to LV2 effects' URIs", node)
            return []
        }
        var result: [MappingInsert] = []
        for (keyNode, value) in strips {
            guard let key = string(keyNode, "a strip") else { continue }
            guard MappingInsert.stripKeys.contains(key) else {
                error(keyNode, "unknown strip '\(key)' for inserts (strips: master, 1...16, osc, tone, track1...track\(ParameterAddress.maxTracks))")
                continue
            }
            let uris: [Node] = if case .sequence(let list) = value { Array(list) } else { [value] }
            if uris.isEmpty { error(value, "strip \(key) lists no insert") }
            for item in uris {
                guard let uri = string(item, "an LV2 effect's URI ('carillon plugins' lists them)") else { continue }
                if uri.isEmpty { error(item, "an empty LV2 URI") } else { result.append(MappingInsert(strip: key, uri: uri)) }
            }
        }
        return result
    }
}
