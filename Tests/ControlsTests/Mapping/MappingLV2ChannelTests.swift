import Controls
import Foundation
import MIDI
import Testing

/// `channels: { N: { lv2: URI } }`: a mapping file's own LV2 instruments,
/// found before the file is read (their controls are names its targets use).
@Suite struct MappingLV2ChannelTests {
    static let yaml = """
        channels:
          3: { lv2: "http://drobilla.net/plugins/mda/JX10" }
          10: { program: 0, bank: 128 }
        controls:
          - name: Level
            kind: fader
            source: { cc: 7 }
            targets: [strip.3.gain]
        """

    @Test func lv2Channel_isReadAndFoundBeforehand() throws {
        let mapping = try ControlMapping.parse(yaml: Self.yaml, file: "m.yaml")
        #expect(mapping.channels.first { $0.channel == Channel(2) }?.lv2 == "http://drobilla.net/plugins/mda/JX10")
        #expect(mapping.channels.first { $0.channel == Channel(9) }?.lv2 == nil)
        let path = NSTemporaryDirectory() + "carillon-lv2-\(getpid()).yaml"
        try Self.yaml.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let found = ControlMapping.lv2Instruments(path: path)
        #expect(found.map(\.channel) == [2] && found.map(\.uri) == ["http://drobilla.net/plugins/mda/JX10"])
        #expect(ControlMapping.lv2Instruments(path: path + ".missing").isEmpty)
    }

    @Test(arguments: [
        ("channels:\n  3: { lv2: x, instrument: oscillator }\ncontrols: []\n", "m.yaml:2:", "has both 'instrument:' and 'lv2:'"),
        ("channels:\n  3: { lv2: \"\" }\ncontrols: []\n", "m.yaml:2:", "an empty LV2 URI"),
        ("channels: {}\ncontrols: []\nscenes:\n  - name: A\n    channels:\n      3: { lv2: x }\n", "m.yaml:6:",
         "a scene cannot change a channel's instrument"),
    ])
    func mistakes_areNamedWithTheirPlace(_ yaml: String, _ place: String, _ message: String) {
        #expect { _ = try ControlMapping.parse(yaml: yaml, file: "m.yaml") } throws: {
            "\($0)".contains(place) && "\($0)".contains(message)
        }
    }
}
