import Controls
import Foundation
import MIDI
import MappingFiles
import Testing

/// `channels: { N: { lv2: URI } }` and `inserts:`: a mapping file's own LV2
/// plugins, found before the file is read (their controls are names its targets use).
@Suite struct MappingLV2ChannelTests {
    static let yaml = """
        channels:
          3: { lv2: "http://drobilla.net/plugins/mda/JX10" }
          10: { program: 0, bank: 128 }
        inserts:
          master: ["http://drobilla.net/plugins/mda/Delay", "http://drobilla.net/plugins/mda/Overdrive"]
          3: "http://drobilla.net/plugins/mda/Stereo"
          track2: [urn:b]
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
        let found = ControlMapping.lv2Plugins(path: path)
        #expect(found.instruments.map(\.channel) == [2] && found.instruments.map(\.uri) == ["http://drobilla.net/plugins/mda/JX10"])
        #expect(found.inserts == mapping.inserts)
        let missing = ControlMapping.lv2Plugins(path: path + ".missing")
        #expect(missing.instruments.isEmpty && missing.inserts.isEmpty)
    }

    @Test func inserts_keepEachStripsOrder() throws {
        let mapping = try ControlMapping.parse(yaml: Self.yaml, file: "m.yaml")
        #expect(mapping.inserts == [
            MappingInsert(strip: "master", uri: "http://drobilla.net/plugins/mda/Delay"),
            MappingInsert(strip: "master", uri: "http://drobilla.net/plugins/mda/Overdrive"),
            MappingInsert(strip: "3", uri: "http://drobilla.net/plugins/mda/Stereo"),
            MappingInsert(strip: "track2", uri: "urn:b"),
        ])
    }

    @Test(arguments: [
        ("channels:\n  3: { lv2: x, instrument: oscillator }\ncontrols: []\n", "m.yaml:2:", "has both 'instrument:' and 'lv2:'"),
        ("channels:\n  3: { lv2: \"\" }\ncontrols: []\n", "m.yaml:2:", "an empty LV2 URI"),
        ("channels: {}\ncontrols: []\nscenes:\n  - name: A\n    channels:\n      3: { lv2: x }\n", "m.yaml:6:",
         "a scene cannot change a channel's instrument"),
        ("inserts:\n  reverb: [x]\ncontrols: []\n", "m.yaml:2:3", "unknown strip 'reverb' for inserts"),
        ("inserts:\n  17: x\ncontrols: []\n", "m.yaml:2:3", "unknown strip '17'"),
        ("inserts:\n  master: []\ncontrols: []\n", "m.yaml:2:11", "strip master lists no insert"),
        ("inserts:\n  master: [\"\"]\ncontrols: []\n", "m.yaml:2:", "an empty LV2 URI"),
        ("inserts: [x]\ncontrols: []\n", "m.yaml:1:10", "expected a mapping from strip"),
    ])
    func mistakes_areNamedWithTheirPlace(_ yaml: String, _ place: String, _ message: String) {
        #expect { _ = try ControlMapping.parse(yaml: yaml, file: "m.yaml") } throws: {
            "\($0)".contains(place) && "\($0)".contains(message)
        }
    }
}
