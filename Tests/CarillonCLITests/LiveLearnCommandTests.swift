import Foundation
import Testing

/// `carillon live` on a terminal: keys choose a control and arm MIDI learn
/// (MIDI itself cannot come in without ALSA here: the binding is tested in
/// CarillonTests' LiveLearnTests).
@Suite(.serialized) struct LiveLearnCommandTests {
    typealias R = RenderCommandTests

    @Test func live_keys_chooseArmAndCancelLearn() throws {
        let dir = NSTemporaryDirectory() + "carillon-cli-learn-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let original = try String(contentsOf: repository.appendingPathComponent("mappings/korg-nanokontrol2.yaml"), encoding: .utf8)
        try original.write(toFile: "\(dir)/m.yaml", atomically: true, encoding: .utf8)
        // `script` passes what it reads to the program's terminal: ↓, l, then x.
        let keys = "(sleep 1; printf '\\033[Bl'; sleep 0.8; printf x; sleep 1.5)"
        let (text, status) = try runOnPseudoTerminal(
            "\(keys) | script -qec '\(R.carillon) live --no-audio --mapping \(dir)/m.yaml --duration 2.5' /dev/null")
        #expect(status == 0)
        #expect(text.contains("keys: ↑/↓ choose a control, l learn its MIDI source, x cancel, s next scene"))
        #expect(text.contains(" > Knob 1 "))   // ↓ chose the second control
        #expect(text.contains("learning: Knob 1 — move a control on your controller"))
        #expect(text.contains("learn cancelled for 'Knob 1'"))
        #expect(text.contains("carillon live: ended."))
        #expect(try String(contentsOfFile: "\(dir)/m.yaml", encoding: .utf8) == original)
    }

    @Test func live_sKey_switchesToTheNextScene() throws {
        let dir = NSTemporaryDirectory() + "carillon-cli-scene-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try """
            controls:
              - name: Level
                kind: fader
                source: { cc: 7 }
                targets: [strip.1.gain]
            scenes:
              - name: Quiet
                controls: { Level: -30 }
              - name: Loud
                controls: { Level: 0 }
            """.write(toFile: "\(dir)/m.yaml", atomically: true, encoding: .utf8)
        // One key: two could both reach a live that starts late (a loaded machine, CI of
        // 2026-11-29) and switch twice between redraws, so the screen never showed "Loud".
        let keys = "(sleep 0.8; printf s; sleep 1.8)"
        let (text, status) = try runOnPseudoTerminal(
            "\(keys) | script -qec '\(R.carillon) live --no-audio --mapping \(dir)/m.yaml --duration 2.2' /dev/null")
        #expect(status == 0)
        #expect(text.contains("scene 1/2: Quiet"))
        #expect(text.contains("-30.0 dB"))
        #expect(text.contains("scene 2/2: Loud"))
    }
}
