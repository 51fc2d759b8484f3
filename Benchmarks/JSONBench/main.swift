// The manifest's JSON, two ways (issue 28: one encoder and one decoder for the
// manifest, the stems report and the JSON labels; Benchmarks/README.md, "JSON").
//
//   swift build -c release --product json-bench && .build/release/json-bench [LINES] [FILE] [ROUNDS]
//   # defaults: 100000 lines, bench-out/json-bench.jsonl, 3 rounds
//
// Writes LINES manifest lines to FILE and reads them back, two ways:
//   - string: the hand-concatenated writer the manifest had before issue 28
//     (kept here, and only here, to measure it), read back with
//     JSONSerialization (the string fields, as resuming read them);
//   - codable: one JSONEncoder (.sortedKeys, .withoutEscapingSlashes) over a
//     Codable entry with the same fields (absent and non-finite numbers null),
//     read back with one JSONDecoder, whole entries and the three fields resuming needs.
// Write = encode every line and write(2) each, as ManifestWriter.append does; read =
// read the file and decode every line. Time is the thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID: other processes on a loaded machine do not count), best of
// ROUNDS; wall time of the same round beside it. Checks that both ways read back
// the same inputs, outputs and statuses.
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// MARK: The entry

struct Entry: Codable, Equatable {
    struct Augment: Codable, Equatable {
        var seed: UInt64, transpose: Int, tempo: Double, velocityScale: Double, programMap: String?, notesDropped: Int?
        enum CodingKeys: String, CodingKey {
            case seed, transpose, tempo, velocityScale = "velocity_scale", programMap = "program_map", notesDropped = "notes_dropped"
        }
        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(seed, forKey: .seed); try c.encode(transpose, forKey: .transpose)
            try c.encodeNumber(tempo, forKey: .tempo); try c.encodeNumber(velocityScale, forKey: .velocityScale)
            try c.encode(programMap, forKey: .programMap); try c.encode(notesDropped, forKey: .notesDropped)
        }
    }
    var input: String, output: String, status: String, error: String?
    var pieceSeconds: Double?, renderedSeconds: Double?, peakDBFS: Double?, clippedSamples: Int?, loudness: Double?
    var truePeak: Double?, gain: Double?, normalized: Double?, truncated: Bool, gapsCut: Int?, secondsCut: Double?
    var renderSeconds: Double?, version: String, soundFont: String, soundFontBytes: Int
    var augment: Augment?, stemsJSON: String?, stems: [String]?

    enum CodingKeys: String, CodingKey {
        case input, output, status, error, pieceSeconds = "piece_seconds", renderedSeconds = "rendered_seconds"
        case peakDBFS = "peak_dbfs", clippedSamples = "clipped_samples", loudness = "loudness_lufs"
        case truePeak = "true_peak_dbtp", gain = "gain_db", normalized = "normalized_lufs", truncated
        case gapsCut = "gaps_cut", secondsCut = "seconds_cut", renderSeconds = "render_seconds"
        case version = "carillon_version", soundFont = "soundfont", soundFontBytes = "soundfont_bytes"
        case augment, stemsJSON = "stems_json", stems
    }

    // Every field present, null when absent (synthesized Codable would leave it out).
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(input, forKey: .input); try c.encode(output, forKey: .output); try c.encode(status, forKey: .status)
        try c.encode(error, forKey: .error)
        try c.encodeNumber(pieceSeconds, forKey: .pieceSeconds); try c.encodeNumber(renderedSeconds, forKey: .renderedSeconds)
        try c.encodeNumber(peakDBFS, forKey: .peakDBFS); try c.encode(clippedSamples, forKey: .clippedSamples)
        try c.encodeNumber(loudness, forKey: .loudness); try c.encodeNumber(truePeak, forKey: .truePeak)
        try c.encodeNumber(gain, forKey: .gain); try c.encodeNumber(normalized, forKey: .normalized)
        try c.encode(truncated, forKey: .truncated); try c.encode(gapsCut, forKey: .gapsCut)
        try c.encodeNumber(secondsCut, forKey: .secondsCut); try c.encodeNumber(renderSeconds, forKey: .renderSeconds)
        try c.encode(version, forKey: .version); try c.encode(soundFont, forKey: .soundFont)
        try c.encode(soundFontBytes, forKey: .soundFontBytes)
        try c.encodeIfPresent(augment, forKey: .augment)
        if let stemsJSON { try c.encode(stemsJSON, forKey: .stemsJSON); try c.encode(stems ?? [], forKey: .stems) }
    }
}

extension KeyedEncodingContainer {
    /// A number, or null when absent or not finite (JSON has no ±∞ or NaN).
    mutating func encodeNumber(_ value: Double?, forKey key: Key) throws {
        if let value, value.isFinite { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
}

/// What resuming reads of a line.
struct Key: Decodable { var input: String; var output: String?; var status: String? }

// MARK: The string writer the manifest had (Sources/OfflineRender/Manifest.swift before issue 28)

enum StringWriter {
    static func line(_ e: Entry) -> String {
        var fields: [(String, String)] = [
            ("input", string(e.input)), ("output", string(e.output)), ("status", string(e.status)),
            ("error", e.error.map(string) ?? "null"),
            ("piece_seconds", number(e.pieceSeconds)), ("rendered_seconds", number(e.renderedSeconds)),
            ("peak_dbfs", number(e.peakDBFS)), ("clipped_samples", e.clippedSamples.map(String.init) ?? "null"),
            ("loudness_lufs", number(e.loudness)), ("true_peak_dbtp", number(e.truePeak)),
            ("gain_db", number(e.gain)), ("normalized_lufs", number(e.normalized)),
            ("truncated", e.truncated ? "true" : "false"), ("gaps_cut", e.gapsCut.map(String.init) ?? "null"),
            ("seconds_cut", number(e.secondsCut)), ("render_seconds", number(e.renderSeconds)),
        ]
        fields += [("carillon_version", string(e.version)), ("soundfont", string(e.soundFont)),
                   ("soundfont_bytes", String(e.soundFontBytes))]
        if let a = e.augment {
            fields.append(("augment", "{\"seed\":\(a.seed),\"transpose\":\(a.transpose),\"tempo\":\(number(a.tempo)),"
                + "\"velocity_scale\":\(number(a.velocityScale)),\"program_map\":\(a.programMap.map(string) ?? "null"),"
                + "\"notes_dropped\":\(a.notesDropped.map(String.init) ?? "null")}"))
        }
        if let s = e.stemsJSON {
            fields.append(("stems_json", string(s)))
            fields.append(("stems", "[" + (e.stems ?? []).map(string).joined(separator: ",") + "]"))
        }
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    static func number(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "null" }
        return "\(value)"
    }

    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

// MARK: The lines

func entries(_ n: Int) -> [Entry] {
    var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> UInt64 { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return seed >> 11 }
    func unit() -> Double { Double(next() % 1_000_000) / 1_000_000 }
    let fonts = ["FluidR3_GM.sf2", "TimGM6mb.sf2", "GeneralUser GS v1.471.sf2"]
    return (0..<n).map { i in
        let dir = ["lakh/0/", "lakh/a/", "maestro/2018/", "café \"live\"/"][i % 4]
        let name = "\(dir)song \(i).mid"
        let failed = i % 97 == 0
        var e = Entry(input: "corpus/" + name, output: "out/" + name.replacingOccurrences(of: ".mid", with: ".wav"),
                      status: failed ? "failed" : "ok", error: failed ? "corpus/\(name): track 2: running status without a status byte" : nil,
                      pieceSeconds: 30 + 300 * unit(), renderedSeconds: 31 + 300 * unit(), peakDBFS: -12 * unit(),
                      clippedSamples: Int(next() % 3), loudness: i % 50 == 0 ? -.infinity : -30 + 15 * unit(),
                      truePeak: nil, gain: nil, normalized: nil, truncated: false, gapsCut: nil, secondsCut: nil,
                      renderSeconds: 2 * unit(), version: "0.9.0", soundFont: fonts[i % 3], soundFontBytes: 148_398_306,
                      augment: nil, stemsJSON: nil, stems: nil)
        if i % 2 == 0 {
            e.augment = .init(seed: 7, transpose: Int(next() % 13) - 6, tempo: 0.9 + Double(next() % 200) / 1000,
                              velocityScale: 0.8 + Double(next() % 400) / 1000, programMap: nil, notesDropped: Int(next() % 3))
        }
        if i % 3 == 0 {
            e.stemsJSON = e.output.replacingOccurrences(of: ".wav", with: ".stems.json")
            e.stems = ["drums", "prog000-acoustic-grand-piano", "prog033-electric-bass-finger"].map { "stems/song \(i)/\($0).wav" }
        }
        return e
    }
}

// MARK: Timing

func cpuSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

func wallSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

/// Best CPU time of `rounds`, with that round's wall time.
func measure(_ rounds: Int, _ body: () throws -> Void) rethrows -> (cpu: Double, wall: Double) {
    var best = (cpu: Double.infinity, wall: 0.0)
    for _ in 0..<rounds {
        let c = cpuSeconds(), w = wallSeconds()
        try body()
        let cpu = cpuSeconds() - c, wall = wallSeconds() - w
        if cpu < best.cpu { best = (cpu, wall) }
    }
    return best
}

/// Writes each line with its own write(2), as the manifest writer appends.
func writeLines(_ path: String, _ lines: (Int) throws -> String, count: Int) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
    guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    for i in 0..<count {
        var line = try lines(i) + "\n"
        line.withUTF8 { b in _ = write(fd, b.baseAddress!, b.count) }
    }
}

func readLines(_ path: String) throws -> [Substring] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    return text.split(separator: "\n")
}

struct Mismatch: Error, CustomStringConvertible { var description: String }

let arguments = CommandLine.arguments.dropFirst()
let count = arguments.first.flatMap { Int($0) } ?? 100_000
let path = arguments.dropFirst().first ?? "bench-out/json-bench.jsonl"
if !path.contains("/") || path.hasPrefix("bench-out/") { try? FileManager.default.createDirectory(atPath: "bench-out", withIntermediateDirectories: true) }
let rounds = arguments.dropFirst(2).first.flatMap { Int($0) } ?? 3
let all = entries(count)
let expected = all.map { [$0.input, $0.output, $0.status] }

let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
let decoder = JSONDecoder()

/// One line to standard output at once, unbuffered: each figure as it comes (a loaded machine takes minutes).
func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }
say("json-bench: \(count) manifest lines, best of \(rounds) rounds (thread CPU s, wall s of that round)")
func report(_ what: String, _ t: (cpu: Double, wall: Double)) {
    let name = what.padding(toLength: 44, withPad: " ", startingAt: 0)
    say(name + String(format: " %7.3f s CPU  %7.3f s wall  %6.2f µs/line", t.cpu, t.wall, t.cpu / Double(count) * 1e6))
}
func size(_ p: String) -> Int { (try? FileManager.default.attributesOfItem(atPath: p)[.size] as? Int) ?? 0 }

// The string writer, read back with JSONSerialization.
let w1 = try measure(rounds) { try writeLines(path, { StringWriter.line(all[$0]) }, count: count) }
report("  write: string writer", w1)
let stringBytes = size(path)
let r1 = try measure(rounds) {
    let fields = try readLines(path).map { line -> [String] in
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
        let strings = object.compactMapValues { $0 as? String }
        return [strings["input"] ?? "", strings["output"] ?? "", strings["status"] ?? ""]
    }
    guard fields == expected else { throw Mismatch(description: "JSONSerialization read back other fields") }
}
report("  read: JSONSerialization (string fields)", r1)

// One JSONEncoder, read back with one JSONDecoder.
let w2 = try measure(rounds) { try writeLines(path, { String(decoding: try encoder.encode(all[$0]), as: UTF8.self) }, count: count) }
report("  write: JSONEncoder", w2)
let encoderBytes = size(path)
let r2 = try measure(rounds) {
    let back = try readLines(path).map { try decoder.decode(Entry.self, from: Data($0.utf8)) }
    guard back.map({ [$0.input, $0.output, $0.status] }) == expected else { throw Mismatch(description: "JSONDecoder read back other fields") }
}
report("  read: JSONDecoder (whole entries)", r2)
let r3 = try measure(rounds) {
    let back = try readLines(path).map { try decoder.decode(Key.self, from: Data($0.utf8)) }
    guard back.map({ [$0.input, $0.output ?? "", $0.status ?? ""] }) == expected else { throw Mismatch(description: "JSONDecoder read back other keys") }
}
report("  read: JSONDecoder (input, output, status)", r3)
say("  file: string writer \(stringBytes) bytes, JSONEncoder \(encoderBytes) bytes")
say(String(format: "  JSONEncoder / string writer: %.2f×; JSONDecoder whole / JSONSerialization: %.2f×; JSONDecoder 3 fields / JSONSerialization: %.2f×",
           w2.cpu / w1.cpu, r2.cpu / r1.cpu, r3.cpu / r1.cpu))
