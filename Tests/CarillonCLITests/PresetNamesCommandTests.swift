import Foundation
import Testing

/// Presets by name from the command line: `mapping check --soundfont` against FluidR3's names.
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
}
