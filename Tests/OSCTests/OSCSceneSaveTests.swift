import Controls
import Foundation
import MIDI
import MappingFiles
import OSC
import Parameters
import Testing

/// `/carillon/scene/save s NAME`: what plays now saved as a scene in the mapping file.
@Suite struct OSCSceneSaveTests {
    typealias A = OSCAddressSpace

    @Test func sceneSave_takesOneName() {
        #expect(A.request(path: "/carillon/scene/save", types: "s", arguments: [.string("Gig")]) == .success(.saveScene("Gig")))
        for (types, args) in [("", [OSCValue]()), ("s", [.string("  ")]), ("i", [.int(1)])] {
            guard case .failure(.wrongArguments) = A.request(path: "/carillon/scene/save", types: types, arguments: args) else {
                Issue.record("took ,\(types) \(args)"); continue
            }
        }
    }

    /// `oscsend` against a real server: the file gains the scene; without a mapping file it is refused and logged.
    @Test func oscsend_savesTheSceneInTheFile() throws {
        let folder = NSTemporaryDirectory() + "carillon-osc-save-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/rig.yaml"
        try "# my rig\ncontrols: []\nchannels:\n  1: { program: 4 }   # piano\n".write(toFile: path, atomically: true, encoding: .utf8)
        let hub = ControlHub(mapping: try ControlMapping.load(path: path))
        let server = try OSCServer(hub: hub, configuration: OSCConfiguration(endpoint: OSCEndpoint(port: 0), logInterval: 0.1))
        try server.start()
        defer { server.stop() }
        hub.selectPreset(onChannel: Channel(0), bank: 0, program: 89)
        #expect(try run("oscsend", ["127.0.0.1", "\(server.port)", "/carillon/scene/save", "s", "Gig"]) == 0)
        #expect(eventually(3) { hub.sceneNames == ["Gig"] })
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == "# my rig\ncontrols: []\nchannels:\n  1: { program: 4 }   # piano\n\nscenes:\n  - name: Gig\n    channels: { 1: { bank: 0, program: 89 } }\n")

        let bare = try OSCServer(hub: ControlHub(mapping: nil), configuration: OSCConfiguration(endpoint: OSCEndpoint(port: 0), logInterval: 0.1))
        try bare.start()
        defer { bare.stop() }
        #expect(try run("oscsend", ["127.0.0.1", "\(bare.port)", "/carillon/scene/save", "s", "Gig"]) == 0)
        var log: [String] = []
        #expect(eventually(3) { log += bare.takeLog(); return log.contains { $0.contains("start with --mapping FILE") } }, "\(log)")
    }
}
