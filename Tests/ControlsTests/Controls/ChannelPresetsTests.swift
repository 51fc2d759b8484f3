import Controls
import MIDI
import MappingFiles
import Parameters
import Testing

/// What the hub knows each channel plays (the page's channel strips, the
/// terminal view): the mapping's presets at the start, then every bank select
/// and program change the hub sends — a picked preset, a scene, a control.
@Suite struct ChannelPresetsTests {
    static let yaml = """
        channels:
          1: { program: 4 }
          2: { bank: 8, program: 19 }
          5: { instrument: oscillator }
        controls:
          - name: Program 3
            kind: knob
            source: { cc: 20 }
            range: [0, 127]
            targets: [channel.3.program]
        scenes:
          - name: Organ
            channels:
              1: { bank: 0, program: 19 }
              10: { bank: 128, program: 25 }
        """

    static func entry(_ hub: ControlHub, _ channel: Int) -> String {
        let e = hub.channelPresets[Channel(UInt8(channel - 1))]
        return "\(e.bank):\(e.program)"
    }

    @Test func start_isTheMappingsPresets_channel10TheDrumBank() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.yaml))
        #expect((1...5).map { Self.entry(hub, $0) } == ["0:4", "8:19", "0:0", "0:0", "0:0"])
        #expect(Self.entry(hub, 10) == "128:0")
        #expect(Self.entry(ControlHub(mapping: nil), 10) == "128:0")
    }

    @Test func selectPreset_scene_andControl_areFollowed_eachMovingTheGeneration() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.yaml))
        var generation = hub.channelPresets.generation
        func moved() -> Bool { defer { generation = hub.channelPresets.generation }; return hub.channelPresets.generation > generation }

        hub.selectPreset(onChannel: Channel(1), bank: 0, program: 89)
        #expect(Self.entry(hub, 2) == "0:89" && moved())
        #expect(hub.selectScene(named: "Organ"))
        #expect(Self.entry(hub, 1) == "0:19" && Self.entry(hub, 10) == "128:25" && moved())
        #expect(hub.setControl("Program 3", to: 40))
        #expect(Self.entry(hub, 3) == "0:40" && moved())
        #expect(!moved())
    }

    @Test func bankSelectOnTheDrumChannel_leavesItsBank() {
        // FluidSynth's default (gs) bank select is ignored on a drum channel.
        let hub = ControlHub(mapping: nil)
        hub.set(.channelCC(Channel(9), 0), to: 5)
        hub.set(.channelProgram(Channel(9)), to: 16)
        #expect(Self.entry(hub, 10) == "128:16")
    }
}

/// The terminal view's `[`/`]`: the previous or next preset in the font's list, wrapping round.
@Suite struct PresetStepTests {
    static let presets = [
        FontPreset(bank: 0, program: 0, name: "Piano"), FontPreset(bank: 0, program: 48, name: "Strings"),
        FontPreset(bank: 8, program: 4, name: "Chorused EP"), FontPreset(bank: 128, program: 0, name: "Standard"),
        FontPreset(bank: 128, program: 25, name: "TR-808"), FontPreset(bank: 300, program: 1, name: "Far bank"),
    ]

    static func step(_ bank: Int, _ program: Int, _ by: Int, channel: Int = 1) -> String? {
        ChannelPresets.step(from: .init(bank: bank, program: program), by: by, in: presets, channel: Channel(UInt8(channel - 1)))?.name
    }

    @Test func steps_wrapRound_andSkipWhatBankSelectCannotReach() {
        #expect(Self.step(0, 0, 1) == "Strings")
        #expect(Self.step(0, 48, 1) == "Chorused EP")
        #expect(Self.step(8, 4, 1) == "Piano")   // drum kits only on channel 10; bank 300 never
        #expect(Self.step(0, 0, -1) == "Chorused EP")
        // Channel 10 ignores bank select (FluidSynth's gs style): its drum kits only.
        #expect(Self.step(128, 0, 1, channel: 10) == "TR-808")
        #expect(Self.step(128, 25, 1, channel: 10) == "Standard")
        #expect(Self.step(0, 0, -1, channel: 10) == "TR-808")
    }

    @Test func fromAPresetTheFontLacks_theNeighboursAreTheNext() {
        #expect(Self.step(0, 10, 1) == "Strings")
        #expect(Self.step(0, 10, -1) == "Piano")
        #expect(Self.step(0, 127, 1) == "Chorused EP")
        #expect(Self.step(127, 0, 1) == "Piano")
        #expect(ChannelPresets.step(from: .init(bank: 0, program: 0), by: 1, in: [], channel: Channel(0)) == nil)
    }
}
