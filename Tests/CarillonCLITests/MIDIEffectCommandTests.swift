import Foundation
import Testing

/// A zone's `midi-fx` that cannot run is a clear error at load, naming the
/// zone, the URI and what to do: in `mapping check` and in `render`.
@Suite struct MIDIEffectCommandTests {
    static let x42 = "http://gareus.org/oss/lv2/midifilter#"

    static func mapping(_ uri: String, to: String = "2", name: String) throws -> String {
        try MappingCommandTests.write("""
        zones:
          - { name: Piano, keys: C4..G9, to: 1 }
          - { name: Left hand, keys: C-1..B3, to: \(to), midi-fx: ["\(uri)"] }
        """, name: name)
    }

    /// Its controls are parameters the file's own controls may target (`fx.ZONE.K.SYMBOL`).
    @Test func check_installedMIDIEffect_passes_andItsControlsAreTargets() throws {
        let path = try MappingCommandTests.write("""
        zones:
          - { name: Left hand, keys: C-1..B3, to: 2, midi-fx: ["\(Self.x42)midichord"] }
        controls:
          - { name: Scale, kind: knob, source: { cc: 21 }, range: [0, 11], targets: [fx.left-hand.1.scale] }
        """, name: "fx-ok.yaml")
        let r = try InspectTests.run(["mapping", "check", path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty)
        let unknown = try MappingCommandTests.write("""
        zones:
          - { name: Left hand, keys: C-1..B3, to: 2, midi-fx: ["\(Self.x42)midichord"] }
        controls:
          - { name: Scale, kind: knob, source: { cc: 21 }, range: [0, 11], targets: [fx.left-hand.1.scales] }
        """, name: "fx-typo.yaml")
        let typo = try InspectTests.run(["mapping", "check", unknown])
        #expect(typo.status == 1 && typo.stderr.contains("did you mean 'fx.left-hand.1.scale'"), "\(typo.stderr)")
    }

    @Test func check_uriNotInstalled_namesTheZoneTheURIAndWhatToDo() throws {
        let path = try Self.mapping("urn:example:no-such-arpeggiator", name: "fx-missing.yaml")
        let r = try InspectTests.run(["mapping", "check", path])
        #expect(r.status == 1)
        #expect(r.stderr.contains("\(path):3:56: error: zone 'Left hand', midi-fx urn:example:no-such-arpeggiator: no LV2 plugin with this URI is installed"), "\(r.stderr)")
        #expect(r.stderr.contains("`carillon plugins MIDI` lists"), "\(r.stderr)")
    }

    @Test(arguments: [("http://drobilla.net/plugins/mda/Delay", "an audio effect goes in inserts:"),
                      ("http://drobilla.net/plugins/mda/Piano", "an instrument plays a channel")])
    func check_pluginWithoutMIDIInAndOut_isRefused(uri: String, hint: String) throws {
        let path = try Self.mapping(uri, name: "fx-audio-\(uri.split(separator: "/").last!).yaml")
        let r = try InspectTests.run(["mapping", "check", path])
        #expect(r.status == 1)
        #expect(r.stderr.contains("zone 'Left hand', midi-fx \(uri):") && r.stderr.contains("is not a MIDI effect: it has")
                && r.stderr.contains("0 MIDI outputs") && r.stderr.contains(hint) && r.stderr.contains("`carillon plugins MIDI`"), "\(r.stderr)")
    }

    /// Every mistake at once, each at its line and column, in `mapping check` and
    /// at load: a URI not installed, a plugin that is no MIDI effect (even as the
    /// second of a zone's plugins, before its name), and a zone's own mistake.
    @Test func everyMistake_atItsLineAndColumn_inCheckAndAtLoad() throws {
        let path = try MappingCommandTests.write("""
        zones:
          - { name: Left hand, keys: C-1..B3, to: 2, midi-fx: ["urn:example:no-such-arpeggiator"] }
          - { midi-fx: ["\(Self.x42)midichord", "http://drobilla.net/plugins/mda/Delay"], name: Chords, to: 3 }
          - { name: Backwards, keys: C4..C3, to: 1 }
        """, name: "fx-all-at-once.yaml")
        let expected = [
            "\(path):2:56: error: zone 'Left hand', midi-fx urn:example:no-such-arpeggiator: no LV2 plugin with this URI is installed",
            "\(path):3:67: error: zone 'Chords', midi-fx http://drobilla.net/plugins/mda/Delay: MDA Delay is not a MIDI effect",
            "\(path):4:30: error: key range is backwards: C4 (60) is above C3 (48)",
        ]
        let check = try InspectTests.run(["mapping", "check", path])
        #expect(check.status == 1)
        for line in expected { #expect(check.stderr.contains(line), "\(check.stderr)") }
        #expect(check.stderr.split(separator: "\n").count == 3, "\(check.stderr)")
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let render = try RenderCommandTests.carillon(["render", "\(RenderCommandTests.openmsx)/train_filled_with_cash.mid", "-o", "\(dir)/out.wav",
                                                      "--soundfont", RenderCommandTests.timGM, "--mapping", path, "--take"])
        #expect(render.status == 1)
        for line in expected { #expect(render.stderr.contains(line), "\(render.stderr)") }
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/out.wav"))
    }

    /// A chain may send to an external port; offline its port messages are not rendered, the channel's are.
    @Test func midiFXToAnExternalPort_checks_andRendersItsChannel() throws {
        let path = try Self.mapping(Self.x42 + "midichord", to: "[2, { port: Synth, channel: 1 }]", name: "fx-port.yaml")
        let r = try InspectTests.run(["mapping", "check", path])
        #expect(r.status == 0, "\(r.stderr)")
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let render = try RenderCommandTests.carillon(["render", "\(RenderCommandTests.openmsx)/train_filled_with_cash.mid", "-o", "\(dir)/out.wav",
                                                      "--soundfont", RenderCommandTests.timGM, "--mapping", path, "--take", "--labels"])
        #expect(render.status == 0, "\(render.stderr)")
        // Columns onset, offset, pitch, velocity, channel (1-based), …: the left hand's chords on channel 2.
        let rows = try String(contentsOfFile: "\(dir)/out.notes.csv", encoding: .utf8).split(separator: "\n").dropFirst()
            .map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        let low = rows.filter { Int($0[2]).map { $0 < 60 } ?? false }
        #expect(!low.isEmpty && low.allSatisfy { $0[4] == "2" }, "\(low.prefix(3))")
    }

    @Test func render_withAMissingMIDIEffect_failsBeforeRendering() throws {
        let path = try Self.mapping("urn:example:no-such-arpeggiator", name: "fx-render.yaml")
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try RenderCommandTests.carillon(["render", "\(RenderCommandTests.openmsx)/train_filled_with_cash.mid", "-o", "\(dir)/out.wav",
                                                 "--soundfont", RenderCommandTests.timGM, "--mapping", path, "--take"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("zone 'Left hand', midi-fx urn:example:no-such-arpeggiator"), "\(r.stderr)")
        #expect(RenderCommandTests.contents(dir).isEmpty)
    }
}
