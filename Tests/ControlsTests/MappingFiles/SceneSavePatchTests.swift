import Controls
import Foundation
import MIDI
import MappingFiles
import Parameters
import Testing

/// "Save as scene" patches the mapping file's text: a new scene goes at the
/// end of `scenes:` (made when absent), one of the same name is replaced where
/// it stands; every other line, comments included, stays as it was.
@Suite struct SceneSavePatchTests {
    static let fields: [MappingPatch.Field] = [("channels", "{ 1: { bank: 0, program: 89 } }"), ("set", "{ strip.1.gain: -6 }")]

    @Test(arguments: MappingPatchTests.shipped) func savingScene_shippedFile_keepsEveryLineAndReadsBack(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let before = try ControlMapping.parse(yaml: text, file: path)
        // As "save as scene" does: the scene selectors that list values or steps reach the new one too.
        let patched = try MappingPatch.reachingEveryScene(before.scenes.count + 1, controls: before.controls,
                                                         in: try MappingPatch.savingScene("Saved", fields: Self.fields, in: text))
        let was = text.components(separatedBy: "\n"), after = patched.components(separatedBy: "\n")
        // Every line stays but a scene selector's values/steps line.
        let kept = was.filter { !$0.contains("values:") && !$0.contains("steps:") }
        #expect(MappingPatchTests.isSubsequence(kept, of: after), "\(path): a line changed")
        #expect(MappingPatchTests.comments(text) == MappingPatchTests.comments(patched))
        #expect(after.count > was.count)
        let mapping = try ControlMapping.parse(yaml: patched, file: path)
        let scene = try #require(mapping.scenes.last)
        #expect(scene.name == "Saved")
        #expect(scene.channels == [ChannelSetup(channel: Channel(0), bank: 0, program: 89)])
        #expect(scene.settings == [Scene.Setting(.strip(.channel(Channel(0)), .gain), -6)])
        #expect(mapping.scenes.count == before.scenes.count + 1)
        for selector in mapping.controls where selector.targets.contains(where: { $0.address == .sceneSelect }) {
            if let values = selector.selectorValues { #expect(Set(values).isSuperset(of: (0..<mapping.scenes.count).map(Double.init))) }
        }
    }

    @Test func savingScene_sameName_replacesItWhereItStands_othersUntouched() throws {
        let text = """
            # my rig
            controls: []
            scenes:
              - name: Verse            # soft
                channels: { 1: { program: 4 } }
                set: { strip.1.gain: -3 }

              - name: Chorus
                set: { strip.1.gain: 0 }   # loud
            # the end
            """
        let patched = try MappingPatch.savingScene("Verse", fields: Self.fields, in: text)
        #expect(patched == """
            # my rig
            controls: []
            scenes:
              - name: Verse            # soft
                channels: { 1: { bank: 0, program: 89 } }
                set: { strip.1.gain: -6 }

              - name: Chorus
                set: { strip.1.gain: 0 }   # loud
            # the end
            """)
        let again = try MappingPatch.savingScene("Bridge", fields: Self.fields, in: patched)
        let scenes = try ControlMapping.parse(yaml: again).scenes
        #expect(scenes.map(\.name) == ["Verse", "Chorus", "Bridge"])
        #expect(again.hasSuffix("  - name: Bridge\n    channels: { 1: { bank: 0, program: 89 } }\n    set: { strip.1.gain: -6 }\n# the end")
                || again.contains("\n\n  - name: Bridge\n"))
    }

    /// The stage piano's "Piano only" with a player's notes in it, saved over
    /// itself: each comment goes with its key — kept where the saved scene still
    /// has the key (above it, at its line's end, or below it for what was inside
    /// its value), dropped with a key it no longer has.
    @Test func savingScene_overItself_keepsTheCommentsOfTheKeysItStillHas() throws {
        let shipped = try String(contentsOfFile: MappingPatchTests.folder.appendingPathComponent("stage-piano.yaml").path, encoding: .utf8)
        let zonesLine = "    zones:\n      - { name: Piano, keys: C-1..G9, to: 1, velocity: { curve: s-curve, shape: 2 } }"
        let head = "  - name: Piano only                   # the whole keyboard on the piano, velocities on an s-curve\n"
        try #require(shipped.contains(head + zonesLine))
        let text = shipped.replacingOccurrences(of: head + zonesLine, with: head + """
                # louder for the ballad
                set:
                  strip.1.gain: 3     # the piano up
                  # the bass stays
                # the s-curve suits the grand
            """ + "\n" + zonesLine)
        #expect(try ControlMapping.parse(yaml: text).scenes[1].settings.count == 1)
        let saved = try MappingPatch.savingScene("Piano only", fields: Self.fields, zonesOf: "Piano only", in: text)
        #expect(saved == shipped.replacingOccurrences(of: head + zonesLine, with: head + """
                channels: { 1: { bank: 0, program: 89 } }
                # louder for the ballad
                set: { strip.1.gain: -6 }
                # the piano up
                # the bass stays
                # the s-curve suits the grand
            """ + "\n" + zonesLine))
        let piano = try #require(try ControlMapping.parse(yaml: saved).scenes.first { $0.name == "Piano only" })
        #expect(piano.zones?.count == 1 && piano.settings.count == 1)
        // Saved with no `set:` and no zones of its own: their comments go with them; the name's stays.
        let bare = try MappingPatch.savingScene("Piano only", fields: [Self.fields[0]], in: text)
        #expect(bare == shipped.replacingOccurrences(of: head + zonesLine, with: head + "    channels: { 1: { bank: 0, program: 89 } }"))
    }

    /// midi-fx.yaml: a `#` inside a quoted URI is no comment; the scene's name comment is kept.
    @Test func savingScene_aHashInsideQuotes_isNoComment() throws {
        let text = try String(contentsOfFile: MappingPatchTests.folder.appendingPathComponent("midi-fx.yaml").path, encoding: .utf8)
        let dry = try MappingPatch.savingScene("Dry", fields: Self.fields, zonesOf: "Dry", in: text)
        #expect(MappingPatchTests.comments(dry) == MappingPatchTests.comments(text))
        #expect(dry.contains("midi-fx: [\"http://gareus.org/oss/lv2/midifilter#midichord\"] }\n"))
        let effects = try MappingPatch.savingScene("Effects", fields: Self.fields, in: text)
        #expect(effects.contains("  - name: Effects                      # the top level's zones\n    channels: "))
        #expect(try ControlMapping.parse(yaml: effects).scenes.map(\.name) == ["Effects", "Dry"])
    }

    @Test func savingScene_noScenes_addsTheSectionAtTheEnd() throws {
        let text = "# nothing yet\ncontrols: []   # none\n"
        let patched = try MappingPatch.savingScene("One", fields: Self.fields, in: text)
        #expect(patched == "# nothing yet\ncontrols: []   # none\n\nscenes:\n  - name: One\n    channels: { 1: { bank: 0, program: 89 } }\n    set: { strip.1.gain: -6 }\n")
        #expect(try ControlMapping.parse(yaml: patched).scenes.map(\.name) == ["One"])
        let empty = try MappingPatch.savingScene("One", fields: [], in: "controls: []\nscenes: []\n")
        #expect(try ControlMapping.parse(yaml: empty).scenes.map(\.name) == ["One"])
    }

    @Test func savingScene_copiesTheCurrentScenesZonesAsWritten() throws {
        let text = try String(contentsOfFile: MappingPatchTests.folder.appendingPathComponent("stage-piano.yaml").path, encoding: .utf8)
        let controls = try ControlMapping.parse(yaml: text).controls
        let patched = try MappingPatch.reachingEveryScene(3, controls: controls,
                                                         in: try MappingPatch.savingScene("Mine", fields: Self.fields, zonesOf: "Piano only", in: text))
        #expect(patched.contains("    values: [0, 1, 2]\n"))
        let mapping = try ControlMapping.parse(yaml: patched)
        let mine = try #require(mapping.scenes.first { $0.name == "Mine" })
        let piano = try #require(mapping.scenes.first { $0.name == "Piano only" })
        #expect(mine.zones != nil && mine.zones == piano.zones)
    }

    @Test func reachingEveryScene_raisesSteps_andLeavesOtherSelectorsAlone() throws {
        let text = """
            controls:
              - name: Pick    # by program change
                kind: selector
                source: { program-change: true }
                steps: 2
                targets: [scene.select]
              - name: Level
                kind: selector
                source: { cc: 7 }
                steps: 3
                targets: [strip.1.gain]
            scenes:
              - name: A
              - name: B
              - name: C
            """
        let controls = try ControlMapping.parse(yaml: text.replacingOccurrences(of: "steps: 2", with: "steps: 3")).controls
        let patched = try MappingPatch.reachingEveryScene(3, controls: controls, in: text.replacingOccurrences(of: "steps: 2", with: "steps: 3"))
        #expect(patched == text.replacingOccurrences(of: "steps: 2", with: "steps: 3"), "reaches every scene already: unchanged")
        let four = try MappingPatch.reachingEveryScene(4, controls: controls, in: patched)
        #expect(four == text.replacingOccurrences(of: "steps: 2", with: "steps: 4"))
    }

    @Test func savingScene_aFlowList_isRefusedWithWhatToDo() {
        #expect(throws: MappingPatch.Failure("'scenes:' is not a block list; add the scene by hand")) {
            try MappingPatch.savingScene("X", fields: [], in: "scenes: [{ name: A }]\n")
        }
    }
}
