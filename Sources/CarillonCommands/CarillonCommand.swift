import ArgumentParser

/// `carillon`: its subcommands; `CarillonCLI`'s main.swift runs it.
public struct CarillonCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "carillon",
        abstract: "A MIDI instrument host: SoundFont sampler, controllers as widgets, MIDI file player and renderer.",
        version: "0.1.0",
        subcommands: [
            // Each subcommand lives in Subcommands/<Name>.swift.
            Render.self,
            Inspect.self,
            Plugins.self,
            Presets.self,
            Ports.self,
            Live.self,
            Play.self,
            Mapping.self,
            Parameters.self,
        ]
    )

    /// `ParsableCommand.main`, but an unknown option is reported before a
    /// validation error it caused (`UnknownOptions`).
    public static func main() { UnknownOptions.main(Self.self) }

    public init() {}
}
