import Engine
import Foundation
import Hosting
import MappingFiles
import OfflineRender
import RenderBatch
import Parameters
import Sampling

/// A mistake in the options a caller gave: the CLI's message for the same flag.
struct OptionError: Error, CustomStringConvertible {
    var description: String
    init(_ message: String) { description = message }
}

/// A shared check (`RenderOptionChecks`, the CLI's too), its mistake an `OptionError`.
private func checked<T>(_ check: () throws(RenderOptionError) -> T) throws(OptionError) -> T {
    do { return try check() } catch { throw OptionError(error.description) }
}

/// What a `Renderer` is made with: a JSON object whose keys are `carillon
/// render`'s long option names (`velocity_scale` or `velocity-scale`), its
/// values what the flag takes (a flag: true or false; a repeatable option: a
/// list). Checked by the CLI's own checks (`RenderOptionChecks`); options that
/// name files to write (`-o`, `--output-dir`, `--manifest`, …) do not apply
/// to a render in memory and are refused by name.
struct RenderConfiguration {
    var job = RenderJob.Options()
    var soundFonts: [String] = []
    var augmentation: Augmentation? = nil
    /// `--labels`: each result carries the notes' rows (notes.csv).
    var labels = false
    /// `loudness` (no CLI flag: the CLI measures when it writes a manifest): each
    /// result carries the integrated loudness. Off by default: libebur128 costs
    /// a render about a sixth of its time.
    var measuresLoudness = false

    /// The keys this parser reads, in the CLI's spelling.
    static let known: Set<String> = [
        "soundfont", "rate", "threads", "block", "gain", "reverb", "reverb-level", "chorus", "chorus-level",
        "channel-effects", "oscillator-channel", "a4", "set", "tail", "silence", "max-duration", "no-limit",
        "keep-end-of-track", "max-gap", "transpose", "tempo", "velocity-scale", "program-map", "timbres", "seed", "labels",
        "mapping", "take", "loudness",
    ]
    /// The CLI's options that write files or schedule a batch: not for one render in memory.
    static let notInMemory: [String: String] = [
        "output": "the audio is the result", "output-dir": "the audio is the result", "format": "the result is float samples",
        "bits": "the result is 32-bit float samples", "manifest": "the result carries the manifest's facts",
        "jobs": "render from several threads or processes with one Renderer", "shard": "shard the inputs in Python",
        "from-list": "pass each file to render()", "input-root": "pass key= to render()", "skip-existing": "nothing is written",
        "labels-format": "the labels are an array", "stems": "stems are not available in memory yet",
        "stems-by": "stems are not available in memory yet", "normalize": "normalisation is not available in memory yet",
        "true-peak": "normalisation is not available in memory yet", "soundfont-pick": "one font is picked per input by its key (hash)",
        "track": "audio-file tracks are not available in memory yet", "quiet": "nothing is printed",
    ]

    init(json text: String) throws(OptionError) {
        let object: [String: JSONValue]
        do { object = try JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8)) } catch {
            throw OptionError("the options must be a JSON object of render's long option names")
        }
        var values: [String: JSONValue] = [:]
        for (key, value) in object {
            let name = key.replacingOccurrences(of: "_", with: "-")
            if let why = Self.notInMemory[name] { throw OptionError("--\(name) does not apply to a render in memory: \(why)") }
            guard Self.known.contains(name) else { throw OptionError("unknown option '\(key)' (render's long names: \(Self.known.sorted().joined(separator: ", ")))") }
            if case .null = value { continue }
            values[name] = value
        }
        try self.init(values: Values(values))
    }

    private init(values v: Values) throws(OptionError) {
        soundFonts = try v.strings("soundfont")
        if let rate = try v.int("rate") {
            try checked { () throws(RenderOptionError) in try RenderOptionChecks.sampleRate(rate) }
            job.sampleRate = rate
        }
        job.threads = try v.int("threads") ?? 1
        try checked { () throws(RenderOptionError) in try RenderOptionChecks.threads(job.threads) }
        let take = try v.bool("take") ?? false
        if let block = try v.int("block") {
            try checked { () throws(RenderOptionError) in try RenderOptionChecks.block(block) }
            job.blockFrames = block
        } else if take {
            job.blockFrames = HostOptions.defaultPeriodFrames   // a take: live's period, as the CLI
        }

        // The synth (SynthOptions).
        var host = HostOptions()
        let gain = try v.double("gain") ?? 0.2
        try checked { () throws(RenderOptionError) in try RenderOptionChecks.gain(gain) }
        host.sampler.gain = gain
        host.sampler.reverb = try v.bool("reverb") ?? true
        host.sampler.chorus = try v.bool("chorus") ?? true
        if let level = try v.double("reverb-level") {
            try checked { () throws(RenderOptionError) in try RenderOptionChecks.parameter("--reverb-level", level, .reverb(.level)) }
            host.sampler.reverbLevel = level
        }
        if let level = try v.double("chorus-level") {
            try checked { () throws(RenderOptionError) in try RenderOptionChecks.parameter("--chorus-level", level, .chorus(.level)) }
            host.sampler.chorusLevel = level
        }
        host.sampler.effectsPerChannel = try v.bool("channel-effects") ?? false
        let oscillator = try v.ints("oscillator-channel")
        try checked { () throws(RenderOptionError) in try RenderOptionChecks.oscillatorChannels(oscillator) }
        host.oscillatorChannels = oscillator.map { $0 - 1 }
        let a4 = try v.double("a4") ?? 440
        try checked { () throws(RenderOptionError) in try RenderOptionChecks.parameter("--a4", a4, .tone(.a4)) }
        host.a4 = a4
        let settings = try v.strings("set")
        host.settings = try checked { () throws(RenderOptionError) in try settings.map { t throws(RenderOptionError) in try RenderOptionChecks.setting(t) } }
        job.host = host

        // The render's length and limits (Render).
        let tail = try v.double("tail") ?? TailPolicy.default.maxTail
        let silence = try v.double("silence") ?? TailPolicy.default.silenceThreshold
        let maxDuration = try v.double("max-duration")
        let maxGap = try v.double("max-gap") ?? RenderJob.Options.defaultMaxGap
        try checked { () throws(RenderOptionError) in
            try RenderOptionChecks.tail(tail)
            try RenderOptionChecks.silence(silence)
            if let maxDuration { try RenderOptionChecks.maxDuration(maxDuration) }
            try RenderOptionChecks.maxGap(maxGap)
        }
        job.tail = TailPolicy(silenceThreshold: silence, maxTail: tail)
        let noLimit = try v.bool("no-limit") ?? false
        job.maxDuration = maxDuration ?? (noLimit ? nil : RenderJob.Options.defaultMaxDuration)
        job.limits = noLimit ? nil : .default
        job.keepsEndOfTrack = try v.bool("keep-end-of-track") ?? false
        job.maxGap = maxGap > 0 ? maxGap : nil
        labels = try v.bool("labels") ?? false
        job.labels = labels
        measuresLoudness = try v.bool("loudness") ?? false

        // The rig (`--mapping`, `--take`).
        if let path = try v.string("mapping") {
            let mapping: ControlMapping
            do throws(MappingError) { mapping = try ControlMapping.load(path: path) } catch { throw OptionError("\(error)") }
            try checked { () throws(RenderOptionError) in try RenderOptionChecks.mappingForRender(mapping, path: path) }
            job.mapping = mapping
            job.host.tracks = mapping.tracks
        }
        let withMapping = job.mapping != nil
        try checked { () throws(RenderOptionError) in try RenderOptionChecks.take(take, withMapping: withMapping) }
        job.take = take

        augmentation = try Self.augmentation(v)
    }

    /// `--transpose`, `--tempo`, `--velocity-scale`, `--program-map`, `--timbres`, `--seed`, as the CLI reads
    /// them; `timbres` may be the pool itself, as JSON (Python's dict).
    private static func augmentation(_ v: Values) throws(OptionError) -> Augmentation? {
        let seed = try v.uint64("seed")
        let transpose = try v.text("transpose"), tempo = try v.text("tempo"), velocity = try v.text("velocity-scale")
        let programMap = try v.string("program-map"), timbres = try v.string("timbres")
        return try checked { () throws(RenderOptionError) in
            try RenderOptionChecks.augmentation(transpose: transpose, tempo: tempo, velocityScale: velocity, programMap: programMap,
                                                timbres: timbres, seed: seed, inlinePool: true)
        }
    }
}

/// One JSON value, decoded without Foundation's `Any` (whose numbers and
/// booleans differ by platform).
enum JSONValue: Decodable {
    case bool(Bool), number(Double), string(String), list([JSONValue]), null, object

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let d = try? c.decode(Double.self) { self = .number(d) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let l = try? c.decode([JSONValue].self) { self = .list(l) }
        else { self = .object }
    }

    var text: String {
        switch self {
        case .bool(let b): "\(b)"
        case .number(let d): d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
        case .string(let s): "'\(s)'"
        case .list(let l): "[" + l.map(\.text).joined(separator: ", ") + "]"
        case .null: "null"
        case .object: "an object"
        }
    }
}

/// The JSON object's values by the CLI's names, each read as its flag's type (a
/// wrong type is the flag's error).
private struct Values {
    let values: [String: JSONValue]
    init(_ values: [String: JSONValue]) { self.values = values }

    private func wrong(_ name: String, _ wanted: String) -> OptionError {
        OptionError("--\(name) takes \(wanted), found \(values[name]?.text ?? "nothing")")
    }

    func bool(_ name: String) throws(OptionError) -> Bool? {
        guard let value = values[name] else { return nil }
        guard case .bool(let b) = value else { throw wrong(name, "true or false") }
        return b
    }

    func double(_ name: String) throws(OptionError) -> Double? {
        guard let value = values[name] else { return nil }
        guard case .number(let d) = value, d.isFinite else { throw wrong(name, "a number") }
        return d
    }

    func int(_ name: String) throws(OptionError) -> Int? {
        guard let d = try double(name) else { return nil }
        guard d == d.rounded(), abs(d) < 1e15 else { throw wrong(name, "a whole number") }
        return Int(d)
    }

    func uint64(_ name: String) throws(OptionError) -> UInt64? {
        guard let value = values[name] else { return nil }
        if case .number(let d) = value, let n = UInt64(exactly: d) { return n }
        if case .string(let s) = value, let n = UInt64(s) { return n }
        throw wrong(name, "a whole number ≥ 0")
    }

    func string(_ name: String) throws(OptionError) -> String? {
        guard let value = values[name] else { return nil }
        guard case .string(let s) = value else { throw wrong(name, "a string") }
        return s
    }

    /// A value or a range: a string ("-2..2"), or a number written as the CLI would read it.
    func text(_ name: String) throws(OptionError) -> String? {
        guard let value = values[name] else { return nil }
        switch value {
        case .string(let s): return s
        case .number(let d) where d.isFinite: return d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
        default: throw wrong(name, "a value or a range A..B")
        }
    }

    func strings(_ name: String) throws(OptionError) -> [String] {
        guard let value = values[name] else { return [] }
        switch value {
        case .string(let s): return [s]
        case .list(let items):
            return try items.map { item throws(OptionError) in
                guard case .string(let s) = item else { throw wrong(name, "a string or a list of strings") }
                return s
            }
        default: throw wrong(name, "a string or a list of strings")
        }
    }

    func ints(_ name: String) throws(OptionError) -> [Int] {
        guard let value = values[name] else { return [] }
        let items: [JSONValue] = if case .list(let l) = value { l } else { [value] }
        return try items.map { item throws(OptionError) in
            guard case .number(let d) = item, d == d.rounded(), abs(d) < 1e9 else { throw wrong(name, "a whole number or a list of them") }
            return Int(d)
        }
    }
}
