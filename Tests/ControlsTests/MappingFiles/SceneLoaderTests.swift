import Controls
import MIDI
import MappingFiles
import Parameters
import Testing

/// `scenes:` in a mapping file: read in order, every mistake at its place.
@Suite struct SceneLoaderTests {
    static let controls = """
        controls:
          - name: Scene
            kind: selector
            source: { program-change: true, channel: 16 }
            values: [0, 1]
            targets: [scene.select]
          - name: Level
            kind: fader
            source: { cc: 7 }
            targets: [strip.1.gain]
        """

    @Test func scenes_goodFile_readInOrder() throws {
        let mapping = try ControlMapping.parse(yaml: Self.controls + """

            scenes:
              - name: Piano          # a comment
                channels:
                  1: { bank: 0, program: 0 }
                  10: { bank: 128, program: 25 }
                set:
                  synth.reverb.level: 0.7
                  strip.1.pan: -0.5
                controls:
                  Level: -6
              - name: Organ
                channels: { 1: { program: 19 } }
            """)
        #expect(mapping.scenes.map(\.name) == ["Piano", "Organ"])
        let piano = mapping.scenes[0]
        #expect(piano.channels == [ChannelSetup(channel: Channel(0), bank: 0, program: UInt7(0)),
                                   ChannelSetup(channel: Channel(9), bank: 128, program: UInt7(25))])
        #expect(piano.settings == [Scene.Setting(.reverb(.level), 0.7), Scene.Setting(.strip(.channel(0), .pan), -0.5)])
        #expect(piano.controls.map(\.name) == ["Level"])
        #expect(piano.controls.map(\.value) == [-6])
        #expect(piano.location.line == 12)
    }

    @Test func scenes_mistakes_allReportedWithLineAndColumn() {
        let yaml = Self.controls + """

            scenes:
              - name: A
                channels:
                  1: { soundfont: Other.sf2, program: 3 }
                  2: { bank: 200 }
                set:
                  synth.reverb.levl: 0.5
                  strip.1.gain: 20
                  scene.select: 1
                controls:
                  Levl: 3
              - name: A
                colour: red
              - channels: {}
            """
        #expect(diagnostics(yaml) == [
            "m.yaml:14:12: error: a scene cannot change a channel's SoundFont (fonts load once, at start); give it in the top-level 'channels:' and choose its presets here by bank and program",
            "m.yaml:15:18: error: a scene selects banks 0...127 (bank select, CC 0), or 128 on channel 10; found 200",
            "m.yaml:17:7: error: unknown target 'synth.reverb.levl'; did you mean 'synth.reverb.level'?",
            "m.yaml:18:21: error: strip.1.gain 20 is out of range -60...6",
            "m.yaml:19:7: error: a scene cannot select a scene",
            "m.yaml:21:7: error: no control named 'Levl' in this mapping; did you mean 'Level'?",
            "m.yaml:22:11: error: scene name 'A' is already used at line 12",
            "m.yaml:23:5: error: unknown key 'colour' in a scene",
            "m.yaml:24:5: error: missing key 'name' in a scene",
        ])
    }

    @Test func sceneSelect_byAButton_orWithoutScenes_isAMistake() {
        let yaml = """
            controls:
              - name: Next
                kind: button
                source: { note: 36 }
                targets: [scene.select]
            """
        #expect(diagnostics(yaml) == [
            "m.yaml:2:5: error: scene.select is driven by a selector (values: [0, 1, …] for the scenes in order; a button or pad source steps to the next), not by a button",
        ])
        #expect(diagnostics(Self.controls) == [
            "m.yaml:2:5: error: control 'Scene' targets scene.select, but the file has no 'scenes:'",
        ])
    }
}

extension SceneLoaderTests {
    @Test func readmeScenesExample_loads() throws {
        let readme = try String(contentsOf: MappingPatchTests.folder.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.range(of: "## Scenes\n"))
        let start = try #require(readme.range(of: "```yaml\n", range: section.upperBound..<readme.endIndex))
        let end = try #require(readme.range(of: "```", range: start.upperBound..<readme.endIndex))
        let mapping = try ControlMapping.parse(yaml: String(readme[start.upperBound..<end.lowerBound]), file: "README.md")
        #expect(mapping.scenes.map(\.name) == ["Piano", "Organ"])
    }
}
