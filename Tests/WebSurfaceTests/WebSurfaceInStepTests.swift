import Controls
import Foundation
import MIDI
import MappingFiles
import Parameters
import Testing
import WebSocketClient
@testable import WebSurface

/// The surface in step with the hub: after a reload or a learned binding,
/// open pages and pages opened later hold exactly the host's controls, with
/// their new ranges and curves.
@Suite(.serialized) struct WebSurfaceInStepTests {
    static let before = """
        name: before
        controls:
          - { name: Vol, kind: fader, source: { cc: 7, channel: 1 }, targets: [master.gain], soft-takeover: false }
          - { name: Old, kind: knob, source: { cc: 10, channel: 1 }, targets: [strip.1.pan], soft-takeover: false }
        """
    /// Vol's range changed, Old gone, New added.
    static let after = """
        name: after
        controls:
          - { name: Vol, kind: fader, source: { cc: 7, channel: 1 }, targets: [{ address: master.gain, range: [-20, 0] }], range: [-20, 0], soft-takeover: false }
          - { name: New, kind: knob, source: { cc: 11, channel: 1 }, targets: [strip.2.pan], soft-takeover: false }
        """

    static func names(_ hello: [String: Any]) -> [String] { controls(in: hello).compactMap { $0["name"] as? String } }

    /// Moves New and Vol and tries Old: what a page of the `after` mapping may do.
    static func expectAfter(_ ws: RawClient, _ hub: ControlHub) throws {
        try ws.send(text: #"{"type":"control","name":"New","position":1}"#)
        try ws.send(text: #"{"type":"control","name":"Vol","position":1}"#)
        try ws.send(text: #"{"type":"control","name":"Old","position":1}"#)
        #expect(try ws.receive(type: "refused")["reason"] as? String == "unknown-control")
        #expect(hub.value(of: .strip(.channel(Channel(1)), .pan)) == 1)
        // The new range: the top of Vol's travel is 0 dB now, not the old 6.
        #expect(hub.value(of: .masterGain) == 0)
    }

    @Test func reload_reachesAnOpenPage_asANewHello() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.before))
        let (surface, port) = try serving(hub)
        defer { surface.stop() }
        let ws = try RawClient.webSocket(port: port)
        #expect(Self.names(try ws.receive(type: "hello")) == ["Vol", "Old"])
        hub.replace(mapping: try ControlMapping.parse(yaml: Self.after))
        let hello = try ws.receive(type: "hello", within: 2)
        #expect(hello["mapping"] as? String == "after")
        #expect(Self.names(hello) == ["Vol", "New"])
        try Self.expectAfter(ws, hub)
    }

    @Test func reload_thenAPageOpenedAfter_hasTheNewControls() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.before))
        let (surface, port) = try serving(hub)
        defer { surface.stop() }
        hub.replace(mapping: try ControlMapping.parse(yaml: Self.after))
        let ws = try RawClient.webSocket(port: port)
        #expect(Self.names(try ws.receive(type: "hello")) == ["Vol", "New"])
        try Self.expectAfter(ws, hub)
    }

    @Test func severalReloadsWithinOneTick_thePageEndsOnTheLast() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.before))
        let (surface, port) = try serving(hub)
        defer { surface.stop() }
        let ws = try RawClient.webSocket(port: port)
        _ = try ws.receive(type: "hello")
        // Three swaps faster than the 20 ms tick: before → after → before → after.
        hub.replace(mapping: try ControlMapping.parse(yaml: Self.after))
        hub.replace(mapping: try ControlMapping.parse(yaml: Self.before))
        hub.replace(mapping: try ControlMapping.parse(yaml: Self.after))
        var last = try ws.receive(type: "hello", within: 2)
        // Any later hello is for a later look; the last one is the hub's current set.
        while let more = try? ws.receive(type: "hello", within: 0.3) { last = more }
        #expect(Self.names(last) == ["Vol", "New"])
        #expect((last["groups"] as? [[String: Any]])?.flatMap { $0["controls"] as? [String] ?? [] }.sorted() == ["New", "Vol"])
        try Self.expectAfter(ws, hub)
    }

    @Test func twoPages_bothGetTheNewSet_andStayInStep() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.before))
        let (surface, port) = try serving(hub)
        defer { surface.stop() }
        let pages = try (0..<2).map { _ in try RawClient.webSocket(port: port) }
        for p in pages { _ = try p.receive(type: "hello") }
        hub.replace(mapping: try ControlMapping.parse(yaml: Self.after))
        for p in pages { #expect(Self.names(try p.receive(type: "hello", within: 2)) == ["Vol", "New"]) }
        // One page moves New; the other sees it.
        try pages[0].send(text: #"{"type":"control","name":"New","position":0}"#)
        var seen: [String: Any]?
        while seen == nil { seen = controls(in: try pages[1].receive(type: "controls")).first { $0["name"] as? String == "New" } }
        #expect(seen?["value"] as? Double == -1)
    }

    @Test func learnedControl_appearsOnTheOpenPage_andMoves() throws {
        let dir = NSTemporaryDirectory() + "carillon-web-learn-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/m.yaml"
        try Self.before.write(toFile: path, atomically: true, encoding: .utf8)
        let hub = ControlHub(mapping: try ControlMapping.load(path: path))
        let (surface, port) = try serving(hub)
        defer { surface.stop() }
        let ws = try RawClient.webSocket(port: port)
        _ = try ws.receive(type: "hello")
        try hub.learn(.parameter(.strip(.channel(Channel(4)), .gain)))
        #expect(hub.receive(.cc(74, value: 90, channel: Channel(0))))   // binds at once (CC 64–127)
        let hello = try ws.receive(type: "hello", within: 2)
        #expect(Self.names(hello) == ["Vol", "Old", "strip.5.gain"])
        try ws.send(text: #"{"type":"control","name":"strip.5.gain","position":0}"#)
        try ws.send(text: #"{"type":"ping"}"#)
        _ = try ws.receive(type: "pong")
        #expect(hub.value(of: .strip(.channel(Channel(4)), .gain)) == -60)
        #expect(surface.counters.refusedTotal == 0)
    }
}
