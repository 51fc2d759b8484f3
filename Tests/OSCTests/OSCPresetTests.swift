import Controls
import MappingFiles
import Foundation
import MIDI
import OSC
import Parameters
import Testing

/// `/carillon/channel/N/preset`: a preset by name (s) or by bank and program
/// (i i), chosen as a bank select and program change would choose it.
@Suite struct OSCPresetTests {
    typealias A = OSCAddressSpace

    @Test func preset_byNameOrNumbers_andWhatIsRefused() {
        let path = "/carillon/channel/3/preset"
        #expect(A.request(path: path, types: "s", arguments: [.string("Warm Pad")]) == .success(.preset(channel: 3, .name("Warm Pad"))))
        #expect(A.request(path: path, types: "ii", arguments: [.int(8), .int(89)]) == .success(.preset(channel: 3, .number(bank: 8, program: 89))))
        #expect(A.request(path: "/carillon/channel/10/preset", types: "ii", arguments: [.int(128), .int(16)])
                == .success(.preset(channel: 10, .number(bank: 128, program: 16))))
        for (types, args) in [("ii", [OSCValue.int(128), .int(0)]), ("ii", [.int(0), .int(128)]), ("i", [.int(5)]),
                              ("", []), ("s", [.string("")]), ("fi", [.float(0.5), .int(1)])] {
            guard case .failure(.wrongArguments) = A.request(path: path, types: types, arguments: args) else {
                Issue.record("took ,\(types) \(args)"); continue
            }
        }
        #expect(A.request(path: "/carillon/channel/17/preset", types: "s", arguments: [.string("x")]) == .failure(.unknownPath("/carillon/channel/17/preset")))
        #expect(A.request(path: "/carillon/channel/x/preset", types: "s", arguments: [.string("x")]) == .failure(.unknownPath("/carillon/channel/x/preset")))
    }

    /// The hub sends a bank select then a program change on the channel, as a scene does.
    @Test func hub_selectPreset_isBankSelectThenProgramChange() {
        final class Engine: @unchecked Sendable { var changes: [ParameterChange] = [] }
        let hub = ControlHub(mapping: nil)
        let engine = Engine()
        hub.subscribe { engine.changes.append($0) }
        hub.selectPreset(onChannel: Channel(2), bank: 8, program: UInt7(89))
        #expect(engine.changes == [ParameterChange(.channelCC(Channel(2), UInt7(0)), 8), ParameterChange(.channelProgram(Channel(2)), 89)])
        engine.changes.removeAll()
        hub.selectPreset(onChannel: Channel(9), bank: 128, program: UInt7(16))
        #expect(engine.changes == [ParameterChange(.channelProgram(Channel(9)), 16)], "no bank select for channel 10's own bank")
    }

    /// `oscsend` against a real server: a name is looked up as the session looks it
    /// up (here in a fixed list), a misspelt one refused with "did you mean" in the log.
    @Test func oscsend_byName_selectsThePreset() throws {
        let presets = [FontPreset(bank: 0, program: 19, name: "Church Organ"), FontPreset(bank: 8, program: 89, name: "Warm Pad")]
        let hub = ControlHub(mapping: nil)
        let server = try OSCServer(hub: hub, configuration: OSCConfiguration(endpoint: OSCEndpoint(port: 0), logInterval: 0.1),
                                   presetNamed: { name, channel in FontPreset.named(name, in: presets, channel: channel, font: "T.sf2") })
        try server.start()
        defer { server.stop() }
        let port = "\(server.port)"
        #expect(try run("oscsend", ["127.0.0.1", port, "/carillon/channel/2/preset", "s", "Warm Pad"]) == 0)
        #expect(eventually(2) { hub.value(of: .channelProgram(Channel(1))) == 89 && hub.value(of: .channelCC(Channel(1), UInt7(0))) == 8 })
        #expect(try run("oscsend", ["127.0.0.1", port, "/carillon/channel/2/preset", "ii", "0", "19"]) == 0)
        #expect(eventually(2) { hub.value(of: .channelProgram(Channel(1))) == 19 && hub.value(of: .channelCC(Channel(1), UInt7(0))) == 0 })
        #expect(try run("oscsend", ["127.0.0.1", port, "/carillon/channel/2/preset", "s", "Church Orgn"]) == 0)
        var log: [String] = []
        #expect(eventually(3) { log += server.takeLog(); return log.contains { $0.contains("did you mean 'Church Organ'") } }, "\(log)")
        #expect(hub.value(of: .channelProgram(Channel(1))) == 19)
        #expect(server.counters.applied == 2)
    }
}
