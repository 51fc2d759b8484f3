import ControlDefinitions
import MappingFiles
import MIDI
import Parameters
import Testing

/// Presets named by name: `FontPreset.named` and a mapping's
/// `program: "Warm Pad"` in `channels:` and scenes, looked up in a font's
/// list (here a small list with the traps of real ones: a name in two banks,
/// a drum kit named like a melodic preset). FluidR3's own names: the
/// CarillonTests suite `MappingPresetNamesTests`.
@Suite struct PresetNameTests {
    static let presets = [
        FontPreset(bank: 0, program: 0, name: "Grand Piano"),
        FontPreset(bank: 0, program: 19, name: "Church Organ"),
        FontPreset(bank: 0, program: 89, name: "Warm Pad"),
        FontPreset(bank: 8, program: 89, name: "Warm Pad"),
        FontPreset(bank: 0, program: 48, name: "Standard"),
        FontPreset(bank: 128, program: 0, name: "Standard"),
        FontPreset(bank: 128, program: 16, name: "Power"),
    ]

    static let lookup: ControlMapping.PresetLookup = { font in
        font == nil ? .success(("Test.sf2", presets)) : .failure(PresetNameError(description: "SoundFont not found: \(font!)"))
    }

    static func parse(_ yaml: String) throws(MappingError) -> ControlMapping {
        try ControlMapping.parse(yaml: yaml, file: "m.yaml", presets: lookup)
    }

    static func errors(_ yaml: String) -> [String] {
        do { _ = try parse(yaml); return [] } catch { return error.diagnostics.map(\.description) }
    }

    @Test func named_exactThenAnyCase_lowestBank_drumKitOnChannel10() throws {
        func find(_ name: String, bank: Int? = nil, channel: Int? = nil) -> FontPreset? {
            try? FontPreset.named(name, in: Self.presets, bank: bank, channel: channel.map { Channel($0 - 1) }, font: "F").get()
        }
        #expect(find("Warm Pad") == Self.presets[2])
        #expect(find("warm pad ") == Self.presets[2])
        #expect(find("Warm Pad", bank: 8) == Self.presets[3])
        #expect(find("Standard", channel: 1) == Self.presets[4])
        #expect(find("Standard", channel: 10) == Self.presets[5])
        #expect(find("Standard") == Self.presets[4])
        #expect(find("Power", bank: 0) == nil)
    }

    @Test func named_missing_saysDidYouMean_andWhereToLook() {
        guard case .failure(let e) = FontPreset.named("Warm Pd", in: Self.presets, font: "F.sf2") else {
            Issue.record("found a preset for 'Warm Pd'"); return
        }
        #expect(e.description == "no preset named 'Warm Pd' in F.sf2; did you mean 'Warm Pad'? (`carillon presets F.sf2` lists them)")
        guard case .failure(let far) = FontPreset.named("Bagpipe", in: Self.presets, font: "F.sf2") else { return }
        #expect(!far.description.contains("did you mean"), "\(far)")
    }

    @Test func mapping_channelsAndScenes_takeNames() throws {
        let mapping = try Self.parse("""
            channels:
              1: { program: "Warm Pad" }
              2: { bank: 8, program: Warm Pad }
              10: { program: Standard }
              3: { program: 5 }
              4: { program: "7" }
            zones:
              - { name: All, to: 1 }
            scenes:
              - name: Organ
                channels:
                  1: { program: "Church Organ" }
                  10: { program: Power }
            """)
        #expect(mapping.channels == [
            ChannelSetup(channel: Channel(0), bank: 0, program: UInt7(89)),
            ChannelSetup(channel: Channel(1), bank: 8, program: UInt7(89)),
            ChannelSetup(channel: Channel(2), program: UInt7(5)),
            ChannelSetup(channel: Channel(3), program: UInt7(7)),
            ChannelSetup(channel: Channel(9), bank: 128, program: UInt7(0)),
        ])
        #expect(mapping.scenes[0].channels == [
            ChannelSetup(channel: Channel(0), bank: 0, program: UInt7(19)),
            ChannelSetup(channel: Channel(9), bank: 128, program: UInt7(16)),
        ])
    }

    @Test func mapping_unknownNames_areErrorsAtTheirPlace_withDidYouMean() {
        let errors = Self.errors("""
            channels:
              1: { program: "Warm Pd" }
              2: { soundfont: Other.sf2, program: Piano }
              3: { program: "" }
            zones:
              - { name: All, to: 1 }
            scenes:
              - name: Drums
                channels:
                  4: { program: Power }
                  5: { program: Grand Pian }
            """)
        #expect(errors == [
            "m.yaml:2:17: error: no preset named 'Warm Pd' in Test.sf2; did you mean 'Warm Pad'? (`carillon presets Test.sf2` lists them)",
            "m.yaml:3:39: error: preset 'Piano': SoundFont not found: Other.sf2",
            "m.yaml:4:17: error: an empty preset name; give a program 0...127 or a preset's name",
            "m.yaml:10:21: error: 'Power' is in bank 128: a scene selects banks 0...127 (bank select, CC 0), or 128 on channel 10",
            "m.yaml:11:21: error: no preset named 'Grand Pian' in Test.sf2; did you mean 'Grand Piano'? (`carillon presets Test.sf2` lists them)",
        ], "\(errors)")
    }

    @Test func mapping_nameWithoutAFont_isAnError() {
        // No lookup given and none set for the process: only a number will do.
        do {
            _ = try ControlMapping.parse(yaml: "channels:\n  1: { program: Warm Pad }\nzones: []\n", file: "m.yaml",
                                         presets: { _ in .failure(PresetNameError(description: "no SoundFont found")) })
            Issue.record("a name with no font was taken")
        } catch {
            #expect(error.diagnostics.map(\.description) == ["m.yaml:2:17: error: preset 'Warm Pad': no SoundFont found"])
        }
    }
}
