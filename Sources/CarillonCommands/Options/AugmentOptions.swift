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

    /// The seed the draws come from (its help's default).
    var seedValue: UInt64 { seed ?? 0 }

    func validate() throws {
        _ = try values()
    }

    /// The values asked for, checked (the program map and the timbre pool not read yet).
    func values() throws -> Augmentation {
        try checked { () throws(RenderOptionError) in
            try RenderOptionChecks.augmentationValues(transpose: transpose, tempo: tempo, velocityScale: velocityScale,
                                                      programMap: programMap, timbres: timbres, seed: seed)
        }
    }

    /// What each file's piece is changed by, the program map read; nil when
    /// nothing is asked for. A program map with a mistake ends the command
    /// here, each mistake as `file:line:column: error: …`.
    func augmentation() -> Augmentation? {
        do throws(RenderOptionError) {
            return try RenderOptionChecks.augmentation(transpose: transpose, tempo: tempo, velocityScale: velocityScale,
                                                       programMap: programMap, timbres: timbres, seed: seed)
        } catch { Diagnostics.fail("\(error)") }
    }
}
