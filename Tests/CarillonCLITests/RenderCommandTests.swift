import Testing
import Foundation

/// Whole `carillon render` command lines: output files, exit status, messages.
@Suite(.serialized) struct RenderCommandTests {
    static let openmsx = "/usr/share/games/openttd/baseset/openmsx"
    static let timGM = "/usr/share/sounds/sf2/TimGM6mb.sf2"

    /// The `carillon` the CLI tests run: `CARILLON_BINARY` when set (scripts/test gives the
    /// release build: what users run, and renders take a third of the debug build's CPU),
    /// else the one built beside this test bundle.
    static var carillon: String {
        if let given = ProcessInfo.processInfo.environment["CARILLON_BINARY"], !given.isEmpty { return given }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("carillon").path
    }

    struct Result { var status: Int32; var stdout: String; var stderr: String }

    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: carillon)
        process.arguments = arguments
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out; process.standardError = err
        try process.run()
        return (process, out, err)
    }

    static func finish(_ p: (Process, Pipe, Pipe)) -> Result {
        let out = p.1.fileHandleForReading.readDataToEndOfFile()
        let err = p.2.fileHandleForReading.readDataToEndOfFile()
        p.0.waitUntilExit()
        return Result(status: p.0.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                      stderr: String(decoding: err, as: UTF8.self))
    }

    static func carillon(_ arguments: [String], environment: [String: String] = [:]) throws -> Result {
        finish(try start(arguments, environment: environment))
    }

    static func scratch() -> String {
        let path = NSTemporaryDirectory() + "carillon-cli-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func contents(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }

    @Test func render_writesTheFile_andASummaryLine() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try Self.carillon(["render", "\(Self.openmsx)/train_filled_with_cash.mid", "-o", "\(dir)/out.flac",
                                   "--soundfont", Self.timGM, "--bits", "24", "--no-chorus", "--tail", "2"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.contents(dir) == ["out.flac"])
        #expect(r.stdout.contains("out.flac: 1:1"))   // 1:10.x: the piece plus at most 2 s of tail
        #expect(r.stdout.contains("dBFS") && r.stdout.contains("clipped samples") && r.stdout.contains("real time"))
        #expect(r.stderr.isEmpty)   // not a terminal: no progress bar
    }

    @Test func severalInputs_goToTheOutputDirectory() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try Self.carillon(["render", "\(Self.openmsx)/train_filled_with_cash.mid", "\(Self.openmsx)/coconut_run2.mid",
                                   "--output-dir", dir, "--format", "ogg", "--soundfont", Self.timGM, "-q"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(Self.contents(dir) == ["coconut_run2.ogg", "train_filled_with_cash.ogg"])
        #expect(r.stdout.isEmpty)
    }

    @Test(arguments: [("SIGINT", SIGINT), ("SIGTERM", SIGTERM)])
    func signal_duringRender_leavesNoFile(name: String, signal: Int32) throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let running = try Self.start(["render", "\(Self.openmsx)/tttheme2.mid", "-o", "\(dir)/long.wav", "--soundfont", Self.timGM])
        // Wait until the output set's staged name exists (the audio is written straight under it, renamed once
        // by the set's commit): the render is under way.
        var waited = 0
        while Self.contents(dir).isEmpty && waited < 200 { usleep(50_000); waited += 1 }
        #expect(Self.contents(dir) == [".long.wav.carillon-part"], "\(Self.contents(dir))")
        kill(running.0.processIdentifier, signal)
        let r = Self.finish(running)
        #expect(r.status == 128 + signal)
        #expect(Self.contents(dir).isEmpty)
        #expect(r.stderr.contains("interrupted") && r.stderr.contains(name) && r.stderr.contains("was not written"))
    }

    @Test func unwritableOutput_isOneClearError() throws {
        let r = try Self.carillon(["render", "\(Self.openmsx)/coconut_run2.mid", "-o", "/nonexistent-dir/x.wav", "--soundfont", Self.timGM])
        #expect(r.status != 0)
        #expect(r.stderr.hasPrefix("carillon: error: cannot create /nonexistent-dir/x.wav"))
        #expect(r.stderr.split(separator: "\n").count == 1)
    }

    @Test func missingSoundFont_isOneClearError() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try Self.carillon(["render", "\(Self.openmsx)/coconut_run2.mid", "-o", "\(dir)/x.wav", "--soundfont", "/nope/none.sf2"])
        #expect(r.status != 0)
        #expect(r.stderr == "carillon: error: SoundFont not found: /nope/none.sf2 (from --soundfont)\n")
        #expect(Self.contents(dir).isEmpty)
    }

    @Test func corruptSoundFont_isOneClearError() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(atPath: "\(dir)/bad.sf2", contents: Data("not a soundfont".utf8))
        let r = try Self.carillon(["render", "\(Self.openmsx)/coconut_run2.mid", "-o", "\(dir)/x.wav", "--soundfont", "\(dir)/bad.sf2"])
        #expect(r.status != 0)
        #expect(r.stderr == "carillon: error: not a SoundFont (SF2/SF3): \(dir)/bad.sf2\n")
        #expect(Self.contents(dir) == ["bad.sf2"])
    }

    @Test func truncatedSoundFont_isOneClearError() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let head = try FileHandle(forReadingFrom: URL(fileURLWithPath: Self.timGM)).readData(ofLength: 5000)
        FileManager.default.createFile(atPath: "\(dir)/cut.sf2", contents: head)
        let r = try Self.carillon(["render", "\(Self.openmsx)/coconut_run2.mid", "-o", "\(dir)/x.wav", "--soundfont", "\(dir)/cut.sf2"])
        #expect(r.status != 0)
        #expect(r.stderr == "carillon: error: cannot read SoundFont \(dir)/cut.sf2: damaged or truncated (FluidSynth could not load it)\n")
        #expect(Self.contents(dir) == ["cut.sf2"])
    }

    @Test func badMIDIFile_isOneClearError_andLeavesNothing() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(atPath: "\(dir)/bad.mid", contents: Data("hello".utf8))
        let r = try Self.carillon(["render", "\(dir)/bad.mid", "-o", "\(dir)/x.wav", "--soundfont", Self.timGM])
        #expect(r.status != 0)
        #expect(r.stderr.contains("bad.mid: not a readable MIDI file"))
        #expect(r.stderr.split(separator: "\n").count == 1)
        #expect(Self.contents(dir) == ["bad.mid"])
    }

    /// The two ways a render could destroy its own input: `-o` naming it (with
    /// `--format`, or through a link), and `--manifest` taking the first input as
    /// its value (`--manifest a.mid b.mid`). Both refused; the file unchanged.
    @Test func anOutputOrManifestThatIsAnInput_isRefused_andTheInputIsUnchanged() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let song = "\(dir)/song.mid", other = "\(dir)/other.mid"
        try FileManager.default.copyItem(atPath: "\(Self.openmsx)/coconut_run2.mid", toPath: song)
        try FileManager.default.copyItem(atPath: "\(Self.openmsx)/5432gone_redfarn.mid", toPath: other)
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/link.wav", withDestinationPath: song)
        let original = try Data(contentsOf: URL(fileURLWithPath: song))
        for output in [song, "\(dir)/link.wav"] {
            let r = try Self.carillon(["render", song, "-o", output, "--format", "wav", "--soundfont", Self.timGM])
            #expect(r.status != 0)
            #expect(r.stderr.contains("is the input \(song) itself"), "\(r.stderr)")
        }
        let m = try Self.carillon(["render", "--output-dir", "\(dir)/out", "--manifest", song, other, "--soundfont", Self.timGM, "-q"])
        #expect(m.status != 0)
        #expect(m.stderr.contains("\(song): it exists and is not a manifest"), "\(m.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: song)) == original)
    }

    @Test func severalInputs_oneBad_theOthersAreWritten_andTheExitIsNonZero() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: "\(dir)/in", withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: "\(dir)/in/bad.mid", contents: Data("MThd".utf8))
        try FileManager.default.copyItem(atPath: "\(Self.openmsx)/coconut_run2.mid", toPath: "\(dir)/in/coconut_run2.mid")
        let r = try Self.carillon(["render", "\(dir)/in/bad.mid", "\(dir)/in/coconut_run2.mid", "--output-dir", "\(dir)/out",
                                   "--soundfont", Self.timGM, "-q"])
        #expect(r.status == 1)
        #expect(r.stderr.hasPrefix("carillon: error: \(dir)/in/bad.mid: "))
        #expect(Self.contents("\(dir)/out") == ["coconut_run2.wav"])
    }

    @Test func onATerminal_showsProgressWithSpeed() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // util-linux `script` runs the command on a pseudo-terminal.
        let command = "\(Self.carillon) render \(Self.openmsx)/coconut_run2.mid -o \(dir)/x.wav --soundfont \(Self.timGM)"
        let (text, status) = try runOnPseudoTerminal(command)
        #expect(status == 0)
        #expect(text.contains("× real time ETA"))
        #expect(text.contains("coconut_run2.mid ["))
    }

    @Test func outputWithSeveralInputs_isAUsageError() throws {
        let r = try Self.carillon(["render", "a.mid", "b.mid", "-o", "x.wav"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("--output-dir"))
    }

    @Test func oggWithBits_isAUsageError() throws {
        let r = try Self.carillon(["render", "a.mid", "-o", "x.ogg", "--bits", "24"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("Ogg Vorbis has no bit depth"))
    }

    @Test func stems_goBesideTheMixdown_orInAFolderPerInput() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let one = try Self.carillon(["render", "\(Self.openmsx)/coconut_run2.mid", "-o", "\(dir)/mix.wav",
                                     "--stems", "\(dir)/stems", "--soundfont", Self.timGM, "--max-duration", "5", "-q"])
        #expect(one.status == 0, "\(one.stderr)")
        let stems = Self.contents("\(dir)/stems")
        #expect(!stems.isEmpty && stems.allSatisfy { $0.hasPrefix("ch") && $0.hasSuffix(".wav") }, "\(stems)")

        let batch = try Self.carillon(["render", "\(Self.openmsx)/coconut_run2.mid", "\(Self.openmsx)/tttheme2.mid",
                                       "--output-dir", "\(dir)/out", "--format", "flac", "--stems", "\(dir)/batch",
                                       "--soundfont", Self.timGM, "--max-duration", "3", "--jobs", "2", "-q"])
        #expect(batch.status == 0, "\(batch.stderr)")
        #expect(Self.contents("\(dir)/batch") == ["coconut_run2", "tttheme2"])
        #expect(Self.contents("\(dir)/batch/tttheme2").allSatisfy { $0.hasSuffix(".flac") })
        #expect(!Self.contents("\(dir)/batch/tttheme2").isEmpty)
    }

    @Test func labels_goBesideEachOutput_csvOrJSONLines() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let one = try Self.carillon(["render", "\(Self.openmsx)/coconut_run2.mid", "-o", "\(dir)/mix.wav", "--labels",
                                     "--soundfont", Self.timGM, "--max-duration", "5", "-q"])
        #expect(one.status == 0, "\(one.stderr)")
        #expect(Self.contents(dir) == ["mix.beats.csv", "mix.notes.csv", "mix.tempo.csv", "mix.wav"])
        let notes = try String(contentsOfFile: "\(dir)/mix.notes.csv", encoding: .utf8).split(separator: "\n")
        #expect(notes.first?.hasPrefix("onset,offset,pitch,velocity,channel") == true && notes.count > 5)
        // --max-duration: the labels hold what the audio holds.
        #expect(notes.dropFirst().allSatisfy { Double($0.split(separator: ",")[1])! <= 5 })

        let batch = try Self.carillon(["render", "\(Self.openmsx)/coconut_run2.mid", "\(Self.openmsx)/tttheme2.mid",
                                       "--output-dir", "\(dir)/out", "--labels-format", "jsonl",
                                       "--soundfont", Self.timGM, "--max-duration", "2", "--jobs", "2", "-q"])
        #expect(batch.status == 0, "\(batch.stderr)")
        #expect(Self.contents("\(dir)/out").filter { $0.hasPrefix("tttheme2") }
                == ["tttheme2.beats.jsonl", "tttheme2.notes.jsonl", "tttheme2.tempo.jsonl", "tttheme2.wav"])

        let stdout = try Self.carillon(["render", "\(Self.openmsx)/coconut_run2.mid", "-o", "-", "--labels", "--soundfont", Self.timGM])
        #expect(stdout.status != 0 && stdout.stderr.contains("--labels writes files beside the output"))
    }

    /// One MIDI file named, with or without -o or --output-dir: its stems in --stems itself
    /// (the README's `carillon render song.mid --stems D`); a folder is a batch: D/<name>/.
    @Test func stems_ofOneNamedFile_goIntoTheFolderItself_withOrWithoutO() throws {
        let dir = Self.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let song = "\(dir)/song.mid"
        try FileManager.default.copyItem(atPath: "\(Self.openmsx)/coconut_run2.mid", toPath: song)
        let common = ["--soundfont", Self.timGM, "--max-duration", "2", "-q"]
        // As the issue ran it: no -o, no --output-dir (song.wav in the current folder).
        let plain = try RenderFormatTests.shell("cd '\(dir)' && '\(Self.carillon)' render song.mid --stems plain " + common.joined(separator: " "))
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(FileManager.default.fileExists(atPath: "\(dir)/song.wav"))
        for (name, flags) in [("plain", [String]()), ("outdir", ["--output-dir", "\(dir)/out"]), ("o", ["-o", "\(dir)/mix.flac"])] {
            if !flags.isEmpty {
                let r = try Self.carillon(["render", song, "--stems", "\(dir)/\(name)"] + flags + common)
                #expect(r.status == 0, "\(name): \(r.stderr)")
            }
            let stems = Self.contents("\(dir)/\(name)")
            #expect(!stems.isEmpty && stems.allSatisfy { $0.hasPrefix("ch") && $0.contains(".") }, "\(name): \(stems)")
        }
        #expect(Self.contents("\(dir)/out") == ["song.wav"])

        // A folder, even of one file, is a batch: a folder per input, its path mirrored.
        try FileManager.default.createDirectory(atPath: "\(dir)/corpus/sub", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: song, toPath: "\(dir)/corpus/sub/one.mid")
        let folder = try Self.carillon(["render", "\(dir)/corpus", "--output-dir", "\(dir)/fo", "--stems", "\(dir)/fs"] + common)
        #expect(folder.status == 0, "\(folder.stderr)")
        #expect(Self.contents("\(dir)/fs") == ["sub"] && Self.contents("\(dir)/fs/sub") == ["one"])
        #expect(Self.contents("\(dir)/fs/sub/one").allSatisfy { $0.hasPrefix("ch") })
    }

    @Test func stemsWithNormalize_isAUsageError() throws {
        let r = try Self.carillon(["render", "a.mid", "-o", "x.wav", "--stems", "s", "--normalize", "-14"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("--stems cannot be used with --normalize"))
    }
}
