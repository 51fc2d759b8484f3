import ArgumentParser
import MappingFiles
import OfflineRender
import Controls

/// `render`'s augmentation: each piece changed before it renders, by fixed
/// values or by values drawn per file from `--seed` and the file's key.
struct AugmentOptions: ParsableArguments {
    // Unconditional: the values may be negative (`--transpose -2..2`).
    @Option(parsing: .unconditional, help: ArgumentHelp(
        "Move the notes of every channel but drums by this many semitones, or by a whole number drawn per file from A..B (-48...48); notes pushed outside 0...127 are dropped.",
        valueName: "semitones|A..B"))
    var transpose: String?

    @Option(help: ArgumentHelp(
        "Play each file this many times as fast (every tempo multiplied: 2 halves the duration), or by a factor drawn per file from A..B (0.25...4).",
        valueName: "factor|A..B"))
    var tempo: String?

    @Option(name: .customLong("velocity-scale"), help: ArgumentHelp(
        "Multiply every note-on's velocity (rounded, kept within 1...127), by X or by a factor drawn per file from A..B (above 0, at most 4).",
        valueName: "x|A..B"))
    var velocityScale: String?

    @Option(name: .customLong("program-map"), help: ArgumentHelp(
        "A YAML file mapping programs to programs, 0-based as in MIDI data (0 is Acoustic Grand Piano), e.g. '0..7: 5'; applied on every channel but drums.",
        valueName: "file.yaml"))
    var programMap: String?

    @Option(help: ArgumentHelp(
        "Draw each track's instrument, from --seed, the file's key and the track: 'per-track' among the font's presets of the track's General MIDI class (drum kits for drums), or a pool file (YAML or JSON) listing presets per class or program, e.g. 'piano: [0, 1, 8:4]'. Tracks sharing a channel are moved apart as --stems-by track does.",
        valueName: "per-track|file.yaml"))
    var timbres: String?

    @Option(help: ArgumentHelp(
        "The seed the ranges (A..B) and --timbres are drawn from, with each file's key: the same seed gives a file the same draw in any order, shard or --jobs (default: 0).",
        valueName: "n"))
    var seed: UInt64?

    /// The seed ranges are drawn from.
    var seedValue: UInt64 { seed ?? 0 }

    var asked: Bool { transpose != nil || tempo != nil || velocityScale != nil || programMap != nil || timbres != nil }

    func validate() throws {
        _ = try values()
        if seed != nil && !((try? values())?.hasRange ?? false) && timbres == nil {
            throw ValidationError(Augmentation.seedWithoutDraw)
        }
        if let programMap, programMap.isEmpty { throw ValidationError("--program-map needs a file name") }
        if let timbres, timbres.isEmpty { throw ValidationError(Augmentation.timbresEmpty) }
    }

    /// The values asked for (the program map not read yet).
    func values() throws -> Augmentation {
        var a = Augmentation()
        a.seed = seedValue
        if let transpose {
            a.transpose = try Self.value(transpose, "--transpose", Augmentation.integers,
                                         wanted: "a whole number of semitones or a range A..B (e.g. -2..2)",
                                         fits: { Augmentation.transposeLimits.contains($0) },
                                         limits: "within -48...48 semitones (four octaves)")
        }
        if let tempo {
            a.tempo = try Self.value(tempo, "--tempo", Augmentation.reals,
                                     wanted: "a factor (2 plays twice as fast) or a range A..B (e.g. 0.9..1.1)",
                                     fits: { Augmentation.tempoLimits.contains($0) },
                                     limits: "within 0.25...4 (a factor: 2 plays twice as fast)")
        }
        if let velocityScale {
            a.velocityScale = try Self.value(velocityScale, "--velocity-scale", Augmentation.reals,
                                             wanted: "a factor (0.5 halves the velocities) or a range A..B (e.g. 0.8..1.2)",
                                             fits: { $0 > 0 && $0 <= Augmentation.velocityScaleLimit },
                                             limits: "above 0 and at most 4")
        }
        return a
    }

    /// `text` read by `read` as a value or a range whose ends both `fit`; else the flag's one-line error.
    private static func value<N>(_ text: String, _ flag: String, _ read: (String) -> Augmentation.Value<N>?, wanted: String,
                                 fits: (N) -> Bool, limits: String) throws -> Augmentation.Value<N> {
        guard let value = read(text) else { throw ValidationError(unreadable(flag, text, wanted)) }
        guard fits(value.bounds.lowerBound), fits(value.bounds.upperBound) else {
            throw ValidationError("\(flag) must be \(limits), found \(text)")
        }
        return value
    }

    static func unreadable(_ flag: String, _ text: String, _ wanted: String) -> String {
        Augmentation.isBackwards(text)
            ? "\(flag) range \(text) runs backwards; write the lower end first"
            : "\(flag) takes \(wanted), found '\(text)'"
    }

    /// What each file's piece is changed by, the program map read; nil when
    /// nothing is asked for. A program map with a mistake ends the command
    /// here, each mistake as `file:line:column: error: …`.
    func augmentation() -> Augmentation? {
        guard asked else { return nil }
        guard var a = try? values() else { return nil }   // checked by validate()
        if let programMap {
            do throws(MappingError) { a.programMap = try ProgramMapFile.load(path: programMap) } catch {
                Diagnostics.fail("\(error)")
            }
            a.programMapName = programMap
        }
        if let timbres {
            do throws(MappingError) { a.timbres = try Augmentation.timbreSource(timbres) } catch { Diagnostics.fail("\(error)") }
        }
        return a
    }
}
