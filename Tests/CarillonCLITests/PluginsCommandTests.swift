import Foundation
import Testing

/// `carillon plugins`: the installed LV2 plugins where LV2_PATH says, as text and JSON.
@Suite struct PluginsCommandTests {
    /// A folder holding mda-lv2's bundle and the LV2 specifications that name
    /// its classes and units (links), for LV2_PATH: no other plugin.
    static func mdaOnly() throws -> String {
        let dir = RenderCommandTests.scratch()
        for bundle in ["mda.lv2", "core.lv2", "units.lv2"] {
            try FileManager.default.createSymbolicLink(atPath: dir + "/" + bundle, withDestinationPath: "/usr/lib/lv2/" + bundle)
        }
        return dir
    }

    @Test func lv2Path_isHonoured_andJSONListsItsPlugins() throws {
        let dir = try Self.mdaOnly()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try RenderCommandTests.carillon(["plugins", "--json"], environment: ["LV2_PATH": dir])
        #expect(r.status == 0, "\(r.stderr)")
        let plugins = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]] ?? []
        #expect(plugins.count >= 30)
        #expect(plugins.allSatisfy { ($0["uri"] as? String ?? "").hasPrefix("http://drobilla.net/plugins/mda/") })
        let piano = plugins.first { $0["uri"] as? String == "http://drobilla.net/plugins/mda/Piano" }
        #expect(piano?["kind"] as? String == "instrument" && piano?["midi-inputs"] as? Int == 1)
        let controls = piano?["controls"] as? [[String: Any]] ?? []
        #expect(controls.contains { $0["symbol"] as? String == "env_decay" && $0["default"] as? Double == 0.5 })
    }

    @Test func filter_picksByNameOrClass_andTextShowsRanges() throws {
        let dir = try Self.mdaOnly()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try RenderCommandTests.carillon(["plugins", "delay"], environment: ["LV2_PATH": dir])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("http://drobilla.net/plugins/mda/Delay\n  MDA Delay: effect (Delay Plugin), audio 2 in, 2 out"))
        #expect(r.stdout.contains("l_delay             0…1 (default 0.5)  L Delay"))
        #expect(!r.stdout.contains("mda/Piano"))
    }

    @Test func nothingFound_isOneClearLine_andExitStatus1() throws {
        let empty = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: empty) }
        let none = try RenderCommandTests.carillon(["plugins"], environment: ["LV2_PATH": empty])
        #expect(none.status == 1 && none.stdout.isEmpty)
        #expect(none.stderr == "carillon: error: no LV2 plugins are installed (LV2_PATH=\(empty)) — e.g. sudo apt install mda-lv2\n")
        let dir = try Self.mdaOnly()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let nomatch = try RenderCommandTests.carillon(["plugins", "nosuch"], environment: ["LV2_PATH": dir])
        #expect(nomatch.status == 1 && nomatch.stderr.hasPrefix("carillon: error: no installed LV2 plugin matches 'nosuch'"))
    }
}

/// `--insert master=URI`: an LV2 effect on the master, in render as in live.
@Suite struct InsertCommandTests {
    static let delay = "http://drobilla.net/plugins/mda/Delay"

    /// The float samples of a 32-bit float WAV (interleaved).
    static func samples(_ path: String) throws -> [Float] {
        let d = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u32(_ at: Int) -> Int { Int(d[at]) | Int(d[at + 1]) << 8 | Int(d[at + 2]) << 16 | Int(d[at + 3]) << 24 }
        var at = 12
        while at + 8 <= d.count, String(decoding: d[at..<at + 4], as: UTF8.self) != "data" { at += 8 + u32(at + 4) }
        return (0..<u32(at + 4) / 4).map { Float(bitPattern: UInt32(u32(at + 8 + 4 * $0))) }
    }

    /// The bar: the render with the insert is lv2apply applied to the
    /// dry render, within -90 dB; with its controls set by --set as by lv2apply's -c.
    @Test(arguments: [[:], ["feedback": 0.9, "l_delay": 0.2]] as [[String: Double]])
    func masterInsert_isTheEffectAppliedToTheDryRender_asLv2applyDoes(_ controls: [String: Double]) throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let song = "\(RenderCommandTests.openmsx)/busy_schedule.mid"
        let common = ["--soundfont", RenderCommandTests.timGM, "--bits", "32", "--max-duration", "8", "-q"]
        let settings = controls.sorted { $0.key < $1.key }
        let dry = try RenderCommandTests.carillon(["render", song, "-o", "\(dir)/dry.wav"] + common)
        #expect(dry.status == 0, "\(dry.stderr)")
        for run in ["wet", "again"] {
            let wet = try RenderCommandTests.carillon(["render", song, "-o", "\(dir)/\(run).wav", "--insert", "master=\(Self.delay)"]
                + settings.flatMap { ["--set", "insert.master.1.\($0.key)=\($0.value)"] } + common)
            #expect(wet.status == 0, "\(wet.stderr)")
        }
        let apply = Process()
        apply.executableURL = URL(fileURLWithPath: "/usr/bin/lv2apply")
        apply.arguments = ["-i", "\(dir)/dry.wav", "-o", "\(dir)/reference.wav"]
            + settings.flatMap { ["-c", $0.key, String($0.value)] } + [Self.delay]
        try apply.run()
        apply.waitUntilExit()
        #expect(apply.terminationStatus == 0)
        let wet = try Self.samples("\(dir)/wet.wav"), reference = try Self.samples("\(dir)/reference.wav")
        let dryAudio = try Self.samples("\(dir)/dry.wav")
        #expect(wet.count == reference.count && wet.count > 100_000)
        let worst = zip(wet, reference).map { abs($0 - $1) }.max() ?? 1
        #expect(worst == 0 || 20 * log10(Double(worst)) <= -90, "\(worst)")
        // The insert did something, and a rerun gives the same bytes.
        #expect(zip(wet, dryAudio).contains { abs($0 - $1) > 1e-3 })
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/wet.wav")) == Data(contentsOf: URL(fileURLWithPath: "\(dir)/again.wav")))
    }

    /// An insert on a channel's strip: that channel's stem is lv2apply applied
    /// to its dry stem (the strip's gain and pan at unity come after the insert),
    /// the other stems are untouched, and the stems still add up to the mix.
    @Test func channelInsert_isTheEffectOnThatStripsStem_asLv2applyDoes() throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let song = "\(RenderCommandTests.openmsx)/busy_schedule.mid"
        let common = ["--soundfont", RenderCommandTests.timGM, "--bits", "32", "--max-duration", "6", "-q", "--no-reverb", "--no-chorus"]
        let dry = try RenderCommandTests.carillon(["render", song, "-o", "\(dir)/dry.wav", "--stems", "\(dir)/dry"] + common)
        let wet = try RenderCommandTests.carillon(["render", song, "-o", "\(dir)/wet.wav", "--stems", "\(dir)/wet",
                                                   "--insert", "10=\(Self.delay)", "--set", "insert.10.1.feedback=0.5"] + common)
        #expect(dry.status == 0 && wet.status == 0, "\(dry.stderr) \(wet.stderr)")
        let apply = Process()
        apply.executableURL = URL(fileURLWithPath: "/usr/bin/lv2apply")
        apply.arguments = ["-i", "\(dir)/dry/ch10.wav", "-o", "\(dir)/reference.wav", "-c", "feedback", "0.5", Self.delay]
        try apply.run()
        apply.waitUntilExit()
        #expect(apply.terminationStatus == 0)
        let reference = try Self.samples("\(dir)/reference.wav"), drums = try Self.samples("\(dir)/wet/ch10.wav")
        #expect(drums.count == reference.count && drums.count > 100_000)
        let worst = zip(drums, reference).map { abs($0 - $1) }.max() ?? 1
        #expect(worst == 0 || 20 * log10(Double(worst)) <= -90, "\(worst)")
        #expect(zip(drums, try Self.samples("\(dir)/dry/ch10.wav")).contains { abs($0 - $1) > 1e-3 })
        #expect(try Self.samples("\(dir)/wet/ch02.wav") == Self.samples("\(dir)/dry/ch02.wav"))
        // The stems add up to the mix.
        let mix = try Self.samples("\(dir)/wet.wav")
        var sum = [Float](repeating: 0, count: mix.count)
        for stem in try FileManager.default.contentsOfDirectory(atPath: "\(dir)/wet") {
            for (i, x) in try Self.samples("\(dir)/wet/\(stem)").enumerated() where i < sum.count { sum[i] += x }
        }
        #expect(zip(sum, mix).map { abs($0 - $1) }.max()! < 1e-5)
    }

    /// Latency compensation: x42's peak limiter looks 56 frames ahead (it says
    /// so on its latency port). Below its threshold it only delays, so the
    /// compensated render is the dry render sample for sample; with the
    /// threshold lowered it limits, still in time.
    @Test func masterInsertLatency_isCompensatedInARender() throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let song = "\(RenderCommandTests.openmsx)/busy_schedule.mid"
        let limiter = "http://gareus.org/oss/lv2/dpl#stereo"
        let common = ["--soundfont", RenderCommandTests.timGM, "--bits", "32", "--max-duration", "5", "-q"]
        for (name, flags) in [("dry", []), ("limited", ["--insert", "master=\(limiter)"]),
                              ("low", ["--insert", "master=\(limiter)", "--set", "insert.master.1.threshold=-10"])] {
            let r = try RenderCommandTests.carillon(["render", song, "-o", "\(dir)/\(name).wav"] + flags + common)
            #expect(r.status == 0, "\(r.stderr)")
        }
        let dry = try Self.samples("\(dir)/dry.wav"), limited = try Self.samples("\(dir)/limited.wav")
        let low = try Self.samples("\(dir)/low.wav")
        #expect(dry.count == limited.count && dry.count == low.count && dry.count == 2 * 5 * 44_100)
        #expect(dry.map(abs).max()! < 0.85, "the piece peaks above the limiter's -1 dBFS: the equality below would not hold")
        let same = limited == dry   // compared first: a failed #expect on megabytes diffs for minutes
        #expect(same, "the limiter's 56 frames of look-ahead are not compensated")
        // Lowered: peaks held near -10 dBFS (true-peak off: a little over), and the loudest block still where the dry one is.
        #expect(low.map(abs).max()! < 0.36)
        func loudestBlock(_ x: [Float]) -> Int { stride(from: 0, to: x.count - 2048, by: 2048).max { a, b in
            x[a..<a + 2048].map(abs).max()! < x[b..<b + 2048].map(abs).max()! }! / 2048 }
        #expect(abs(loudestBlock(low) - loudestBlock(dry)) <= 1)
    }

    /// Latency on a strip: the limiter on channel 10 delays that strip by 56
    /// frames, so every other strip is delayed as much and the render drops
    /// the 56 frames: below its threshold the mix and every stem are the dry
    /// render's, sample for sample, and the stems still add up to the mix.
    @Test func stripInsertLatency_linesUpEveryStrip() throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let song = "\(RenderCommandTests.openmsx)/busy_schedule.mid"
        let limiter = "http://gareus.org/oss/lv2/dpl#stereo"
        let common = ["--soundfont", RenderCommandTests.timGM, "--bits", "32", "--max-duration", "5", "-q"]
        for (name, flags) in [("dry", []), ("limited", ["--insert", "10=\(limiter)"])] {
            let r = try RenderCommandTests.carillon(["render", song, "-o", "\(dir)/\(name).wav", "--stems", "\(dir)/\(name)"] + flags + common)
            #expect(r.status == 0, "\(r.stderr)")
        }
        let dry = try Self.samples("\(dir)/dry.wav"), limited = try Self.samples("\(dir)/limited.wav")
        #expect(try Self.samples("\(dir)/dry/ch10.wav").map(abs).max()! < 0.85, "channel 10 peaks above the limiter's threshold")
        #expect(dry.count == limited.count && dry.count == 2 * 5 * 44_100)
        let same = limited == dry   // compared first: a failed #expect on megabytes diffs for minutes
        #expect(same, "the limiter's 56 frames on channel 10 are not lined up: \(zip(limited, dry).filter { $0 != $1 }.count) samples differ")
        let stems = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/dry").sorted()
        #expect(try FileManager.default.contentsOfDirectory(atPath: "\(dir)/limited").sorted() == stems && stems.count >= 3)
        var sum = [Float](repeating: 0, count: limited.count)
        for stem in stems {
            let samples = try Self.samples("\(dir)/limited/\(stem)")
            let same = try samples == Self.samples("\(dir)/dry/\(stem)")
            #expect(same, "\(stem)")
            for (i, x) in samples.enumerated() where i < sum.count { sum[i] += x }
        }
        #expect(zip(sum, limited).map { abs($0 - $1) }.max()! < 1e-5)
    }

    /// --set moved the plugin: the render with the controls set is not the one
    /// with the plugin's defaults. On the drum channel: it has no program
    /// change, which an mda instrument takes as a switch to its own patch.
    @Test func setControls_changeTheRender() throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let song = "\(RenderCommandTests.openmsx)/busy_schedule.mid"
        let common = ["--soundfont", RenderCommandTests.timGM, "--bits", "32", "--max-duration", "4", "-q",
                      "--instrument", "10=http://drobilla.net/plugins/mda/JX10"]
        let plain = try RenderCommandTests.carillon(["render", song, "-o", "\(dir)/plain.wav"] + common)
        let set = try RenderCommandTests.carillon(["render", song, "-o", "\(dir)/set.wav", "--set", "plugin.10.vcf_freq=0.2"] + common)
        #expect(plain.status == 0 && set.status == 0, "\(plain.stderr) \(set.stderr)")
        let a = try Self.samples("\(dir)/plain.wav"), b = try Self.samples("\(dir)/set.wav")
        #expect(a.count == b.count && zip(a, b).contains { abs($0 - $1) > 1e-2 })
    }

    /// A mapping's own lv2: channel: `mapping check` knows its controls, and names a misspelt one.
    @Test func mappingCheck_knowsTheFilesOwnPluginsControls() throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func check(_ target: String, uri: String = "http://drobilla.net/plugins/mda/JX10") throws -> RenderCommandTests.Result {
            let path = "\(dir)/m.yaml"
            try "channels:\n  3: { lv2: \"\(uri)\" }\ncontrols:\n  - name: Cutoff\n    kind: knob\n    source: { cc: 74 }\n    targets: [\(target)]\n"
                .write(toFile: path, atomically: true, encoding: .utf8)
            return try RenderCommandTests.carillon(["mapping", "check", path])
        }
        let good = try check("plugin.3.vcf_freq")
        #expect(good.status == 0, "\(good.stderr)")
        let typo = try check("plugin.3.vcf_frq")
        #expect(typo.status == 1 && typo.stderr.contains("m.yaml:7:15: error: unknown target 'plugin.3.vcf_frq'; did you mean 'plugin.3.vcf_freq'?") && typo.stderr.contains("plugin.3.vcf_freq"), "\(typo.stderr)")
        let missing = try check("strip.3.gain", uri: "http://drobilla.net/plugins/mda/JX11")
        #expect(missing.status == 1 && missing.stderr.contains("no LV2 plugin http://drobilla.net/plugins/mda/JX11 is installed"), "\(missing.stderr)")
    }

    /// A mapping's own inserts: `mapping check` knows their controls, numbered
    /// on each strip in the file's order, and names a misspelt one.
    @Test func mappingCheck_knowsTheFilesOwnInsertsControls() throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func check(_ target: String) throws -> RenderCommandTests.Result {
            let path = "\(dir)/m.yaml"
            try """
                inserts:
                  master: ["http://drobilla.net/plugins/mda/Overdrive", "\(Self.delay)"]
                controls:
                  - name: Feedback
                    kind: knob
                    source: { cc: 20 }
                    targets: [\(target)]

                """.write(toFile: path, atomically: true, encoding: .utf8)
            return try RenderCommandTests.carillon(["mapping", "check", path])
        }
        let good = try check("insert.master.2.feedback")
        #expect(good.status == 0, "\(good.stderr)")
        let typo = try check("insert.master.1.feedback")   // the first insert is Overdrive
        #expect(typo.status == 1 && typo.stderr.contains("m.yaml:7:15: error: unknown target 'insert.master.1.feedback'"), "\(typo.stderr)")
    }

    @Test func parameters_listsAPluginsControls() throws {
        let r = try RenderCommandTests.carillon(["parameters", "--instrument", "3=http://drobilla.net/plugins/mda/JX10",
                                                 "--insert", "master=\(Self.delay)"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("plugin.3.vcf_freq") && r.stdout.contains("MDA JX10 on MIDI channel 3: VCF Freq"))
        #expect(r.stdout.contains("insert.master.1.feedback") && r.stdout.contains("MDA Delay, insert master: Feedback"))
    }

    @Test(arguments: [
        (["--insert", "master=http://drobilla.net/plugins/mda/Pianno"],
         "carillon: error: no LV2 plugin http://drobilla.net/plugins/mda/Pianno is installed (did you mean http://drobilla.net/plugins/mda/Piano?)"),
        (["--insert", "master=http://drobilla.net/plugins/mda/Piano"],
         "carillon: error: http://drobilla.net/plugins/mda/Piano: an insert takes an effect with 1 or 2 audio inputs and as many outputs; this one has 0 in and 2 out"),
        (["--insert", "strip3=\(delay)"], "Error: --insert takes STRIP=URI with STRIP master, 1...16, osc, tone or track1...track8, found 'strip3="),
        (["--insert", "track2=\(delay)"], "carillon: error: \(delay): --insert track2=…: there is no track 2 (0 tracks given)"),
        (["--insert", "master=\(delay)", "--stems", "s"], "Error: --stems cannot be used with --insert master=..."),
        (["--instrument", "3=http://drobilla.net/plugins/mda/EPian"],
         "carillon: error: no LV2 plugin http://drobilla.net/plugins/mda/EPian is installed (did you mean http://drobilla.net/plugins/mda/EPiano?)"),
        (["--instrument", "3=\(delay)"], "carillon: error: \(delay): an instrument takes MIDI in and gives audio out"),
        (["--instrument", "17=\(delay)"], "Error: --instrument takes N=URI with N a MIDI channel 1...16, found '17="),
        (["--instrument", "2=http://drobilla.net/plugins/mda/Piano", "--oscillator-channel", "2"],
         "Error: MIDI channel 2 is given to both --instrument and --oscillator-channel"),
        (["--insert", "master=\(delay)", "--set", "insert.master.1.feedbak=0.5"],
         "carillon: error: --set insert.master.1.feedbak=0.5: no parameter insert.master.1.feedbak (did you mean insert.master.1.feedback?)"),
        (["--insert", "master=\(delay)", "--set", "insert.master.1.feedback=2"],
         "carillon: error: --set insert.master.1.feedback must be between 0 and 1"),
        (["--set", "master.gain"], "Error: --set takes NAME=VALUE with VALUE a number"),
    ])
    func aWrongInsert_isOneClearLine_andNothingWritten(_ flags: [String], _ message: String) throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try RenderCommandTests.carillon(["render", "\(RenderCommandTests.openmsx)/busy_schedule.mid", "-o", "\(dir)/out.wav",
                                                 "--soundfont", RenderCommandTests.timGM] + flags)
        #expect(r.status != 0)
        #expect(r.stderr.hasPrefix(message), "\(r.stderr)")
        #expect(RenderCommandTests.contents(dir).isEmpty)
    }
}
