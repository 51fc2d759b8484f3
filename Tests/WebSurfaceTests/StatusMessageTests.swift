import Controls
import Testing
import WebSocketClient
@testable import WebSurface

/// The page's status line carries what the host counts: voices and every strip's meter.
@Suite("WebSurface status", .serialized)
struct StatusMessageTests {
    static func status() -> SurfaceStatus {
        SurfaceStatus(load: 0.2, xruns: 2, blocks: 10, voices: 12, peak: 0.5, rms: 0.1,
                      stripPeaks: (0..<19).map { Float($0) / 16 }, stripNames: (1...16).map(String.init) + ["osc", "tone", "drums"],
                      stripKeys: (1...16).map(String.init) + ["osc", "tone", "track1"])
    }

    @Test func status_carriesVoicesAndStripPeaks() throws {
        let surface = try WebSurface(hub: ControlHub(mapping: nil), configuration: WebSurfaceConfiguration(port: 0),
                                     status: { Self.status() })
        let port = try surface.start()
        defer { surface.stop() }
        let page = try RawClient.webSocket(port: port)
        let message = try page.receive(type: "status")
        #expect(message["voices"] as? Int == 12)
        #expect(message["xruns"] as? Int == 2)
        let strips = message["strips"] as? [Double] ?? []
        #expect(strips.count == 19)
        #expect(strips[15] == 15.0 / 16)
        let names = message["stripNames"] as? [String] ?? []
        #expect(names.suffix(3) == ["osc", "tone", "drums"] && names.first == "1")
        // A group's meter finds its strip by key, whatever the strip's shown name.
        let keys = message["stripKeys"] as? [String] ?? []
        #expect(keys.count == 19 && keys.suffix(3) == ["osc", "tone", "track1"] && keys[2] == "3")
    }

    /// `--sync` and `--transport-master`: the status line says what the transport is in time with; nothing without.
    @Test func status_carriesTheSyncLine_onlyWhenInTimeWithSomething() throws {
        let following: SurfaceStatus = {
            var s = Self.status()
            s.sync = "following the JACK transport at 80.0 BPM"
            return s
        }()
        let surface = try WebSurface(hub: ControlHub(mapping: nil), configuration: WebSurfaceConfiguration(port: 0),
                                     status: { following })
        let port = try surface.start()
        defer { surface.stop() }
        let message = try RawClient.webSocket(port: port).receive(type: "status")
        #expect(message["sync"] as? String == "following the JACK transport at 80.0 BPM")

        let plain = try WebSurface(hub: ControlHub(mapping: nil), configuration: WebSurfaceConfiguration(port: 0),
                                   status: { Self.status() })
        let plainPort = try plain.start()
        defer { plain.stop() }
        let none = try RawClient.webSocket(port: plainPort).receive(type: "status")
        #expect(none["sync"] == nil)
        #expect(Page.html.contains(#"<span class="stat" id="sync" hidden>"#))
    }

    /// The output gone (issue 40): the page says "no audio: …, retrying" while it lasts; nothing while it plays.
    @Test func status_carriesTheOutage_onlyWhileThereIsNoAudio() throws {
        let down: SurfaceStatus = {
            var s = Self.status()
            s.audio = "no audio: the JACK server stopped or dropped carillon (killed), retrying"
            return s
        }()
        let surface = try WebSurface(hub: ControlHub(mapping: nil), configuration: WebSurfaceConfiguration(port: 0),
                                     status: { down })
        let port = try surface.start()
        defer { surface.stop() }
        let message = try RawClient.webSocket(port: port).receive(type: "status")
        #expect(message["audio"] as? String == "no audio: the JACK server stopped or dropped carillon (killed), retrying")

        let plain = try WebSurface(hub: ControlHub(mapping: nil), configuration: WebSurfaceConfiguration(port: 0),
                                   status: { Self.status() })
        let plainPort = try plain.start()
        defer { plain.stop() }
        let none = try RawClient.webSocket(port: plainPort).receive(type: "status")
        #expect(none["audio"] == nil)
        #expect(Page.html.contains(#"<span class="stat" id="audio" role="alert" hidden>"#))
        #expect(Page.html.contains(#"$("audio").textContent=s.audio"#))
    }
}
