import ArgumentParser
import OfflineRender

/// `-r/--rate`, one declaration for `live`, `play` and `render`. Its default
/// differs by what is written: the rate sound cards run at natively (48 kHz)
/// for a device, the CD rate for files.
struct SampleRateOption: ParsableArguments {
    static let deviceDefault = 48_000
    static let fileDefault = 44_100

    @Option(name: [.customShort("r"), .long], help: ArgumentHelp(
        "Sample rate in Hz, 8000...96000 (FluidSynth's range). Default: 48000 for live and play, "
            + "44100 for render (or the format's own where it takes only some, as Opus: 48000). "
            + "With -a jack the server's rate is used.",
        valueName: "hz"))
    var rate: Int?

    func validate() throws {
        if let rate { try checked { () throws(RenderOptionError) in try RenderOptionChecks.sampleRate(rate) } }
    }
}
