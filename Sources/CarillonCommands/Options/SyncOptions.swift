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

/// `live --transport-master`, `play --transport-master` (with `-a jack`): lead the JACK transport.
struct TransportMasterOption: ParsableArguments {
    @Flag(name: .customLong("transport-master"), help: ArgumentHelp(
        "Lead the JACK transport (with -a jack), so loopers and DAWs following it follow Carillon: bar, beat, tick and tempo from the file's tempo map and time signatures (play), or in 4/4 at transport.tempo, the beats --clock-out sends (live); it starts, stops and moves with the session, and the session with another client's start, stop and locate."))
    var transportMaster = false

    func apply(to options: inout LiveHost.Options) { options.transportMaster = transportMaster }
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
