import ArgumentParser
import Controls
import Foundation

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
            discussion: "Exits with status 1 when any file has a mistake; a file with mistakes is never used."
        )

        @Flag(name: .long, help: "Print a table of each file's controls, sources and targets.")
        var explain = false

        @Argument(help: ArgumentHelp("Mapping files (YAML).", valueName: "mapping-file"))
        var files: [String]

        func validate() throws {
            if files.isEmpty { throw ValidationError("Give at least one mapping file.") }
        }

        func run() throws {
            let outcome = MappingCheck.run(files: files, explain: explain)
            if !outcome.output.isEmpty { FileHandle.standardOutput.write(Data(outcome.output.utf8)) }
            if !outcome.errors.isEmpty { FileHandle.standardError.write(Data(outcome.errors.utf8)) }
            if outcome.failed { throw ExitCode(1) }
        }
    }
}
