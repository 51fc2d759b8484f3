import ControlDefinitions
import Controls
import Foundation
import MIDI
import MappingFiles
import Testing

/// MIDI learn patches the mapping file's text: comments and layout stay, the
/// result reads back with the binding.
@Suite struct MappingPatchTests {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("mappings")

    static var shipped: [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.filter { $0.hasSuffix(".yaml") }.sorted()
            .map { folder.appendingPathComponent($0).path } ?? []
    }

    /// Lines that are comments, and the comment part of lines that carry one.
    static func comments(_ text: String) -> [String] {
        text.components(separatedBy: "\n").compactMap { line in
            line.range(of: "#").map { String(line[$0.lowerBound...]) }
        }
    }

    /// True when `a` is `b` with lines inserted only (every line of `a`, in order).
    static func isSubsequence(_ a: [String], of b: [String]) -> Bool {
        var i = 0
        for line in b where i < a.count && line == a[i] { i += 1 }
        return i == a.count
    }

    static let free = ControlSource(.cc(UInt7(119)), channel: Channel(15))

    @Test(arguments: shipped) func settingSource_shippedFile_keepsEveryCommentAndBinds(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let mapping = try ControlMapping.load(path: path)
        let picks = [0, mapping.controls.count / 2, mapping.controls.count - 1].map { mapping.controls[$0] }
            .filter { $0.kind != .readout && $0.pad == nil }   // (learn refuses both: no source to set)
        #expect(!picks.isEmpty)
        for control in picks {
            let patched = try MappingPatch.settingSource(Self.free, ofControl: control.name, in: text)
            #expect(Self.comments(patched) == Self.comments(text), "\(path): \(control.name)")
            let before = text.components(separatedBy: "\n"), after = patched.components(separatedBy: "\n")
            #expect(before.count == after.count)
            #expect(zip(before, after).filter { $0 != $1 }.count == 1, "one line changes")
            let reread = try ControlMapping.parse(yaml: patched, file: path)
            let bound = try #require(reread.controls.first { $0.name == control.name })
            if MappingPatch.defaultChannel(in: text) == "each" {
                // A `channel: each` control keeps listening on every channel.
                #expect(bound.source == ControlSource(.cc(UInt7(119)), channel: control.source?.channel))
            } else {
                #expect(bound.source == Self.free)
            }
        }
    }

    @Test(arguments: shipped) func appendingControl_shippedFile_insertsOnlyAndParses(path: String) throws {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let before = try ControlMapping.load(path: path)
        let patched = try MappingPatch.appendingControl([
            ("name", "Learned"), ("kind", "knob"), ("source", "{ cc: 119, channel: 16 }"), ("targets", "[tone.level]"),
        ], to: text)
        #expect(Self.isSubsequence(text.components(separatedBy: "\n"), of: patched.components(separatedBy: "\n")))
        #expect(Self.comments(patched) == Self.comments(text))
        let after = try ControlMapping.parse(yaml: patched, file: path)
        #expect(after.controls.count == before.controls.count + 1)
        let added = try #require(after.controls.last)
        #expect(added.name == "Learned")
        #expect(added.source == Self.free)
        #expect(added.targets.map(\.address) == [.strip(.tone, .gain)])
        #expect(Array(after.controls.dropLast()) == before.controls)
    }

    @Test func settingSource_blockSource_keepsItsCommentsAndTheKeysComment() throws {
        let text = """
            controls:
              - name: Level   # the big one
                kind: fader
                source:       # was on channel 2
                  # the first fader
                  cc: 7
                  channel: 2
                targets: [strip.1.gain]   # the piano
            """
        let patched = try MappingPatch.settingSource(ControlSource(.cc(UInt7(20)), channel: Channel(0)), ofControl: "Level", in: text)
        #expect(patched == """
            controls:
              - name: Level   # the big one
                kind: fader
                source: { cc: 20, channel: 1 }  # was on channel 2
                  # the first fader
                targets: [strip.1.gain]   # the piano
            """)
        #expect(try ControlMapping.parse(yaml: patched).controls[0].source == ControlSource(.cc(UInt7(20)), channel: Channel(0)))
    }

    @Test func settingSource_scalarSourceWithComment_andFlowItem() throws {
        let text = """
            channel: 3
            controls:
              - name: Bend
                kind: fader
                source: pitch-bend    # the wheel
                targets: [channel.3.pitch-bend]
              - { name: Pad, kind: pad, targets: [tone.level] }
              - { name: Hit, kind: pad, source: { note: 36 }, targets: [tone.frequency] }
            """
        var patched = try MappingPatch.settingSource(ControlSource(.cc(UInt7(1)), channel: Channel(2)), ofControl: "Bend", in: text)
        #expect(patched.contains("    source: { cc: 1 }    # the wheel\n"))
        patched = try MappingPatch.settingSource(ControlSource(.note(UInt7(40)), channel: Channel(0)), ofControl: "Pad", in: patched)
        patched = try MappingPatch.settingSource(ControlSource(.note(UInt7(41)), channel: Channel(2)), ofControl: "Hit", in: patched)
        #expect(patched.contains("  - { name: Hit, kind: pad, source: { note: 41 }, targets: [tone.frequency] }"))
        #expect(patched.contains("  - { source: { note: 40, channel: 1 }, name: Pad, kind: pad, targets: [tone.level] }"))
        let mapping = try ControlMapping.parse(yaml: patched)
        #expect(mapping.controls.map(\.source) == [
            ControlSource(.cc(UInt7(1)), channel: Channel(2)), ControlSource(.note(UInt7(40)), channel: Channel(0)),
            ControlSource(.note(UInt7(41)), channel: Channel(2)),
        ])
    }

    @Test func sourceText_nrpnAndCC14() throws {
        let text = "controls:\n  - name: A\n    kind: fader\n    source: { cc: 7 }\n    targets: [tone.level]\n"
        let nrpn = ControlSource(.nrpn(UInt14(msb: UInt7(3), lsb: UInt7(17)), bits: 7), channel: Channel(0))
        let patched = try MappingPatch.settingSource(nrpn, ofControl: "A", in: text)
        #expect(patched.contains("source: { nrpn: [3, 17], bits: 7, channel: 1 }"))
        #expect(try ControlMapping.parse(yaml: patched).controls[0].source == nrpn)
        let wide = ControlSource(.cc14(msb: UInt7(2), order: .auto), channel: Channel(4))
        #expect(try ControlMapping.parse(yaml: MappingPatch.settingSource(wide, ofControl: "A", in: text)).controls[0].source == wide)
    }

    @Test func appendingControl_emptyFlowList_becomesABlockList() throws {
        let text = "name: Empty   # starts bare\ncontrols: []  # learn fills it\n"
        let patched = try MappingPatch.appendingControl([
            ("name", "tone.level"), ("kind", "knob"), ("source", "{ cc: 70 }"), ("targets", "[tone.level]"),
        ], to: text)
        #expect(patched == "name: Empty   # starts bare\ncontrols:  # learn fills it\n  - name: tone.level\n    kind: knob\n    source: { cc: 70 }\n    targets: [tone.level]\n")
        #expect(try ControlMapping.parse(yaml: patched).controls.count == 1)
    }

    @Test func settingSource_unknownControl_fails() {
        #expect(throws: MappingPatch.Failure.self) {
            try MappingPatch.settingSource(Self.free, ofControl: "Nope", in: "controls:\n  - name: A\n")
        }
    }
}
