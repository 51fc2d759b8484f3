@testable import LV2
import CLV2Log
import CLilv
import Foundation
import Testing

/// The log feature (log:log) a plugin is given: what it prints through it is
/// one line on standard error, named after the plugin; trace messages are dropped.
@Suite(.serialized) struct LV2LogTests {
    /// What `body` writes to file descriptor 2.
    static func standardError(_ body: () -> Void) -> String {
        let path = NSTemporaryDirectory() + "carillon-log-\(getpid())"
        let file = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0o600)
        let saved = dup(2)
        dup2(file, 2)
        body()
        dup2(saved, 2); close(saved); close(file)
        defer { unlink(path) }
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    @Test func aPluginsMessages_areLinesNamedAfterIt() throws {
        let world = try LV2World()
        let urids = URIDMap()
        let instance = try LV2Instance(world: world, uri: "http://drobilla.net/plugins/mda/Delay", sampleRate: 48_000,
                                       maxFrames: 256, urids: urids)
        var log: UnsafeMutablePointer<LV2_Log_Log>?
        var k = 0
        while let feature = instance.featureList[k] {
            if String(cString: feature.pointee.URI) == "http://lv2plug.in/ns/ext/log#log" {
                log = feature.pointee.data?.assumingMemoryBound(to: LV2_Log_Log.self)
            }
            k += 1
        }
        let logger = try #require(log, "the plugin is not given log:log")
        let text = Self.standardError {
            _ = carillon_lv2_log_test(logger, urids.map("http://lv2plug.in/ns/ext/log#Warning"), 42, "a warning")
            _ = carillon_lv2_log_test(logger, urids.map("http://lv2plug.in/ns/ext/log#Trace"), 1, "a trace")
            _ = carillon_lv2_log_test(logger, urids.map("http://lv2plug.in/ns/ext/log#Note"), 7, "a note")
        }
        #expect(text == "carillon: MDA Delay: warning: value 42, a warning\ncarillon: MDA Delay: value 7, a note\n")
        #expect(LV2Instance.supportedFeatures.contains("http://lv2plug.in/ns/ext/log#log"))
    }
}
