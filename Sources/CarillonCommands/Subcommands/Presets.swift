import ArgumentParser
import Controls
import Foundation
import Parameters
import Sampling

/// `carillon presets [FONT]`: a SoundFont's presets, to choose sounds by name.
struct Presets: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List a SoundFont's presets: bank, program and name; drum kits (bank 128) marked.",
        discussion: """
            Examples:
              carillon presets /usr/share/sounds/sf2/FluidR3_GM.sf2
              carillon presets /usr/share/sounds/sf3/MuseScore_General_Lite.sf3 | grep -i pad
              carillon presets --json | jq '.[] | select(."drum-kit")'

            SF2 and SF3 fonts are read as FluidSynth reads them (the list is its \
            shell's `inst`), without loading their samples. Without FONT, the font \
            live, play and render would load (--soundfont, $CARILLON_SOUNDFONT, \
            soundfonts/, the system's). A mapping may name these presets by name \
            (program: "Warm Pad"), and so may OSC (/carillon/channel/N/preset).
            """)

    @Argument(help: ArgumentHelp("An SF2 or SF3 file (default: the font a session would load).", valueName: "soundfont"))
    var font: String?

    @Flag(help: "Print JSON for scripts: an array of {bank, program, name, drum-kit}.")
    var json = false

    func run() throws {
        // A font named here is read as named (its own error if missing); else the session's is found.
        let path: String
        if let font { path = font } else {
            do { path = try SoundFontLocator().locate() } catch { Diagnostics.fail("\(error)") }
        }
        let presets: [FontPreset]
        do { presets = try PresetCatalog.shared.presets(of: path) } catch { Diagnostics.fail("\(error)") }
        if json {
            print(Self.json(presets))
            return
        }
        guard !presets.isEmpty else { Diagnostics.fail("\(path) has no presets") }
        print(Self.text(presets), terminator: "")
    }

    /// `bank prog  name`, a line per preset, drum kits marked.
    static func text(_ presets: [FontPreset]) -> String {
        var out = "bank prog  name\n"
        for p in presets {
            out += String(p.bank).leftPadded(4) + " " + String(p.program).leftPadded(4) + "  " + p.name
            out += p.isDrumKit ? "  (drum kit)\n" : "\n"
        }
        return out
    }

    struct Entry: Encodable {
        var bank: Int
        var program: Int
        var name: String
        var drumKit: Bool
        enum CodingKeys: String, CodingKey { case bank, program, name, drumKit = "drum-kit" }
    }

    static func json(_ presets: [FontPreset]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let entries = presets.map { Entry(bank: $0.bank, program: $0.program, name: $0.name, drumKit: $0.isDrumKit) }
        return (try? String(decoding: encoder.encode(entries), as: UTF8.self)) ?? "[]"
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
