import ControlDefinitions
import Hosting
import Controls
import Foundation
import MIDI
import Parameters
import Testing

/// MIDI learn through the live host: a message fed as if from the sequencer
/// binds, the file gains the binding, the watcher's reload changes nothing more.
@Suite(.serialized) struct LiveLearnTests {
    static let text = """
        # Kept: a comment the user wrote.
        name: Live learn
        controls:
          - name: Level
            kind: fader
            source: { cc: 7 }    # the volume fader
            soft-takeover: false
            targets: [strip.1.gain]
        """

    @Test func receive_whileLearning_bindsWritesAndTheReloadKeepsIt() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/m.yaml"
        try Self.text.write(toFile: path, atomically: true, encoding: .utf8)
        let host = try watchingHostWithoutAudio(mapping: path)
        try host.start()
        defer { host.stop() }

        try host.hub.learn(.control("Level"))
        host.receive(.cc(UInt7(20), value: UInt7(90), channel: Channel(1)))   // a pair candidate: the control thread's tick binds it
        var log: [String] = []
        #expect(waitFor { log += host.takeLog(); return log.contains { $0.hasPrefix("learned: 'Level' ← CC 20 on channel 2") } }, "\(log)")
        #expect(log.contains("learning: Level — move a control on your controller"))
        let file = try String(contentsOfFile: path, encoding: .utf8)
        #expect(file.contains("    source: { cc: 20, channel: 2 }    # the volume fader\n"))
        #expect(file.contains("# Kept: a comment the user wrote."))
        // The watcher sees the saved file and reloads it: the same binding.
        #expect(waitFor { log += host.takeLog(); return log.contains { $0.hasPrefix("mapping reloaded") } }, "\(log)")
        #expect(host.hub.mapping?.controls.first?.source == ControlSource(.cc(UInt7(20)), channel: Channel(1)))
        host.receive(.cc(UInt7(20), value: UInt7(0), channel: Channel(1)))
        #expect(host.hub.value(of: .strip(.channel(0), .gain)) == ParameterRegistry.standard.info(for: .strip(.channel(0), .gain)).range.lowerBound)
    }
}
