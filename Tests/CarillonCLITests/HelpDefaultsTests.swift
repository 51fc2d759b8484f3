import ArgumentParser
@testable import CarillonCommands
import Controls
import Foundation
import Hosting
@testable import LiveSession
@testable import OfflineRender
import Parameters
@testable import Sampling
import SoundFile
import Testing

/// Every default a subcommand's help states — ArgumentParser's "(default: X)"
/// and any "default X" / "Default: X" written by hand — is checked against the
/// value the parsed command hands on when the option is left out, so a help
/// text that lies fails. A statement may name its contexts: "Default: 48000
/// for live and play, 44100 for render"; each context this command knows is checked.
@Suite struct HelpDefaultsTests {
    /// What each option's default is in this command, by context (the command's
    /// own name, or a context a statement names, such as "a batch").
    typealias Defaults = [String: [String: String]]

    static var commands: [(name: String, type: any ParsableCommand.Type, defaults: () throws -> Defaults)] { [
        ("render", Render.self, { try renderDefaults() }),
        ("play", Play.self, { try hostDefaults(try Play.parse(["song.mid"]), "play", extra: try playExtras()) }),
        ("live", Live.self, { try hostDefaults(try Live.parse([]), "live", extra: [:]) }),
        ("inspect", Inspect.self, { [:] }),
        ("ports", Ports.self, { [:] }),
        ("check", Mapping.Check.self, { ["--soundfont": ["check": try Mapping.Check.parse(["m.yaml"]).soundfont ?? "$" + SoundFontLocator.environmentVariable]] }),
    ] }

    @Test(arguments: commands.map(\.name))
    func everyStatedDefault_isTheParsedDefault(_ name: String) throws {
        let command = try #require(Self.commands.first { $0.name == name })
        let defaults = try command.defaults()
        var checked = 0
        for entry in HelpEntry.entries(in: Self.help(command.type)) {
            for statement in try DefaultStatement.all(in: entry.text) {
                var matched = false
                for clause in statement.clauses {
                    for context in clause.contexts ?? [name] {
                        guard let expected = defaults[entry.name]?[context] else { continue }
                        matched = true
                        checked += 1
                        #expect(Self.same(clause.value, expected),
                                "carillon \(name) \(entry.name): help says default \"\(clause.value)\"\(clause.contexts == nil ? "" : " for \(context)"), the parsed command gives \"\(expected)\"")
                    }
                }
                #expect(matched, "carillon \(name) \(entry.name): the help states a default (\"\(statement.text)\") this test does not know how to check; add it to the command's defaults")
            }
        }
        if name != "inspect" && name != "ports" && name != "check" { #expect(checked > 5, "only \(checked) defaults found in carillon \(name)'s help") }
    }

    /// The statement reader itself: it must find hand-written defaults in every wording used.
    @Test func statements_areReadInEveryWording() throws {
        let text = "Sample rate (FluidSynth's default 0.9). Default: 48000 for live and play, 44100 for render (or Opus: 48000). "
            + "(values: a, b; default: stamped) Default: off (on with --stems); more. default-GM.sf2 is a file name (default: default)"
        let found = try DefaultStatement.all(in: text)
        #expect(found.map { $0.clauses.map(\.value) } == [["0.9"], ["48000", "44100"], ["stamped"], ["off"], ["default"]])
        #expect(found[1].clauses.map(\.contexts) == [["live", "play"], ["render"]])
        #expect(throws: DefaultStatement.Unreadable.self) { try DefaultStatement.all(in: "stamped (the default): each event") }
    }

    /// The lie issue 18 found: `--channel-effects` said "on for live and play" while the code gives off.
    @Test func aLyingStatement_isCaught() throws {
        let statement = try #require(try DefaultStatement.all(in: "Default: on for live and play, off for render (on with --stems).").first)
        let live = try Self.hostDefaults(try Live.parse([]), "live", extra: [:])
        let expected = try #require(live["--channel-effects"]?["live"])
        let said = try #require(statement.clauses.first { $0.contexts?.contains("live") == true })
        #expect(!Self.same(said.value, expected))
    }

    /// One declaration per option: an option two subcommands take reads the same in both.
    @Test func anOptionReadsTheSameInEveryCommand() {
        var seen: [String: (command: String, text: String)] = [:]
        for command in Self.commands {
            for entry in HelpEntry.entries(in: Self.help(command.type)) where entry.name.hasPrefix("-") {
                if let earlier = seen[entry.name] {
                    #expect(earlier.text == entry.text, "\(entry.name) differs between carillon \(earlier.command) and \(command.name):\n\(earlier.text)\n\(entry.text)")
                } else {
                    seen[entry.name] = (command.name, entry.text)
                }
            }
        }
        #expect(seen["--rate"] != nil && seen["--tail"] != nil)
    }

    /// Completions and the man page are generated from these: nothing may be left unsaid.
    @Test(arguments: commands.map(\.name))
    func everyOptionHasHelp_andAClearValueName(_ name: String) throws {
        let command = try #require(Self.commands.first { $0.name == name })
        let text = Self.help(command.type)
        let entries = HelpEntry.entries(in: text)
        #expect(!entries.isEmpty)
        for entry in entries { #expect(!entry.text.isEmpty, "carillon \(name) \(entry.name) has no help") }
        #expect(!text.contains("<value>"), "a value name left at ArgumentParser's <value> in carillon \(name)")
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScripts_areGenerated(_ shell: String) throws {
        let r = try RenderCommandTests.carillon(["--generate-completion-script", shell])
        #expect(r.status == 0, "\(r.stderr)")
        for subcommand in ["render", "inspect", "ports", "live", "play", "mapping"] {
            #expect(r.stdout.contains(subcommand), "\(shell) completion lacks \(subcommand)")
        }
        #expect(r.stdout.contains("channel-effects") && r.stdout.contains("rate"))
    }

    // MARK: - What the commands hand on

    static func help(_ type: any ParsableCommand.Type) -> String {
        CarillonCommand.helpMessage(for: type, includeHidden: true, columns: 100_000)
    }

    static func onOff(_ value: Bool) -> String { value ? "on" : "off" }
    static func flag(_ name: String, _ value: Bool) -> String { value ? "--\(name)" : "--no-\(name)" }
    static func bits(_ encoding: SampleEncoding) -> String { [16, 24, 32].first { SampleEncoding(bits: $0) == encoding }.map(String.init) ?? "none" }
    static func tableDefault(_ address: String) throws -> String {
        String(try #require(ParameterAddress(address)).spec.defaultValue)
    }

    /// The options `live` and `play` share, read from what the host is given.
    static func synthDefaults(_ host: HostOptions, soundfont: String?, _ context: String) throws -> Defaults {
        let sampler = host.sampler
        return [
            "--soundfont": [context: soundfont ?? "$" + SoundFontLocator.environmentVariable],
            "--gain": [context: String(sampler.gain)],
            "--reverb": [context: flag("reverb", sampler.reverb)],
            "--reverb-level": [context: try sampler.reverbLevel.map { String($0) } ?? tableDefault("synth.reverb.level")],
            "--chorus": [context: flag("chorus", sampler.chorus)],
            "--chorus-level": [context: try sampler.chorusLevel.map { String($0) } ?? tableDefault("synth.chorus.level")],
            "--channel-effects": [context: onOff(sampler.effectsPerChannel)],
            "--a4": [context: String(host.a4)],
        ]
    }

    static func hostDefaults(_ command: some HostCommand, _ context: String, extra: [String: Double]) throws -> Defaults {
        let options = HostSession.options(input: command.input, audio: command.audio, synth: command.synth, mapping: nil)
        var defaults = try synthDefaults(options.host, soundfont: command.synth.soundfont.first, context)
        defaults["--client-name"] = [context: options.clientName]
        // Where feedback goes when --feedback is left out: what the host connects to, given a mapping's port.
        let feedback = ControllerFeedback.destinations(explicit: options.feedback, mappingPort: "nanoKONTROL2")
        defaults["--feedback"] = [context: feedback == ["nanoKONTROL2"] ? "the mapping's port: pattern" : feedback.joined(separator: ",")]
        defaults["--audio-driver"] = [context: options.backend.rawValue]
        defaults["--device"] = [context: options.device]
        defaults["--rate"] = [context: String(options.sampleRate)]
        defaults["--period"] = [context: String(options.periodFrames)]
        defaults["--periods"] = [context: String(options.periods)]
        defaults["--timing"] = [context: options.timing.rawValue]
        // --record-bits: the recorder writes the format's first encoding when not given.
        var recording = options
        recording.audio = true
        try command.recording.apply(to: &recording)
        defaults["--record-bits"] = [context: bits(recording.record?.encoding ?? AudioFileFormat.wav.encodings[0])]
        if let live = command as? Live { defaults["--duration"] = [context: live.duration.map { String($0) } ?? "until Ctrl-C"] }
        for (name, value) in extra { defaults[name] = [context: String(value)] }
        return defaults
    }

    static func playExtras() throws -> [String: Double] {
        let play = try Play.parse(["song.mid"])
        return ["--tail": play.tail, "--tempo": play.tempo, "--start": play.start]
    }

    static func renderDefaults() throws -> Defaults {
        let render = try Render.parse(["song.mid"])
        var defaults = try synthDefaults(render.synth.hostOptions, soundfont: render.synth.soundfont.first, "render")
        let wav = try render.audio.resolve(for: "song.wav"), batch = try render.audio.resolve(for: nil)
        let flac = try render.audio.resolve(for: "song.flac")
        defaults["--rate"] = ["render": String(wav.rate)]
        defaults["--format"] = ["render": flac.format == .flac && wav.format == .wav ? "by the output's extension" : flac.format.rawValue,
                                "--output-dir": batch.format.rawValue]
        defaults["--bits"] = ["render": bits(wav.encoding ?? wav.format.encodings[0])]
        defaults["--tail"] = ["render": String(render.tail)]
        defaults["--silence"] = ["render": String(render.silence)]
        defaults["--max-gap"] = ["render": String(render.maxGap)]
        defaults["--max-duration"] = ["render": render.maxDurationLimit.map { String($0) } ?? "none"]
        defaults["--seed"] = ["render": String(render.augment.seedValue)]
        defaults["--true-peak"] = ["render": String(render.truePeak)]
        defaults["--soundfont-pick"] = ["render": render.soundFontPick.rawValue]
        defaults["--input-root"] = ["render": try inputRootDefault(render.inputRoot)]
        let cores = RenderJob.Options.cores
        func inCores(_ n: Int) -> String { n == cores ? "the number of cores" : String(n) }
        defaults["--jobs"] = ["render": inCores(render.jobCount)]
        let take = try Render.parse(["song.mid", "--mapping", "rig.yaml", "--take"])
        defaults["--threads"] = ["one file": inCores(render.threadCount(files: 1)), "a batch": inCores(render.threadCount(files: 2)),
                                 "a take": inCores(take.threadCount(files: 1))]
        func block(_ command: Render, threads: Int) -> String {
            var options = RenderJob.Options()
            options.blockFrames = command.blockFrames
            options.threads = threads
            return String(options.effectiveBlockFrames)
        }
        defaults["--block"] = ["one synth": block(render, threads: 1), "a pool": block(render, threads: 2),
                               "a take": block(take, threads: take.threadCount(files: 1))]
        return defaults
    }

    /// The root the inputs are keyed against when --input-root is `root` (the
    /// parsed default): files in `corpus/` and `corpus/sub/` gathered as the
    /// render gathers them; keyed below `corpus` is "the deepest folder holding every input".
    static func inputRootDefault(_ root: String?) throws -> String {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: "\(dir)/corpus/sub", withIntermediateDirectories: true)
        for file in ["corpus/a.mid", "corpus/sub/b.mid"] { FileManager.default.createFile(atPath: "\(dir)/\(file)", contents: Data()) }
        let keys = try BatchInputs.gather(arguments: ["\(dir)/corpus/a.mid", "\(dir)/corpus/sub/b.mid"], list: nil, root: root)
            .map(\.key)
        return Set(keys) == ["a.mid", "sub/b.mid"] ? "the deepest folder holding every input" : "keys \(keys)"
    }

    /// Numbers compare as numbers ("10" is 10.0), words without case.
    static func same(_ said: String, _ value: String) -> Bool {
        if let a = Double(said), let b = Double(value) { return a == b }
        return said.lowercased() == value.lowercased()
    }
}

/// What `live` and `play` share, for reading their defaults alike.
protocol HostCommand {
    var input: MIDIInputOptions { get }
    var audio: AudioDeviceOptions { get }
    var synth: SynthOptions { get }
    var recording: RecordOptions { get }
}
extension Live: HostCommand {}
extension Play: HostCommand {}

/// One option or argument of a help page: its long name (or `<value>` name) and its text.
struct HelpEntry {
    var name: String
    var text: String

    static func entries(in help: String) -> [HelpEntry] {
        var entries: [HelpEntry] = []
        var inList = false
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasSuffix(":") && !line.hasPrefix(" ") { inList = line == "OPTIONS:" || line == "ARGUMENTS:"; continue }
            guard inList, !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            if line.hasPrefix("  -") || line.hasPrefix("  <") {
                // "  -r, --rate <hz>         text": ArgumentParser starts the text at column 26;
                // longer names stand alone and the text follows on the next line.
                let chars = Array(line)
                let fits = chars.count > 26 && chars[25] == " "
                let names = String(fits ? chars[2..<25] : chars[2...]).trimmingCharacters(in: .whitespaces)
                let text = fits ? String(chars[26...]).trimmingCharacters(in: .whitespaces) : ""
                let long = names.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "/" })
                    .first { $0.hasPrefix("--") }.map(String.init)
                entries.append(HelpEntry(name: long ?? names.split(separator: " ").first.map(String.init) ?? names, text: text))
            } else if !entries.isEmpty {
                let more = line.trimmingCharacters(in: .whitespaces)
                entries[entries.count - 1].text += (entries[entries.count - 1].text.isEmpty ? "" : " ") + more
            }
        }
        return entries.filter { $0.name != "--help" && $0.name != "--version" }
    }
}

/// A default stated in help text: "default: X", "Default X", "default X for A and B, Y for C".
struct DefaultStatement {
    struct Clause { var value: String; var contexts: [String]? }
    struct Unreadable: Error, CustomStringConvertible { var description: String }

    var text: String
    var clauses: [Clause]

    /// Every statement in `text`; a "default" with no value after it (as in "X (the default)") is an error.
    static func all(in text: String) throws(Unreadable) -> [DefaultStatement] {
        let chars = Array(text)
        let word = Array("default")
        var found: [DefaultStatement] = []
        var i = 0
        while i + word.count <= chars.count {
            let isWord = chars[i..<(i + word.count)].map { Character($0.lowercased()) } == word
                && (i == 0 || !chars[i - 1].isLetter)
                && (i + word.count == chars.count || !(chars[i + word.count].isLetter || chars[i + word.count] == "-"))
            guard isWord else { i += 1; continue }
            var j = i + word.count
            if j < chars.count && chars[j] == ":" { j += 1 }
            while j < chars.count && chars[j] == " " { j += 1 }
            // The value runs to the end of its sentence, clause or bracket; asides in brackets are dropped.
            var value = "", depth = 0
            while j < chars.count {
                let c = chars[j]
                if c == "(" { depth += 1 } else if c == ")" { if depth == 0 { break }; depth -= 1 }
                else if depth == 0 && (c == ";" || (c == "." && (j + 1 == chars.count || chars[j + 1] == " "))) { break }
                else if depth == 0 { value.append(c) }
                j += 1
            }
            value = value.trimmingCharacters(in: .whitespaces)
            guard !value.isEmpty else {
                throw Unreadable(description: "\"default\" without a value at \"\(String(chars[max(0, i - 20)..<min(chars.count, i + 20)]))\"")
            }
            // The first clause always; later ones only where they name their context ("Y for render").
            var clauses: [Clause] = []
            for (n, part) in value.components(separatedBy: ", ").enumerated() {
                let part = part.trimmingCharacters(in: .whitespaces)
                if let f = part.range(of: " for ") {
                    let contexts = part[f.upperBound...].components(separatedBy: " and ").map { $0.trimmingCharacters(in: .whitespaces) }
                    clauses.append(Clause(value: String(part[..<f.lowerBound]), contexts: contexts))
                } else if n == 0 {
                    clauses.append(Clause(value: part, contexts: nil))
                }
            }
            found.append(DefaultStatement(text: value, clauses: clauses))
            i = j
        }
        return found
    }
}
