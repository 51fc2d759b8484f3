import Controls
import Foundation
import MIDI
import MappingFiles
import SeededRandom
import Testing

/// Random and mutated mapping files; shared by the test and `scripts/fuzz-mapping`.
struct MappingFuzzer {
    var rng: SeededGenerator
    let corpus: [[String]]  // lines of real mapping files

    static let tokens = [
        ":", "-", "[", "]", "{", "}", ",", "#", "&a", "*a", "!", "|", ">", "'", "\"", "%", "@", "`", "\t", " ", "\n",
        "~", "null", "true", "false", "yes", "no", "0", "-1", "127", "128", "16383", "16384", "999999999999999999999",
        "1e400", "-1e400", ".nan", ".inf", "0x7F", "0o17", "1.5", "3.", "-0", "any", "all", "cc", "cc14", "nrpn", "rpn",
        "note", "program-change", "pitch-bend", "channel-pressure", "channel", "order", "bits", "lsb-first", "auto",
        "name", "kind", "source", "targets", "curve", "shape", "points", "invert", "steps", "values", "range", "unit",
        "default", "soft-takeover", "encoding", "acceleration", "resolution", "follow-value", "shows", "address",
        "fader", "knob", "encoder", "toggle", "button", "momentary", "pad", "selector", "readout", "table", "s-curve",
        "exponential", "logarithmic", "linear", "offset-64", "twos-complement", "master.gain", "strip.16.pan",
        "channel.1.cc.127", "transport.play", "tone.frequency", "dB", "Hz", "controls", "channels", "port", "soundfont",
        "[[[[[[[[", "{{{{", "- - - -", "? a\n: b", "<<: *a", "\u{FEFF}", "é", "\u{0}", "\u{7F}",
    ]

    init(seed: UInt64, corpus: [String]) {
        rng = SeededGenerator(seed: seed)
        self.corpus = corpus.map { $0.components(separatedBy: "\n") }
    }

    mutating func int(_ n: Int) -> Int { Int.random(in: 0..<max(1, n), using: &rng) }
    mutating func token() -> String { Self.tokens[int(Self.tokens.count)] }

    /// One input: a window of a real file, mutated a few times, or a generated document.
    mutating func next() -> String {
        if int(4) == 0 { return generated() }
        let file = corpus[int(corpus.count)]
        if int(16) == 0 {  // a whole file with one small change: often still valid, so the surface runs
            var lines = file
            mutate(&lines)
            return lines.joined(separator: "\n")
        }
        let start = int(file.count)
        var lines = Array(file[start..<min(file.count, start + 1 + int(24))])
        if int(2) == 0 { lines.insert("controls:", at: 0) }
        for _ in 0...int(4) { mutate(&lines) }
        return lines.joined(separator: "\n")
    }

    private mutating func mutate(_ lines: inout [String]) {
        guard !lines.isEmpty else { lines = [token()]; return }
        let i = int(lines.count)
        switch int(7) {
        case 0:  // replace a character
            var chars = Array(lines[i])
            if !chars.isEmpty { chars[int(chars.count)] = Character(token().first.map(String.init) ?? " ") }
            lines[i] = String(chars)
        case 1:  // insert a token
            var chars = Array(lines[i])
            chars.insert(contentsOf: token(), at: int(chars.count + 1))
            lines[i] = String(chars)
        case 2: lines.remove(at: i)
        case 3: lines.insert(lines[i], at: int(lines.count))
        case 4: lines.swapAt(i, int(lines.count))
        case 5:  // replace a value after a colon
            if let colon = lines[i].firstIndex(of: ":") {
                lines[i] = String(lines[i][...colon]) + " " + token()
            }
        default:  // change indentation
            lines[i] = String(repeating: " ", count: int(9)) + lines[i].trimmingCharacters(in: .whitespaces)
        }
    }

    /// A document built from the format's own keys with random values.
    private mutating func generated() -> String {
        var out = "controls:\n"
        for _ in 0..<(1 + int(6)) {
            out += "  - name: \(token())\n"
            for _ in 0..<int(8) {
                let key = Self.tokens[40 + int(Self.tokens.count - 40)]
                switch int(4) {
                case 0: out += "    \(key): \(token())\n"
                case 1: out += "    \(key): [\(token()), \(token())]\n"
                case 2: out += "    \(key): { \(token()): \(token()), channel: \(token()) }\n"
                default: out += "    \(key):\n      - \(token())\n      - { address: \(token()), range: [\(token()), \(token())] }\n"
                }
            }
        }
        return out
    }

    /// What one input did: whether it loaded, how many changes its surface
    /// published (every control with targets publishes at least once, in
    /// `publishAll`), and the non-finite values it published (each a fault).
    struct Outcome {
        var loaded = false
        var published = 0
        var controlsWithTargets = 0
        var nonFinite: [String] = []
    }

    /// Loads one input; when it loads, runs a surface with random MIDI and UI calls.
    @discardableResult
    mutating func exercise(_ yaml: String) -> Outcome {
        var outcome = Outcome()
        guard let mapping = try? ControlMapping.parse(yaml: yaml, file: "fuzz.yaml") else { return outcome }
        outcome.loaded = true
        _ = mapping.explanation()
        let surface = ControlSurface(mapping: mapping)
        var published = 0
        var nonFinite: [String] = []
        surface.subscribe { change in
            if !change.value.isFinite { nonFinite.append("\(change.address) = \(change.value)") }
            published += 1
        }
        for _ in 0..<40 {
            let ch = Channel(int(16))
            let message: MIDIMessage = switch int(6) {
            case 0, 1: .cc(UInt7(int(128)), value: UInt7(int(128)), channel: ch)
            case 2: .noteOn(UInt7(int(128)), velocity: UInt7(int(128)), channel: ch)
            case 3: .noteOff(UInt7(int(128)), channel: ch)
            case 4: .programChange(UInt7(int(128)), channel: ch)
            default: .pitchBend(UInt14(int(16384)), channel: ch)
            }
            surface.receive(message)
            if int(8) == 0 { surface.tick() }
        }
        for state in surface.states.prefix(24) {
            surface.setValue([0, 1, -1e12, .nan, .infinity, 0.5][int(6)], ofControl: state.name)
            surface.setReadout(state.name, value: [0, .nan, 1e300][int(3)])
            for target in state.targets { surface.parameterDidChange(target, value: [0, 1e300, -1e300][int(3)]) }
        }
        surface.publishAll()
        _ = surface.states.map(\.display)
        outcome.published = published
        outcome.nonFinite = nonFinite
        outcome.controlsWithTargets = surface.states.filter { !$0.targets.isEmpty && $0.kind != .readout }.count
        return outcome
    }
}

@Suite struct MappingFuzzTests {
    static func corpus() throws -> [String] {
        let files = mappingFiles()
        var texts = try files.map { try String(contentsOfFile: $0, encoding: .utf8) }
        let readme = try String(contentsOfFile: mappingsFolder.appendingPathComponent("README.md").path, encoding: .utf8)
        if let start = readme.range(of: "```yaml\n"), let end = readme.range(of: "```", range: start.upperBound..<readme.endIndex) {
            texts.append(String(readme[start.upperBound..<end.lowerBound]))
        }
        return texts
    }

    /// 20 000 inputs from a fixed seed: no crash; every mapping that loads runs,
    /// publishes each control with targets, and publishes no non-finite value
    /// (a fault fails this test with the input, not the whole run).
    /// `scripts/fuzz-mapping` runs more, with other seeds, through
    /// CARILLON_FUZZ_COUNT and CARILLON_FUZZ_SEED.
    @Test func loader_survivesRandomAndMutatedYAML() throws {
        let environment = ProcessInfo.processInfo.environment
        let count = environment["CARILLON_FUZZ_COUNT"].flatMap { Int($0) } ?? 20_000
        let seed = environment["CARILLON_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0xCA41_110F
        var fuzzer = MappingFuzzer(seed: seed, corpus: try Self.corpus())
        var loaded = 0, published = 0, silent = 0, faults = 0
        for _ in 0..<count {
            let yaml = fuzzer.next()
            let outcome = fuzzer.exercise(yaml)
            guard outcome.loaded else { continue }
            loaded += 1
            published += outcome.published
            if outcome.published < outcome.controlsWithTargets { silent += 1 }
            if !outcome.nonFinite.isEmpty {
                faults += 1
                if faults <= 3 { Issue.record("non-finite values published (\(outcome.nonFinite.prefix(3))) for:\n\(yaml)") }
            }
        }
        // Some mutations keep the file valid: the running half is exercised too.
        #expect(loaded > count / 200)
        #expect(published >= loaded, "the mappings that loaded published \(published) changes in all")
        #expect(silent == 0, "\(silent) loaded mappings published fewer changes than they have controls with targets")
        #expect(faults == 0)
    }
}
