import ArgumentParser
import LiveSession

/// In time with other gear (`live`, `play`): MIDI clock out.
struct ClockOutOptions: ParsableArguments {
    @Option(name: .customLong("clock-out"), help: ArgumentHelp(
        "Send MIDI clock, Start, Stop, Continue and Song Position to this destination: client:port or part of its name (repeatable).",
        valueName: "port"))
    var clockOut: [String] = []

    func apply(to options: inout LiveHost.Options) { options.clockOut = clockOut }
}

/// `live --link`, `play --link`: a peer in an Ableton Link session.
struct LinkOption: ParsableArguments {
    @Flag(help: ArgumentHelp(
        "Join the Ableton Link session on the local network: its tempo is transport.tempo (a change here or there is shared), the piece starts on its next bar (quantum 4) and keeps its beat phase."))
    var link = false

    func apply(to options: inout LiveHost.Options) { options.link = link }
}

/// `play --sync`: what the player follows.
enum SyncSource: Equatable {
    /// MIDI clock from a source (nil: any source connected).
    case clock(port: String?)
    /// The JACK transport (`-a jack`).
    case jack

    /// `clock`, `clock=PORT` or `jack`.
    init?(argument: String) {
        if argument == "jack" { self = .jack; return }
        if argument == "clock" { self = .clock(port: nil); return }
        if argument.hasPrefix("clock="), argument.count > 6 { self = .clock(port: String(argument.dropFirst(6))); return }
        return nil
    }
}

extension SyncSource: ExpressibleByArgument {
    static var allValueStrings: [String] { ["clock", "clock=PORT", "jack"] }
}
