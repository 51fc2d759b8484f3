import ChildProcess
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Presets by name from the command line: `mapping check --soundfont` against
/// FluidR3's names, and `live --osc` taking `/carillon/channel/N/preset` from `oscsend`.
@Suite(.serialized) struct PresetNamesCommandTests {
    typealias R = RenderCommandTests
    static let fluidR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"

    @Test func mappingCheck_namesInTheFont_pass_andATypoIsSaidAtItsPlace() throws {
        let dir = R.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let good = dir + "/good.yaml", bad = dir + "/bad.yaml"
        try "channels:\n  1: { program: Warm Pad }\n  10: { program: Standard 1 }\nzones:\n  - { name: All, to: 1 }\n"
            .write(toFile: good, atomically: true, encoding: .utf8)
        try "channels:\n  1: { program: Warm Pd }\nzones: []\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let ok = try R.carillon(["mapping", "check", "--soundfont", Self.fluidR3, good])
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(ok.stdout.contains("good.yaml: ok"))
        let r = try R.carillon(["mapping", "check", "--soundfont", Self.fluidR3, bad])
        #expect(r.status == 1)
        #expect(r.stderr == "\(bad):2:17: error: no preset named 'Warm Pd' in \(Self.fluidR3); did you mean 'Warm Pad'? (`carillon presets \(Self.fluidR3)` lists them)\n", "\(r.stderr)")
        // TimGM6mb has a Warm Pad but one drum kit called Standard: the same file against it says so.
        let other = try R.carillon(["mapping", "check", "--soundfont", R.timGM, good])
        #expect(other.status == 1)
        #expect(other.stderr == "\(good):3:18: error: no preset named 'Standard 1' in \(R.timGM); did you mean 'Standard'? (`carillon presets \(R.timGM)` lists them)\n",
                "\(other.stderr)")
    }

    /// `live --no-audio --soundfont FluidR3 --osc`: a subscribed `oscdump` sees the program a
    /// name selected (Church Organ, 19), then the one bank and program selected.
    @Test func liveOSC_presetByName_selectsItsProgram() throws {
        let oscPort = LiveOSCCommandTests.freePort(), dumpPort = LiveOSCCommandTests.freePort()
        let live = try ChildProcess(R.carillon, ["live", "--no-audio", "--soundfont", Self.fluidR3, "--osc", "\(oscPort)", "--duration", "6"])
        defer { live.kill() }
        #expect(live.waitForOutput(seconds: 5) { $0.contains("osc: listening on udp 127.0.0.1:\(oscPort)") }, "\(live.output)")
        let dump = try ChildProcess("/usr/bin/oscdump", ["-L", "\(dumpPort)"])
        defer { _ = dump.kill() }
        usleep(200_000)
        for args in [["/carillon/subscribe", "i", "\(dumpPort)"], ["/carillon/channel/3/preset", "s", "Church Organ"]] {
            let send = try ChildProcess("/usr/bin/oscsend", ["127.0.0.1", "\(oscPort)"] + args)
            #expect((send.waitForExit(seconds: 10) ?? send.kill()) == 0)
        }
        #expect(dump.waitForOutput(seconds: 3) { $0.contains("/carillon/channel/3/program f 19") }, "oscdump: \(dump.output)")
        let numbers = try ChildProcess("/usr/bin/oscsend", ["127.0.0.1", "\(oscPort)", "/carillon/channel/3/preset", "ii", "8", "16"])
        #expect((numbers.waitForExit(seconds: 10) ?? numbers.kill()) == 0)
        #expect(dump.waitForOutput(seconds: 3) { $0.contains("/carillon/channel/3/program f 16") && $0.contains("/carillon/channel/3/cc/0 f 8") },
                "oscdump: \(dump.output)")
        _ = dump.kill()
        #expect(live.waitForExit(seconds: 15) == 0, "\(live.output)")
        #expect(live.output.contains("osc: 3 messages applied"), "\(live.output)")
    }
}
