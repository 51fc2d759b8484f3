import ArgumentParser
import Hosting
import Sampling
import Controls
import Foundation
import MappingFiles

/// `carillon mapping …`: work with controller mapping files (mappings/README.md).
struct Mapping: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check and explain controller mapping files.",
        subcommands: [Check.self]
    )
}

extension Mapping {
    /// `carillon mapping check FILE...`
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Report every mistake in mapping files as file:line:column: error: message.",
            discussion: "Exits with status 1 when any file has a mistake; a file with mistakes is never used. Presets named by name (program: \"Warm Pad\") are looked up in the channel's own soundfont: or else in --soundfont's font."
        )

        @Flag(name: .long, help: "Print a table of each file's controls, sources and targets.")
        var explain = false

        /// The font whose presets a mapping names by name (`program: "Warm Pad"`): the one live would load.
        @Option(name: .long, help: SynthOptions.soundFontHelp)
        var soundfont: String?

        @Argument(help: ArgumentHelp("Mapping files (YAML).", valueName: "mapping-file"))
        var files: [String]

        func validate() throws {
            if files.isEmpty { throw ValidationError("Give at least one mapping file.") }
        }

        func run() throws {
            // A file's lv2: channels, inserts and zones' midi-fx first: their controls (plugin.N.SYMBOL,
            // insert.STRIP.K.SYMBOL, fx.ZONE.K.SYMBOL) are names its targets may use.
            var pluginFailed = false
            PluginHost.checkMIDIEffectsAtLoad()
            PresetCatalog.lookUpMappingPresets(sessionFont: soundfont)
            // Read once per file: each file's zones with midi-fx, as written (before any check).
            let named = files.map { ControlMapping.midiEffects(path: $0) }
            for (file, found) in zip(files, named) {
                let own = ControlMapping.plugins(path: file)
                let effects = MIDIEffectSpec.all(in: found)
                guard !own.instruments.isEmpty || !own.inserts.isEmpty || !effects.isEmpty else { continue }
                do { _ = try PluginHost(instruments: own.instruments, inserts: own.inserts, midiEffects: effects) } catch {
                    FileHandle.standardError.write(Data("\(file): error: \(error)\n".utf8))
                    pluginFailed = true
                }
            }
            let outcome = MappingCheck.run(files: files, explain: explain)
            // A zone's midi-fx that the host cannot run where the zone sends (an external port).
            for (file, found) in zip(files, named) where !found.isEmpty {
                guard let mapping = try? ControlMapping.load(path: file) else { continue }
                do { _ = try MIDIEffectSpec.all(in: mapping) } catch {
                    FileHandle.standardError.write(Data("\(file): error: \(error)\n".utf8))
                    pluginFailed = true
                }
            }
            if !outcome.output.isEmpty { FileHandle.standardOutput.write(Data(outcome.output.utf8)) }
            if !outcome.errors.isEmpty { FileHandle.standardError.write(Data(outcome.errors.utf8)) }
            if outcome.failed || pluginFailed { throw ExitCode(1) }
        }
    }
}
