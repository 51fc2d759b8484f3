import MappingFiles
import Parameters
import FluidSynth
import MIDI
import Sampling
import Testing

/// A mapping naming FluidR3_GM's presets by name, looked up as live, play,
/// render and `mapping check` look them up (`PresetCatalog`: FluidSynth's
/// reading of the font).
@Suite struct MappingPresetNamesTests {
    static let fluidR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"
    static let lookup: ControlMapping.PresetLookup = { font in PresetCatalog.font(font, sessionFont: fluidR3) }

    @Test func fluidR3Names_resolveToTheirBankAndProgram() throws {
        let mapping = try ControlMapping.parse(yaml: """
            channels:
              1: { program: Warm Pad }
              2: { program: "Detuned Organ 1" }
              10: { program: Standard 1 }
            zones:
              - { name: All, to: 1 }
            scenes:
              - name: Church
                channels:
                  1: { program: Church Organ }
                  10: { program: Power }
            """, file: "m.yaml", presets: Self.lookup)
        #expect(mapping.channels == [
            ChannelSetup(channel: Channel(0), bank: 0, program: UInt7(89)),
            ChannelSetup(channel: Channel(1), bank: 8, program: UInt7(16)),
            ChannelSetup(channel: Channel(9), bank: 128, program: UInt7(1)),
        ])
        #expect(mapping.scenes[0].channels == [
            ChannelSetup(channel: Channel(0), bank: 0, program: UInt7(19)),
            ChannelSetup(channel: Channel(9), bank: 128, program: UInt7(16)),
        ])
    }

    @Test func fluidR3_missingName_didYouMean() {
        do {
            _ = try ControlMapping.parse(yaml: "channels:\n  1: { program: Warm Pd }\nzones: []\n", file: "m.yaml", presets: Self.lookup)
            Issue.record("'Warm Pd' was taken")
        } catch {
            #expect(error.diagnostics.map(\.description) == [
                "m.yaml:2:17: error: no preset named 'Warm Pd' in \(Self.fluidR3); did you mean 'Warm Pad'? (`carillon presets \(Self.fluidR3)` lists them)",
            ])
        }
    }

    /// The catalog holds FluidSynth's list of the font (read once), Warm Pad where GM puts it.
    @Test func catalog_isFluidSynthsList() throws {
        let presets = try PresetCatalog.shared.presets(of: Self.fluidR3)
        #expect(presets.count == 189)
        #expect(presets.first { $0.name == "Warm Pad" } == FontPreset(bank: 0, program: 89, name: "Warm Pad"))
        let fromFont = try SoundFont.presets(at: Self.fluidR3)
        #expect(fromFont.map { FontPreset(bank: $0.bank, program: $0.program, name: $0.name) } == presets)
    }
}
