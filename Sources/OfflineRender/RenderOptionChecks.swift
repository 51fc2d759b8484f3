import Engine
import Foundation
import Hosting
import MappingFiles
import Parameters
import Sampling

/// A mistake in `render`'s options, as one line: the same for the CLI and the C ABI.
public struct RenderOptionError: Error, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ message: String) { description = message }
}

/// The checks of `carillon render`'s options that the CLI (`ValidationError`s in
/// its option groups) and the C ABI (`RenderOptionsJSON`) both make: one place,
/// one message per mistake, whichever door the options came in by.
public enum RenderOptionChecks {
    public static func sampleRate(_ rate: Int) throws(RenderOptionError) {
        guard SamplerOptions.sampleRates.contains(rate) else {
            throw RenderOptionError("--rate must be 8000…96000 Hz (FluidSynth renders at up to 96 kHz)")
        }
    }

    public static func threads(_ threads: Int) throws(RenderOptionError) {
        guard (1...64).contains(threads) else { throw RenderOptionError("--threads must be 1...64") }
    }

    public static func block(_ frames: Int) throws(RenderOptionError) {
        guard (16...8192).contains(frames) else { throw RenderOptionError("--block must be 16...8192 frames") }
    }

    public static func gain(_ gain: Double) throws(RenderOptionError) {
        guard (0...10).contains(gain) else { throw RenderOptionError("--gain must be between 0 and 10") }
    }

    public static func oscillatorChannels(_ channels: [Int]) throws(RenderOptionError) {
        for channel in channels where !(1...16).contains(channel) {
            throw RenderOptionError("--oscillator-channel must be between 1 and 16, found \(channel)")
        }
    }

    /// A value within its parameter's range in the parameter table (`--a4`, `--reverb-level`, `--set NAME`).
    public static func parameter(_ option: String, _ value: Double, _ address: ParameterAddress) throws(RenderOptionError) {
        let spec = address.spec
        guard spec.range.contains(value) else {
            throw RenderOptionError("\(option) must be between \(number(spec.range.lowerBound)) and "
                + "\(number(spec.range.upperBound))\(spec.unit == .none ? "" : " " + spec.unit.rawValue) (\(address))")
        }
    }

    /// `--set NAME=VALUE`'s text well formed (the name is resolved later: plugins add names).
    public static func settingText(_ text: String) throws(RenderOptionError) -> (name: String, value: Double) {
        guard let eq = text.firstIndex(of: "="), eq != text.startIndex, let value = Double(text[text.index(after: eq)...]),
              value.isFinite else {
            throw RenderOptionError("--set takes NAME=VALUE with VALUE a number, e.g. master.gain=-6, found '\(text)'")
        }
        return (String(text[..<eq]), value)
    }

    /// `--set NAME=VALUE`: the name resolved in `registry`, the value in its range.
    public static func setting(_ text: String, registry: ParameterRegistry = .standard) throws(RenderOptionError) -> ParameterChange {
        let (name, value) = try settingText(text)
        switch registry.resolve(name) {
        case .failure(let unknown):
            throw RenderOptionError("--set \(text): no parameter \(name)" + (unknown.suggestion.map { " (did you mean \($0)?)" } ?? "")
                + "; 'carillon parameters' lists them")
        case .success(let address):
            try parameter("--set \(name)", value, address)
            return ParameterChange(address, Float(value))
        }
    }

    public static func tail(_ seconds: Double) throws(RenderOptionError) {
        guard seconds >= 0 else { throw RenderOptionError("--tail must not be negative") }
    }

    public static func silence(_ dBFS: Double) throws(RenderOptionError) {
        guard dBFS < 0 else { throw RenderOptionError("--silence must be below 0 dBFS") }
    }

    public static func maxDuration(_ seconds: Double) throws(RenderOptionError) {
        guard seconds > 0 else { throw RenderOptionError("--max-duration must be above 0 seconds") }
    }

    public static func maxGap(_ seconds: Double) throws(RenderOptionError) {
        guard seconds >= 0 else { throw RenderOptionError("--max-gap must not be negative (0 turns it off)") }
    }

    public static func take(_ take: Bool, withMapping: Bool) throws(RenderOptionError) {
        if take && !withMapping { throw RenderOptionError("--take plays a performance through a rig: give the rig with --mapping FILE") }
    }

    /// A mapping a render plays: one SoundFont for every channel.
    public static func mappingForRender(_ mapping: ControlMapping, path: String) throws(RenderOptionError) {
        if let own = mapping.channels.first(where: { $0.soundFont != nil }) {
            throw RenderOptionError("\(path): channel \(own.channel.intValue + 1)'s soundfont: is for live and play; a render plays one "
                + "SoundFont for every channel (--soundfont): take the line out or render without --mapping")
        }
    }

    // MARK: Augmentation

    /// `--transpose`, `--tempo`, `--velocity-scale`, `--program-map`, `--timbres` and
    /// `--seed` as given, checked, the files read; nil when nothing is asked for.
    /// `inlinePool`: `timbres` beginning with `{` is the pool itself (the C ABI's dict), not a file.
    public static func augmentation(transpose: String?, tempo: String?, velocityScale: String?, programMap: String?,
                                    timbres: String?, seed: UInt64?, inlinePool: Bool = false) throws(RenderOptionError) -> Augmentation? {
        var a = try augmentationValues(transpose: transpose, tempo: tempo, velocityScale: velocityScale, programMap: programMap,
                                       timbres: timbres, seed: seed)
        guard transpose != nil || tempo != nil || velocityScale != nil || programMap != nil || timbres != nil else { return nil }
        if let programMap {
            do throws(MappingError) { a.programMap = try ProgramMapFile.load(path: programMap) } catch { throw RenderOptionError("\(error)") }
            a.programMapName = programMap
        }
        if let timbres {
            do throws(MappingError) {
                a.timbres = inlinePool && timbres.hasPrefix("{") ? .pool(try TimbrePoolFile.parse(yaml: timbres, file: "timbres"), name: "timbres")
                    : try Augmentation.timbreSource(timbres)
            } catch { throw RenderOptionError("\(error)") }
        }
        return a
    }

    /// A `--timbres` pool's presets checked against the fonts, once they are
    /// read and before anything renders: a preset in none of them is a
    /// mistake at its place in the file (`file:line:column: error: …`, with
    /// the closest preset they have). `fonts`: each font's job, by the font's file name.
    public static func timbrePool(_ augmentation: Augmentation?, fonts: [(name: String, job: RenderJob)]) throws(RenderOptionError) {
        guard case .pool(let pool, _)? = augmentation?.timbres,
              let missing = pool.missing(from: fonts.map { TimbrePool.Font(name: $0.name, presets: $0.job.fontPresets) }) else { return }
        throw RenderOptionError("\(missing)")
    }

    /// The values of `augmentation` checked, no file read (the CLI's `validate()`).
    public static func augmentationValues(transpose: String?, tempo: String?, velocityScale: String?, programMap: String?,
                                          timbres: String?, seed: UInt64?) throws(RenderOptionError) -> Augmentation {
        var a = Augmentation()
        a.seed = seed ?? 0
        if let transpose {
            a.transpose = try value(transpose, "--transpose", Augmentation.integers,
                                    wanted: "a whole number of semitones or a range A..B (e.g. -2..2)",
                                    fits: { Augmentation.transposeLimits.contains($0) }, limits: "within -48...48 semitones (four octaves)")
        }
        if let tempo {
            a.tempo = try value(tempo, "--tempo", Augmentation.reals,
                                wanted: "a factor (2 plays twice as fast) or a range A..B (e.g. 0.9..1.1)",
                                fits: { Augmentation.tempoLimits.contains($0) }, limits: "within 0.25...4 (a factor: 2 plays twice as fast)")
        }
        if let velocityScale {
            a.velocityScale = try value(velocityScale, "--velocity-scale", Augmentation.reals,
                                        wanted: "a factor (0.5 halves the velocities) or a range A..B (e.g. 0.8..1.2)",
                                        fits: { $0 > 0 && $0 <= Augmentation.velocityScaleLimit }, limits: "above 0 and at most 4")
        }
        if seed != nil && !a.hasRange && timbres == nil { throw RenderOptionError(Augmentation.seedWithoutDraw) }
        if let programMap, programMap.isEmpty { throw RenderOptionError("--program-map needs a file name") }
        if let timbres, timbres.isEmpty { throw RenderOptionError(Augmentation.timbresEmpty) }
        return a
    }

    /// `text` read by `read` as a value or a range whose ends both `fit`; else the flag's one-line error.
    private static func value<N>(_ text: String, _ flag: String, _ read: (String) -> Augmentation.Value<N>?, wanted: String,
                                 fits: (N) -> Bool, limits: String) throws(RenderOptionError) -> Augmentation.Value<N> {
        guard let value = read(text) else {
            throw RenderOptionError(Augmentation.isBackwards(text)
                ? "\(flag) range \(text) runs backwards; write the lower end first" : "\(flag) takes \(wanted), found '\(text)'")
        }
        guard fits(value.bounds.lowerBound), fits(value.bounds.upperBound) else {
            throw RenderOptionError("\(flag) must be \(limits), found \(text)")
        }
        return value
    }

    /// A bound as `carillon parameters` writes it: whole numbers without a
    /// point, others to 3 decimals, trailing zeros trimmed.
    static func number(_ v: Double) -> String {
        guard !(v == v.rounded() && abs(v) < 1e15) else { return String(Int(v)) }
        var text = String(format: "%.3f", v)
        if text.hasPrefix("-") && text.dropFirst().allSatisfy({ $0 == "0" || $0 == "." }) { text.removeFirst() }
        while text.contains("."), text.hasSuffix("0"), !text.hasSuffix(".0") { text.removeLast() }
        return text
    }
}
