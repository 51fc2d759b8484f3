import ControlDefinitions
import Controls
import Foundation
import MIDI
import MappingFiles
import Parameters
import Testing
import WebSocketClient
@testable import WebSurface

/// The repository's `mappings/` folder.
let mappingsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("mappings")

func shippedMappings() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: mappingsFolder.path).filter { $0.hasSuffix(".yaml") }.sorted()
        .map { mappingsFolder.appendingPathComponent($0).path }
}

func nanoKontrolHub() throws -> ControlHub {
    ControlHub(mapping: try ControlMapping.load(path: mappingsFolder.appendingPathComponent("korg-nanokontrol2.yaml").path))
}

/// A surface on a free loopback port.
func serving(_ hub: ControlHub, _ edit: (inout WebSurfaceConfiguration) -> Void = { _ in }) throws -> (WebSurface, Int) {
    var config = WebSurfaceConfiguration(port: 0)
    edit(&config)
    let surface = try WebSurface(hub: hub, configuration: config)
    return (surface, try surface.start())
}

func controls(in message: [String: Any]) -> [[String: Any]] { message["controls"] as? [[String: Any]] ?? [] }

@Suite("WebSurface configuration")
struct WebSurfaceConfigurationTests {
    @Test func parse_addressForms() throws {
        #expect(try WebSurfaceConfiguration.parse("8080") == ("127.0.0.1", 8080))
        #expect(try WebSurfaceConfiguration.parse("0.0.0.0:9000") == ("0.0.0.0", 9000))
        #expect(try WebSurfaceConfiguration.parse("[::1]:81") == ("::1", 81))
        for bad in ["", "x", "80a", "1.2.3.4:", ":80", "70000", "[::1]80", "a:b:80"] {
            #expect(throws: WebSurfaceConfiguration.Failure.badAddress(bad)) { try WebSurfaceConfiguration.parse(bad) }
        }
    }

    @Test func loopback_namesAndRanges() {
        for h in ["127.0.0.1", "127.1.2.3", "localhost", "::1"] { #expect(WebSurfaceConfiguration.isLoopback(h)) }
        for h in ["0.0.0.0", "192.168.1.10", "::", "127.0.0", "evil.example"] { #expect(!WebSurfaceConfiguration.isLoopback(h)) }
    }

    @Test func nonLoopbackBind_withoutToken_refusedAtStart() throws {
        let hub = ControlHub(mapping: nil)
        #expect(throws: WebSurfaceConfiguration.Failure.tokenRequired("0.0.0.0")) {
            try WebSurface(hub: hub, configuration: WebSurfaceConfiguration(host: "0.0.0.0", port: 0))
        }
        #expect(throws: WebSurfaceConfiguration.Failure.weakToken) {
            try WebSurface(hub: hub, configuration: WebSurfaceConfiguration(host: "0.0.0.0", port: 0, token: "short"))
        }
        #expect(WebSurfaceConfiguration.generateToken().count == 32)
    }
}

@Suite("WebSurface server", .serialized)
struct WebSurfaceServerTests {
    @Test func nonLoopbackBind_everyRequestWithoutToken_answers401() throws {
        let token = WebSurfaceConfiguration.generateToken()
        // Bound to every interface, reached only through loopback here.
        let (surface, port) = try serving(ControlHub(mapping: nil)) { $0.host = "0.0.0.0"; $0.token = token }
        defer { surface.stop() }
        #expect(try RawClient(port: port).get("/").status == 401)
        #expect(try RawClient(port: port).get("/?token=wrong-token-0000000000").status == 401)
        // A refused upgrade: 401 with the reason, counted as unauthorized.
        let upgrade = try RawClient(port: port)
        let refused = try upgrade.get("/ws", upgrade: true)
        #expect(refused.status == 401, "\(refused.head)")
        #expect(refused.head.lowercased().contains("www-authenticate: bearer"))
        #expect(try upgrade.body(of: refused.head) == "unauthorized: missing or wrong token (give ?token=… or Authorization: Bearer …)\n")
        #expect(try RawClient(port: port).get("/?token=\(token)").status == 200)
        #expect(try RawClient(port: port).get("/", headers: ["Authorization": "Bearer \(token)"]).status == 200)
        let ws = try RawClient.webSocket(port: port, query: "?token=\(token)")
        #expect(try ws.receive(type: "hello")["version"] as? Int == 1)
        #expect(surface.counters.unauthorized == 3)
    }

    @Test func webSocket_foreignOrigin_refused() throws {
        let (surface, port) = try serving(try nanoKontrolHub())
        defer { surface.stop() }
        let foreign = try RawClient(port: port).get("/ws", headers: ["Host": "127.0.0.1:\(port)", "Origin": "http://evil.example"], upgrade: true)
        #expect(foreign.status == 403, "\(foreign.head)")   // not 101: no WebSocket
        #expect(surface.counters.forbidden == 1)
        #expect(surface.counters.connections == 0)
        // The page's own origin is let in.
        let own = try RawClient.webSocket(port: port, headers: ["Host": "127.0.0.1:\(port)", "Origin": "http://127.0.0.1:\(port)"])
        _ = try own.receive(type: "hello")
        #expect(surface.counters.connections == 1)
    }

    /// A refusal is not a malformed request: 401 (token) or 403 (Origin, Host), the reason
    /// in one line, the connection closed; a wrong token over a foreign Origin is 401.
    @Test(arguments: [
        (["Origin": "http://evil.example"], "?token=TOKEN", 403, "forbidden: origin 'http://evil.example' is not this page's"),
        ([:], "?token=wrong-token-0000000000", 401, "unauthorized: missing or wrong token (give ?token=… or Authorization: Bearer …)"),
        (["Authorization": "Bearer nope"], "", 401, "unauthorized: missing or wrong token (give ?token=… or Authorization: Bearer …)"),
    ])
    func refusedUpgrade_answers401or403_withAOneLineReason(headers: [String: String], query: String, status: Int, reason: String) throws {
        let token = WebSurfaceConfiguration.generateToken()
        let (surface, port) = try serving(try nanoKontrolHub()) { $0.token = token }
        defer { surface.stop() }
        let client = try RawClient(port: port)
        var sent = headers
        sent["Host"] = "127.0.0.1:\(port)"
        let r = try client.get("/ws" + query.replacingOccurrences(of: "TOKEN", with: token), headers: sent, upgrade: true)
        #expect(r.status == status, "\(r.head)")
        #expect(try client.body(of: r.head) == reason + "\n")
        #expect(r.head.lowercased().contains("connection: close"))
        #expect(surface.counters.connections == 0)
        #expect(surface.counters.unauthorized + surface.counters.forbidden == 1)
        // The same page with its token and Origin is let in.
        let own = try RawClient.webSocket(port: port, query: "?token=\(token)",
                                          headers: ["Host": "127.0.0.1:\(port)", "Origin": "http://127.0.0.1:\(port)"])
        _ = try own.receive(type: "hello")
    }

    @Test func loopbackWithoutToken_foreignHostName_refused() throws {
        // DNS rebinding: a name of the attacker's that resolves to 127.0.0.1.
        let (surface, port) = try serving(ControlHub(mapping: nil))
        defer { surface.stop() }
        #expect(try RawClient(port: port).get("/", headers: ["Host": "rebind.example:\(port)"]).status == 403)
        let upgrade = try RawClient(port: port)
        let ws = try upgrade.get("/ws", headers: ["Host": "rebind.example:\(port)"], upgrade: true)
        #expect(ws.status == 403)
        #expect(try upgrade.body(of: ws.head) == "forbidden: host 'rebind.example:\(port)' is not a loopback name\n")
        #expect(try RawClient(port: port).get("/", headers: ["Host": "localhost:\(port)"]).status == 200)
    }

    @Test func hello_listsEveryControlOfEachShippedMapping() throws {
        let files = try shippedMappings()
        #expect(files.count >= 4)
        for file in files {
            let hub = ControlHub(mapping: try ControlMapping.load(path: file))
            let (surface, port) = try serving(hub)
            defer { surface.stop() }
            let hello = try RawClient.webSocket(port: port).receive(type: "hello")
            let sent = controls(in: hello)
            #expect(sent.map { $0["name"] as? String } == hub.controlStates.map(\.name), "\(file)")
            for (c, s) in zip(sent, hub.controlStates) {
                #expect(c["kind"] as? String == s.kind.rawValue)
                #expect(c["unit"] as? String == s.unit.rawValue)
                #expect(c["display"] as? String == s.display)
            }
            // Every control in exactly one group, in the hub's groups' order.
            let groups = hello["groups"] as? [[String: Any]] ?? []
            let expected = hub.controlSet.groups
            #expect(groups.map { $0["name"] as? String } == expected.map(\.name), "\(file)")
            #expect(groups.map { $0["controls"] as? [String] ?? [] } == expected.map(\.controls))
            #expect(groups.map { $0["strip"] as? String } == expected.map { $0.strip?.key })
            #expect(groups.flatMap { $0["controls"] as? [String] ?? [] }.sorted() == hub.controlStates.map(\.name).sorted())
        }
    }

    @Test func controlPosition_takesTheHardwarePath() throws {
        let hub = try nanoKontrolHub()
        let (surface, port) = try serving(hub)
        defer { surface.stop() }
        let ws = try RawClient.webSocket(port: port)
        _ = try ws.receive(type: "hello")
        // Fader 1: logarithmic curve onto -60…6 dB, like CC 0 at the same travel.
        // (The hardware must first pick up the fader's value: sweep down from the top.)
        let reference = try nanoKontrolHub()
        for v in (64...127).reversed() { _ = reference.receive(.cc(0, value: UInt7(v), channel: Channel(0))) }
        let expected = reference.value(of: .strip(.channel(Channel(0)), .gain))
        try ws.send(text: #"{"type":"control","name":"Fader 1","position":\#(64.0 / 127)}"#)
        let update = try ws.receive(type: "controls")
        #expect(controls(in: update).first?["name"] as? String == "Fader 1")
        #expect(abs(hub.value(of: .strip(.channel(Channel(0)), .gain)) - expected) < 1e-6)
        #expect(expected != ParameterAddress.strip(.channel(Channel(0)), .gain).spec.defaultValue)
        // A value in the control's own unit, and a parameter by address.
        try ws.send(text: #"{"type":"control","name":"Fader 1","value":-12}"#)
        try ws.send(text: #"{"type":"set","parameter":"master.gain","value":-3}"#)
        try ws.send(text: #"{"type":"ping"}"#)
        _ = try ws.receive(type: "pong")
        #expect(abs(hub.value(of: .strip(.channel(Channel(0)), .gain)) + 12) < 1e-6)
        #expect(hub.value(of: .masterGain) == -3)
        #expect(surface.counters.accepted == 4)
    }

    @Test func ccToHost_reachesTwoPagesWithin50ms() throws {
        let hub = try nanoKontrolHub()
        let (surface, port) = try serving(hub)
        defer { surface.stop() }
        let pages = try (0..<2).map { _ in try RawClient.webSocket(port: port) }
        for p in pages { _ = try p.receive(type: "hello") }
        let sent = Date()
        _ = hub.receive(.cc(32, value: 127, channel: Channel(0)))   // Solo 1 pressed: on
        for p in pages {
            var solo: [String: Any]?
            while solo == nil { solo = controls(in: try p.receive(type: "controls")).first { $0["name"] as? String == "Solo 1" } }
            #expect(solo?["value"] as? Double == 1)
            #expect(solo?["display"] as? String == "on")
        }
        let latency = Date().timeIntervalSince(sent)
        #expect(latency < 0.05, "took \(latency) s")
    }

    @Test func tenThousandMalformedMessages_allCounted_hostRuns() throws {
        let hub = try nanoKontrolHub()
        let (surface, port) = try serving(hub)
        defer { surface.stop() }
        let ws = try RawClient.webSocket(port: port)
        _ = try ws.receive(type: "hello")
        let junk = ["{", "null", "[]", #"{"type":1}"#, #"{"type":"control"}"#, #"{"type":"control","name":"Nope","value":1}"#,
                    #"{"type":"control","name":"Fader 1","value":1e9}"#, #"{"type":"control","name":"Fader 1","value":"NaN"}"#,
                    #"{"type":"control","name":"Fader 1","position":2}"#, #"{"type":"set","parameter":"no.such","value":1}"#,
                    String(repeating: "x", count: 5000), "\u{0}\u{1}"]
        for i in 0..<10_000 {
            if i % 97 == 0 { try ws.sendFrame([0xff, 0x00], opcode: 2) } else { try ws.send(text: junk[i % junk.count]) }
        }
        let deadline = Date().addingTimeInterval(20)
        while surface.counters.refusedTotal < 10_000 && Date() < deadline { usleep(20_000) }
        let c = surface.counters
        #expect(c.refusedTotal == 10_000, "\(c.refused)")
        #expect(c.accepted == 0)
        // Still serving: a new page, a ping, a move.
        let again = try RawClient.webSocket(port: port)
        _ = try again.receive(type: "hello")
        try again.send(text: #"{"type":"control","name":"Knob 1","position":1}"#)
        _ = try again.receive(type: "controls")
        #expect(hub.value(of: .strip(.channel(Channel(0)), .pan)) == ParameterAddress.strip(.channel(Channel(0)), .pan).spec.range.upperBound)
    }

    @Test func eachRefusal_countedUnderItsReason() throws {
        let (surface, port) = try serving(try nanoKontrolHub()) { $0.messagesPerSecond = 1e6; $0.burst = 1e6 }
        defer { surface.stop() }
        let ws = try RawClient.webSocket(port: port)
        _ = try ws.receive(type: "hello")
        let cases: [(String, WebProtocol.Refusal)] = [
            ("{", .malformed), (String(repeating: " ", count: 4097), .oversized),
            (#"{"type":"control","name":"Nope","position":0}"#, .unknownControl),
            (#"{"type":"control","name":"Fader 1","value":7}"#, .outOfRange),
            (#"{"type":"control","name":"Fader 1","position":-0.1}"#, .outOfRange),
            (#"{"type":"control","name":"Fader 1","position":0.5,"value":0}"#, .malformed),
            (#"{"type":"set","parameter":"strip.17.gain","value":0}"#, .unknownParameter),
        ]
        for (text, reason) in cases {
            try ws.send(text: text)
            #expect(try ws.receive(type: "refused")["reason"] as? String == reason.rawValue, "\(text.prefix(60))")
        }
        #expect(surface.counters.refusedTotal == cases.count)
    }

    @Test func flood_refusedBeyondTheRate() throws {
        let (surface, port) = try serving(try nanoKontrolHub()) { $0.messagesPerSecond = 10; $0.burst = 20 }
        defer { surface.stop() }
        let ws = try RawClient.webSocket(port: port)
        _ = try ws.receive(type: "hello")
        for _ in 0..<200 { try ws.send(text: #"{"type":"control","name":"Knob 1","position":0.5}"#) }
        try ws.send(text: #"{"type":"ping"}"#)
        let deadline = Date().addingTimeInterval(5)
        while surface.counters.accepted + surface.counters.refusedTotal < 201 && Date() < deadline { usleep(10_000) }
        let c = surface.counters
        #expect((c.refused[.flood] ?? 0) >= 170, "\(c)")
        #expect(c.accepted + (c.refused[.flood] ?? 0) == 201)
    }

    @Test func stalledPage_othersKeepReceiving_hubStaysFast() throws {
        // 1,920 faders (CC 0…119 on all 16 channels): each sweep is ~200 KB for every page,
        // enough to fill the socket buffers of a page that stops reading within a second.
        var faders: [ControlDefinition] = []
        for i in 0..<1920 {
            let channel = Channel(UInt8(i / 120))
            let source = ControlSource(ControlSource.Message.cc(UInt7(UInt8(i % 120))), channel: channel)
            faders.append(ControlDefinition(name: "F\(i)", kind: .fader, source: source,
                                            targets: [TargetBinding(ParameterAddress.strip(.channel(channel), .gain))], softTakeover: false))
        }
        let solo = ControlDefinition(name: "Solo", kind: .toggle, source: ControlSource(ControlSource.Message.cc(120), channel: Channel(0)),
                                     targets: [TargetBinding(.strip(.channel(Channel(0)), .solo))])
        let hub = ControlHub(mapping: ControlMapping(file: "stall.yaml", controls: faders + [solo]))
        let (surface, port) = try serving(hub)
        defer { surface.stop() }
        // A page that never reads, with a tiny receive buffer.
        let stalled = try RawClient.webSocket(port: port, receiveBuffer: 1024)
        let live = try RawClient.webSocket(port: port)
        _ = try live.receive(type: "hello")
        let reader = Thread { while !Thread.current.isCancelled, (try? live.receiveText()) != nil {} }   // the live page keeps reading
        var worst = 0.0, calls = 0
        let start = Date()
        var sweep = 0
        while Date().timeIntervalSince(start) < 3 {
            for i in 0..<1920 {
                let t0 = DispatchTime.now().uptimeNanoseconds
                _ = hub.receive(MIDIMessage.cc(UInt7(UInt8(i % 120)), value: UInt7(UInt8(sweep % 128)), channel: Channel(UInt8(i / 120))))
                worst = max(worst, Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9)
                calls += 1
            }
            sweep += 1
            usleep(20_000)
            if sweep == 1 { reader.start() }
        }
        let coalescedWhileStalled = surface.counters.coalesced
        // The live page still gets a fresh change within the promised time.
        reader.cancel()
        let probe = try RawClient.webSocket(port: port)
        _ = try probe.receive(type: "hello")
        let sent = Date()
        _ = hub.receive(.cc(120, value: 127, channel: Channel(0)))
        var on: [String: Any]?
        while on?["value"] as? Double != 1 {
            on = controls(in: try probe.receive(type: "controls", within: 2)).first { $0["name"] as? String == "Solo" } ?? on
        }
        let latency = Date().timeIntervalSince(sent)
        print("stalled page: \(calls) hub calls, slowest \(worst * 1e3) ms; \(coalescedWhileStalled) updates merged; fresh change in \(latency * 1e3) ms")
        #expect(worst < 0.5, "slowest hub call \(worst) s")
        #expect(latency < 0.1)
        // The stalled page's writes backed up: its updates were merged, not queued.
        #expect(coalescedWhileStalled > 0)
        withExtendedLifetime(stalled) {}
    }
}

@Suite("WebSurface outbox")
struct ClientOutboxTests {
    @Test func unread_updates_stayOnePerControl() throws {
        let counters = CounterBox()
        let outbox = ClientOutbox(counters: counters)
        let states = Array(try nanoKontrolHub().controlStates.prefix(8))
        for i in 0..<10_000 {
            var s = states[i % 8]; s.value = Double(i)
            outbox.offer(controls: [(i % 8, ControlMessage(s, full: false))])
            outbox.offer(status: "{}")
        }
        for _ in 0..<100 { outbox.offer(reply: "{}") }
        #expect(outbox.pendingControlCount == 8)
        #expect(counters.snapshot.coalesced == (10_000 - 8) + (10_000 - 1))
        #expect(counters.snapshot.droppedReplies == 100 - ClientOutbox.maxReplies)
        let out = outbox.take()
        #expect(out.count == ClientOutbox.maxReplies + 2)
        #expect(out[ClientOutbox.maxReplies].contains("\"value\":9999"))
        #expect(outbox.take().isEmpty)
    }
}
