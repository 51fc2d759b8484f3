import Controls
import MIDI
import MappingFiles
import Parameters

/// A channel's SoundFont and its presets, as the host finds them (the
/// mapping's `soundfont:` for the channel, else the session's). The surface
/// reads no font itself: the host hands it a lookup (the CLI: `PresetCatalog`).
public struct ChannelFont: Sendable, Equatable {
    public var path: String
    public var presets: [FontPreset]
    public init(path: String, presets: [FontPreset]) { self.path = path; self.presets = presets }
}

/// The lookup a host gives the surface: the font channel N plays, or why there is none. Any thread.
public typealias ChannelFontLookup = @Sendable (Channel) -> Result<ChannelFont, PresetNameError>

/// The page's channel strips: what each channel plays, the fonts to pick from.
enum ChannelSounds {
    /// The channels' strips and the fonts they name (each once), for a hello.
    static func hello(channels: [Channel], presets: ChannelPresets, lookup: ChannelFontLookup)
        -> (fonts: [FontMessage], channels: [ChannelSoundMessage], problems: [String]) {
        var fonts: [FontMessage] = []
        var lists: [[FontPreset]] = []
        var problems: [String] = []
        var strips: [ChannelSoundMessage] = []
        for c in channels {
            var font: Int?
            switch lookup(c) {
            case .success(let found):
                if let i = fonts.firstIndex(where: { $0.path == found.path }) {
                    font = i
                } else {
                    font = fonts.count
                    fonts.append(FontMessage(found))
                    lists.append(found.presets)
                }
            case .failure(let why):
                if !problems.contains(why.description) { problems.append(why.description) }
            }
            strips.append(ChannelSoundMessage(c, presets[c], font: font, in: font.map { lists[$0] } ?? []))
        }
        return (fonts, strips, problems)
    }
}

/// One font on the page: its file name and its presets in bank then program order.
struct FontMessage: Encodable, Equatable {
    struct Preset: Encodable, Equatable {
        var bank: Int
        var program: Int
        var name: String
    }
    var name: String
    var path: String
    var presets: [Preset]

    init(_ font: ChannelFont) {
        path = font.path
        name = String(font.path.split(separator: "/").last ?? Substring(font.path))
        presets = font.presets.map { Preset(bank: $0.bank, program: $0.program, name: $0.name) }
    }
}

/// One channel strip's sound: the preset it plays (its name when its font has it) and its font's place in `fonts`.
struct ChannelSoundMessage: Encodable, Equatable {
    var channel: Int
    var bank: Int
    var program: Int
    var name: String?
    var font: Int?

    init(_ channel: Channel, _ entry: ChannelPresets.Entry, font: Int?, in presets: [FontPreset]) {
        self.channel = channel.intValue + 1
        bank = entry.bank
        program = entry.program
        name = presets.first { $0.bank == entry.bank && $0.program == entry.program }?.name
        self.font = font
    }
}

/// What every channel strip plays now: sent when a preset changes (the page's picker, OSC, a scene, a control).
struct SoundsMessage: Encodable {
    var type = "sounds"
    var channels: [ChannelSoundMessage]
}
