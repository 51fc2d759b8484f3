import ArgumentParser
import Engine
import OfflineRender

/// `--tail`, one declaration for `play` and `render`: how long the sound may
/// die away after the piece. Played, the wait is heard, so it is shorter.
struct TailOption: ParsableArguments {
    static let playDefault = 3.0
    static let renderDefault = TailPolicy.default.maxTail

    @Option(help: ArgumentHelp(
        "Longest tail after the piece's end while the sound dies away, in seconds. "
            + "Default: 3 for play, 10 for render.",
        valueName: "seconds"))
    var tail: Double?

    func validate() throws {
        if let tail { try checked { () throws(RenderOptionError) in try RenderOptionChecks.tail(tail) } }
    }
}
