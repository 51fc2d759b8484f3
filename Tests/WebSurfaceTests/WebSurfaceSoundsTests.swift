import Controls
import Foundation
import MIDI
import MappingFiles
import Parameters
import Testing
import WebSocketClient
@testable import WebSurface

/// The channel strips on the page: the hello says what each channel plays
/// and holds its font's presets; a `preset` message selects one the way OSC
/// does (bank select then program change, through the hub); every page gets a
/// `sounds` message when a preset changes, whoever changed it.
@Suite(.serialized) struct WebSurfaceSoundsTests {
    /// A font's listing as the host hands it over (the surface reads no font itself).
    static let font = ChannelFont(path: "/fonts/Test.sf2", presets: [
        FontPreset(bank: 0, program: 0, name: "Grand Piano"), FontPreset(bank: 0, program: 33, name: "Finger Bass"),
        FontPreset(bank: 0, program: 48, name: "Strings"), FontPreset(bank: 0, program: 89, name: "Warm Pad"),
        FontPreset(bank: 8, program: 89, name: "Warm Pad 2"), FontPreset(bank: 128, program: 0, name: "Standard"),
    ])

    static func serving(_ hub: ControlHub, lookup: ChannelFontLookup? = { _ in .success(font) }) throws -> (WebSurface, Int) {
        let surface = try WebSurface(hub: hub, configuration: WebSurfaceConfiguration(port: 0), fonts: lookup)
        return (surface, try surface.start())
    }

    static func stagePiano() throws -> ControlHub {
        ControlHub(mapping: try ControlMapping.load(path: mappingsFolder.appendingPathComponent("stage-piano.yaml").path))
    }

    static func strips(_ message: [String: Any], key: String = "sounds") -> [(Int, Int, Int, String?)] {
        (message[key] as? [[String: Any]] ?? []).map {
            ($0["channel"] as? Int ?? -1, $0["bank"] as? Int ?? -1, $0["program"] as? Int ?? -1, $0["name"] as? String)
        }
    }

    @Test func hello_showsTheRigsChannelsWithTheirPresetsAndFont() throws {
        let (surface, port) = try Self.serving(try Self.stagePiano())
        defer { surface.stop() }
        let hello = try RawClient.webSocket(port: port).receive(type: "hello")
        // The stage piano's channels: 1…3 (channels:, zones, the faders' strips); the mapping's presets.
        #expect(Self.strips(hello).map { "\($0.0) \($0.1):\($0.2) \($0.3 ?? "-")" }
                == ["1 0:0 Grand Piano", "2 0:33 Finger Bass", "3 0:48 Strings"])
        let fonts = try #require(hello["fonts"] as? [[String: Any]])
        #expect(fonts.count == 1 && fonts[0]["name"] as? String == "Test.sf2")
        #expect((fonts[0]["presets"] as? [[String: Any]])?.count == Self.font.presets.count)
        #expect((hello["sounds"] as? [[String: Any]])?.allSatisfy { $0["font"] as? Int == 0 } == true)
    }

    @Test func hello_withoutAMappingShowsAll16_channel10OnTheDrumBank() throws {
        let (surface, port) = try Self.serving(ControlHub(mapping: nil))
        defer { surface.stop() }
        let strips = Self.strips(try RawClient.webSocket(port: port).receive(type: "hello"))
        #expect(strips.map(\.0) == Array(1...16))
        #expect(strips[9].1 == 128 && strips[9].3 == "Standard")
        #expect(strips[0].3 == "Grand Piano" && strips[1].1 == 0 && strips[1].2 == 0)
    }

    @Test func hello_withoutAFontLookup_hasNoStrips_andAMissingFontIsSaid() throws {
        let (plain, port) = try Self.serving(try Self.stagePiano(), lookup: nil)
        defer { plain.stop() }
        let hello = try RawClient.webSocket(port: port).receive(type: "hello")
        #expect(hello["sounds"] == nil && hello["fonts"] == nil)
        let (missing, port2) = try Self.serving(try Self.stagePiano(),
                                                lookup: { _ in .failure(PresetNameError(description: "no SoundFont found")) })
        defer { missing.stop() }
        let hello2 = try RawClient.webSocket(port: port2).receive(type: "hello")
        #expect(hello2["soundsProblem"] as? String == "no SoundFont found")
        #expect(Self.strips(hello2).map(\.3) == [nil, nil, nil])
        #expect((hello2["sounds"] as? [[String: Any]])?.allSatisfy { $0["font"] == nil } == true)
    }

    @Test func presetMessage_selectsThroughTheHub_andEveryPageIsTold() throws {
        let hub = try Self.stagePiano()
        var sent: [ParameterChange] = []
        let lock = NSLock()
        hub.subscribe { change in lock.withLock { sent.append(change) } }
        let (surface, port) = try Self.serving(hub)
        defer { surface.stop() }
        let pages = try (0..<2).map { _ in try RawClient.webSocket(port: port) }
        for p in pages { _ = try p.receive(type: "hello") }
        lock.withLock { sent.removeAll() }
        try pages[0].send(text: #"{"type":"preset","channel":3,"bank":8,"program":89}"#)
        for p in pages {
            let sounds = try p.receive(type: "sounds", within: 2)
            #expect(Self.strips(sounds, key: "channels").first { $0.0 == 3 }.map { "\($0.1):\($0.2) \($0.3 ?? "-")" } == "8:89 Warm Pad 2")
        }
        // As a keyboard selects a preset: bank select (CC 0) first, then the program change.
        #expect(lock.withLock { sent.map(\.address) } == [.channelCC(Channel(2), 0), .channelProgram(Channel(2))])
        #expect(lock.withLock { sent.map(\.value) } == [8, 89])
        #expect(hub.channelPresets[Channel(2)] == ChannelPresets.Entry(bank: 8, program: 89))
    }

    @Test func aPresetChangedElsewhere_reachesThePage() throws {
        let hub = try Self.stagePiano()
        let (surface, port) = try Self.serving(hub)
        defer { surface.stop() }
        let page = try RawClient.webSocket(port: port)
        _ = try page.receive(type: "hello")
        hub.selectPreset(onChannel: Channel(0), bank: 0, program: 89)  // as OSC's /carillon/channel/1/preset
        let sounds = try page.receive(type: "sounds", within: 2)
        #expect(Self.strips(sounds, key: "channels").first?.3 == "Warm Pad")
    }

    @Test(arguments: [
        (#"{"type":"preset","channel":0,"bank":0,"program":1}"#, WebProtocol.Refusal.outOfRange),
        (#"{"type":"preset","channel":17,"bank":0,"program":1}"#, .outOfRange),
        (#"{"type":"preset","channel":1,"bank":0,"program":128}"#, .outOfRange),
        (#"{"type":"preset","channel":1,"bank":128,"program":0}"#, .outOfRange),
        (#"{"type":"preset","channel":1,"bank":-1,"program":0}"#, .outOfRange),
        (#"{"type":"preset","channel":1,"program":0}"#, .malformed),
        (#"{"type":"preset","channel":1.5,"bank":0,"program":0}"#, .malformed),
    ])
    func presetMessage_outOfReach_isRefused(text: String, reason: WebProtocol.Refusal) {
        let index = ControlIndex(states: [], definitions: [])
        #expect(WebProtocol.parse(text, maxBytes: 4096, controls: index) == .failure(reason))
    }

    @Test func presetMessage_drumBankOnChannel10() {
        let index = ControlIndex(states: [], definitions: [])
        #expect(WebProtocol.parse(#"{"type":"preset","channel":10,"bank":128,"program":25}"#, maxBytes: 4096, controls: index)
                == .success(.preset(channel: Channel(9), bank: 128, program: 25)))
    }
}
