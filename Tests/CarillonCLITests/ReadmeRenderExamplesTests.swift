import Foundation
import Testing

/// Every `carillon …` line in the code of the README's "## Render" section
/// (up to the next `## ` heading, so the section may change), and every
/// `carillon render …` line in the reference pages it links (docs/render.md,
/// docs/plugins.md), runs as written,
/// through /bin/sh, with `carillon` the built binary, in a folder that holds a
/// small `song.mid`, `corpus/` (two files, one in a sub-folder) and `files.txt`;
/// the SoundFont is the repository's small test font ($CARILLON_SOUNDFONT), the
/// Slurm variables are set as in a one-task array. A line whose comment says
/// `not run:` (and why) is skipped.
@Suite(.serialized) struct ReadmeRenderExamplesTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The command lines of a README section's code (fenced or indented), comments kept; nil: every section's.
    static func commandLines(ofSection heading: String?, in readme: String) -> [String] {
        var inSection = heading == nil, inFence = false
        var lines: [String] = []
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("## ") { inSection = heading == nil || line == heading; inFence = false; continue }
            guard inSection else { continue }
            if line.hasPrefix("```") { inFence.toggle(); continue }
            let code = inFence ? line : (line.hasPrefix("    ") ? String(line.dropFirst(4)) : "")
            let trimmed = code.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("carillon ") { lines.append(trimmed) }
        }
        return lines
    }

    /// A type-0 Standard MIDI File: a C major chord for half a second, then a note.
    static let smallMIDI: [UInt8] = {
        let events: [UInt8] = [
            0x00, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20,   // 120 bpm
            0x00, 0xC0, 0x00,                            // piano
            0x00, 0x90, 60, 100, 0x00, 0x90, 64, 100, 0x00, 0x90, 67, 100,
            0x81, 0x70, 0x80, 60, 0, 0x00, 0x80, 64, 0, 0x00, 0x80, 67, 0,   // 240 ticks later
            0x00, 0x99, 38, 110, 0x60, 0x89, 38, 0,      // a snare on channel 10
            0x00, 0xFF, 0x2F, 0x00,
        ]
        let n = UInt32(events.count)
        return Array("MThd".utf8) + [0, 0, 0, 6, 0, 0, 0, 1, 0x01, 0xE0]
            + Array("MTrk".utf8) + [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] + events
    }()

    @Test func commandLines_areFoundBySectionHeading() {
        let text = "## Render\n```sh\ncarillon render a.mid -o a.wav   # x\n```\n\n    carillon render b.mid\n## Mixer\n```\ncarillon live\n```\n"
        #expect(Self.commandLines(ofSection: "## Render", in: text) == ["carillon render a.mid -o a.wav   # x", "carillon render b.mid"])
    }

    /// The command lines of every code block in a document (fenced or indented), comments kept.
    static func commandLines(in text: String) -> [String] {
        commandLines(ofSection: nil, in: text)
    }

    @Test func commandLines_ofADocument_areEveryBlocksLines() {
        let text = "# Doc\n```sh\ncarillon render a.mid\n```\n## Part\n\n    carillon render b.mid\n"
        #expect(Self.commandLines(in: text) == ["carillon render a.mid", "carillon render b.mid"])
    }

    @Test func readmeRenderSection_everyCommandRunsAsWritten() throws {
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let commands = Self.commandLines(ofSection: "## Render", in: readme)
        #expect(commands.count >= 5, "\(commands)")
        let work = try Self.run(commands, from: "README")
        defer { try? FileManager.default.removeItem(atPath: (work as NSString).deletingLastPathComponent) }
        // What the lines promise is there.
        #expect(FileManager.default.fileExists(atPath: "\(work)/song.opus"))
        let stems = RenderCommandTests.contents("\(work)/stems")
        #expect(!stems.isEmpty && stems.allSatisfy { $0.hasSuffix(".wav") }, "\(stems)")
    }

    /// The reference pages the README points to: every `carillon render` line in their code runs as written too.
    @Test(arguments: ["docs/render.md", "docs/plugins.md"])
    func docsPage_everyRenderCommandRunsAsWritten(_ page: String) throws {
        let text = try String(contentsOf: Self.repository.appendingPathComponent(page), encoding: .utf8)
        let commands = Self.commandLines(in: text).filter { $0.hasPrefix("carillon render ") }
        #expect(commands.count >= 2, "\(page): \(commands)")
        let work = try Self.run(commands, from: page)
        defer { try? FileManager.default.removeItem(atPath: (work as NSString).deletingLastPathComponent) }
        if page == "docs/render.md" {
            #expect(FileManager.default.fileExists(atPath: "\(work)/song.stems.json"))
            #expect(FileManager.default.fileExists(atPath: "\(work)/sets/a.TimGM6mb.wav"))
            #expect(FileManager.default.fileExists(atPath: "\(work)/aug/manifest.jsonl"))
        }
    }

    /// The README stays a manual: its two first commands, and room for what comes.
    @Test func readme_startsWithSetupAndTest_inAtMost300Lines() throws {
        let readme = try String(contentsOf: Self.repository.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count <= 300, "README.md has \(lines.count) lines")
        let fence = try #require(lines.firstIndex { $0.hasPrefix("```") })
        #expect(lines[fence + 1].hasPrefix("scripts/setup && swift build -c release && .build/release/carillon render "))
        #expect(lines[fence + 2] == "scripts/test")
    }

    /// Runs `commands` through /bin/sh, one after the other, in a new folder
    /// (see the type's comment); returns that folder. `source` names them in failures.
    static func run(_ commands: [String], from source: String) throws -> String {
        let dir = RenderCommandTests.scratch()
        let fm = FileManager.default
        try fm.createDirectory(atPath: "\(dir)/bin", withIntermediateDirectories: true)
        try fm.createSymbolicLink(atPath: "\(dir)/bin/carillon", withDestinationPath: RenderCommandTests.carillon)
        let work = "\(dir)/work"
        try fm.createDirectory(atPath: "\(work)/corpus/b", withIntermediateDirectories: true)
        for path in ["song.mid", "corpus/a.mid", "corpus/b/c.mid"] {
            fm.createFile(atPath: "\(work)/\(path)", contents: Data(Self.smallMIDI))
        }
        try "corpus/a.mid\ncorpus/b/c.mid\n".write(toFile: "\(work)/files.txt", atomically: true, encoding: .utf8)

        for command in commands {
            if let reason = command.range(of: "not run:").map({ command[$0.upperBound...] }) {
                #expect(reason.trimmingCharacters(in: .whitespaces).count > 5, "say why '\(command)' cannot run")
                continue
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", command]
            process.currentDirectoryURL = URL(fileURLWithPath: work)
            var environment = ProcessInfo.processInfo.environment
            environment["PATH"] = "\(dir)/bin:" + (environment["PATH"] ?? "/usr/bin:/bin")
            environment["CARILLON_SOUNDFONT"] = Self.repository.appendingPathComponent("soundfonts/carillon-test.sf2").path
            environment["SLURM_ARRAY_TASK_ID"] = "0"
            environment["SLURM_ARRAY_TASK_COUNT"] = "1"
            environment["SLURM_ARRAY_TASK_MIN"] = "0"
            environment["SLURM_ARRAY_TASK_MAX"] = "0"
            process.environment = environment
            let err = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = err
            try process.run()
            let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(source): \(command)\n\(stderr)")
        }
        return work
    }
}
