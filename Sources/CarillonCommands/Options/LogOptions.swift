import ArgumentParser

/// `-v/--verbose`, shared by `live` and `play`: how much goes to a log (a pipe,
/// a service manager's journal) when the output is not a terminal.
struct LogOptions: ParsableArguments {
    /// Off a terminal: a status line every 10 s (360 an hour in a journal); `-v`: every 2 s.
    static let statusInterval = 10.0
    static let verboseStatusInterval = 2.0

    @Flag(name: [.customShort("v"), .long], help: ArgumentHelp(
        "Also log each parameter value as it changes, and the status line every \(Int(Self.verboseStatusInterval)) s.",
        discussion: "Off a terminal (a pipe, a service manager) the log holds the start, connections, reloads, errors, "
            + "xruns and a status line every \(Int(Self.statusInterval)) s, not each value a control or the web page moves."))
    var verbose = false

    /// Seconds between plain status lines (off a terminal).
    var statusInterval: Double { verbose ? Self.verboseStatusInterval : Self.statusInterval }
}
