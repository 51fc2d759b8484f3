import ArgumentParser

/// `-v/--verbose`, shared by `live` and `play`: how much goes to a log (a pipe,
/// a service manager's journal) when the output is not a terminal.
struct LogOptions: ParsableArguments {
    @Flag(name: [.customShort("v"), .long], help: ArgumentHelp(
        "Also log each parameter value as it changes, and the status line every \(Int(LiveView.verboseStatusInterval)) s.",
        discussion: "Off a terminal (a pipe, a service manager) the log holds the start, connections, reloads, errors, "
            + "xruns and a status line every \(Int(LiveView.statusInterval)) s, not each value a control or the web page moves."))
    var verbose = false

    /// Seconds between plain status lines (off a terminal).
    var statusInterval: Double { verbose ? LiveView.verboseStatusInterval : LiveView.statusInterval }
}
