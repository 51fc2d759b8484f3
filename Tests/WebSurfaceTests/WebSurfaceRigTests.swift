import Controls
import Foundation
import MIDI
import MappingFiles
import Parameters
import Testing
import WebSocketClient
@testable import WebSurface

/// The rig on the page: the hello holds the mapping's scenes, the current one
/// and its zones; a scene switch sends them again (`scene`); a reload a new hello.
@Suite(.serialized) struct WebSurfaceRigTests {
    /// The stage piano as `live` starts it: in its first scene.
    static func stagePianoHub() throws -> ControlHub {
        let hub = ControlHub(mapping: try ControlMapping.load(path: mappingsFolder.appendingPathComponent("stage-piano.yaml").path))
        hub.set(.sceneSelect, to: 0)
        return hub
    }

    static func zones(_ message: [String: Any]) -> [[String: Any]] { message["zones"] as? [[String: Any]] ?? [] }

    @Test func zoneMessage_saysEverythingTheStripDraws() throws {
        let zones = ZoneSummary.list(try ControlMapping.parse(yaml: """
            zones:
              - { name: Bass, keys: C-1..B2, to: 2, transpose: 12 }
              - { name: Soft, keys: C3..G9, velocities: 1..63, to: [1, { port: "Hardware Synth", channel: 3 }], velocity: { scale: 0.6, offset: 10 } }
            """).zones)
        let text = JSON.encode(zones.map(ZoneMessage.init))
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
        #expect(decoded.count == 2)
        let bass = decoded[0], soft = decoded[1]
        #expect(bass["name"] as? String == "Bass")
        #expect(bass["low"] as? Int == 0 && bass["high"] as? Int == 47 && bass["keys"] as? String == "C-1..B2")
        #expect(bass["row"] as? Int == 0 && bass["transpose"] as? Int == 12)
        #expect(bass["short"] as? String == "ch 2 +12")
        #expect(bass["spoken"] as? String == "Bass: keys C-1 to B2, to channel 2, transposed +12 semitones")
        #expect((bass["to"] as? [[String: Any]])?.map { $0["channel"] as? Int } == [2])
        #expect(bass["velocity"] == nil && bass["velocities"] == nil && bass["takes"] == nil)
        #expect(soft["low"] as? Int == 48 && soft["high"] as? Int == 127 && soft["row"] as? Int == 0)
        let to = try #require(soft["to"] as? [[String: Any]])
        #expect(to.count == 2 && to[0]["port"] == nil && to[0]["channel"] as? Int == 1)
        #expect(to[1]["port"] as? String == "Hardware Synth" && to[1]["channel"] as? Int == 3)
        #expect(soft["velocity"] as? String == "×0.6+10" && soft["velocities"] as? String == "1..63")
        #expect(soft["takes"] as? String == "vel 1..63")
        #expect(soft["short"] as? String == "ch 1 + Hardware Synth ch 3 vel ×0.6+10")
    }

    @Test func hello_holdsTheScenesTheCurrentOneAndItsZones() throws {
        let (surface, port) = try serving(try Self.stagePianoHub())
        defer { surface.stop() }
        let hello = try RawClient.webSocket(port: port).receive(type: "hello")
        #expect(hello["scenes"] as? [String] == ["Split", "Piano only"])
        #expect(hello["scene"] as? Int == 0)
        let zones = Self.zones(hello)
        #expect(zones.map { $0["name"] as? String } == ["Bass", "Piano", "Strings", "Synth"])
        #expect(zones.map { $0["keys"] as? String } == ["C-1..B2", "C3..G9", "C3..G9", "C5..G9"])
        #expect(zones.map { $0["row"] as? Int } == [0, 0, 1, 2])
        #expect(zones.map { $0["short"] as? String } == ["ch 2 +12", "ch 1", "ch 3 vel ×0.6+10", "Hardware Synth ch 1"])
    }

    @Test func hello_withoutARig_hasNoZonesNorScene() throws {
        let (surface, port) = try serving(try nanoKontrolHub())
        defer { surface.stop() }
        let hello = try RawClient.webSocket(port: port).receive(type: "hello")
        #expect(hello["scenes"] as? [String] == [])
        #expect(Self.zones(hello).isEmpty && hello["zones"] != nil)
        #expect(hello["scene"] == nil)
    }

    @Test func programChange_sendsTheNewSceneAndItsZones() throws {
        let hub = try Self.stagePianoHub()
        let (surface, port) = try serving(hub)
        defer { surface.stop() }
        let pages = try (0..<2).map { _ in try RawClient.webSocket(port: port) }
        for p in pages { _ = try p.receive(type: "hello") }
        // The mapping's scene selector: program changes on channel 16.
        #expect(hub.receive(.programChange(1, channel: Channel(15))))
        for p in pages {
            let scene = try p.receive(type: "scene", within: 2)
            #expect(scene["scene"] as? Int == 1)
            #expect(scene["scenes"] as? [String] == ["Split", "Piano only"])
            let zones = Self.zones(scene)
            #expect(zones.map { $0["name"] as? String } == ["Piano"])
            #expect(zones.first?["low"] as? Int == 0 && zones.first?["high"] as? Int == 127)
            #expect(zones.first?["velocity"] as? String == "s-curve 2")
        }
        _ = hub.receive(.programChange(0, channel: Channel(15)))
        let back = try pages[0].receive(type: "scene", within: 2)
        #expect(back["scene"] as? Int == 0 && Self.zones(back).count == 4)
    }

    @Test func thePagesSceneButton_switchesTheHubsScene() throws {
        let hub = try Self.stagePianoHub()
        let (surface, port) = try serving(hub)
        defer { surface.stop() }
        let ws = try RawClient.webSocket(port: port)
        _ = try ws.receive(type: "hello")
        try ws.send(text: #"{"type":"set","parameter":"scene.select","value":1}"#)
        let scene = try ws.receive(type: "scene", within: 2)
        #expect(scene["scene"] as? Int == 1 && Self.zones(scene).map { $0["name"] as? String } == ["Piano"])
        #expect(hub.currentScene == "Piano only")
        // The page's scene control (the mapping's selector) goes the same way.
        try ws.send(text: #"{"type":"control","name":"Scene","position":0}"#)
        #expect(try ws.receive(type: "scene", within: 2)["scene"] as? Int == 0)
        #expect(hub.currentScene == "Split")
    }

    @Test func reload_newHelloCarriesTheNewZones() throws {
        let hub = try Self.stagePianoHub()
        let (surface, port) = try serving(hub)
        defer { surface.stop() }
        let ws = try RawClient.webSocket(port: port)
        _ = try ws.receive(type: "hello")
        // The file edited as a player would: the bass two octaves up.
        let file = mappingsFolder.appendingPathComponent("stage-piano.yaml").path
        let text = try String(contentsOfFile: file, encoding: .utf8)
        let line = "{ name: Bass,    keys: C-1..B2, to: 2, transpose: 12 }"
        #expect(text.contains(line))
        hub.replace(mapping: try ControlMapping.parse(yaml: text.replacingOccurrences(
            of: line, with: "{ name: Low bass, keys: C-1..B2, to: 2, transpose: 24 }")))
        let hello = try ws.receive(type: "hello", within: 2)
        // No scene is current after a reload: the top level's zones are in force.
        #expect(hello["scene"] == nil)
        #expect(Self.zones(hello).first?["name"] as? String == "Low bass")
        #expect(Self.zones(hello).first?["short"] as? String == "ch 2 +24")
    }
}
