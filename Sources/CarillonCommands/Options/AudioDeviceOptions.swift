import ArgumentParser
import Hosting
import LiveSession

/// The sound card's flags, shared by `live` and `play`.
struct AudioDeviceOptions: ParsableArguments {
    @Option(name: [.customShort("a"), .customLong("audio-driver")], help: ArgumentHelp(
        "Audio output: alsa (a PCM device: -d, -r, --period, --periods) or jack (a JACK server's ports, at its rate and period; PipeWire's JACK too).",
        valueName: "alsa|jack"))
    var driver = "alsa"

    @Flag(name: [.customShort("j"), .customLong("jack-connect"), .customLong("connect-jack-outputs")],
          help: "With -a jack: connect the outputs to the first two physical playback ports (system:playback_1, _2; a mono device gets both).")
    var jackConnect = false

    @Option(name: .customLong("jack-midi-connect"), help: ArgumentHelp(
        "With -a jack: connect to carillon:midi_in the JACK MIDI source of this full name, or every one whose name contains it, any case (repeatable).",
        valueName: "port"))
    var jackMIDIConnect: [String] = []

    @Option(name: [.customShort("d"), .long], help: ArgumentHelp("ALSA PCM playback device.", valueName: "device"))
    var device = "default"

    @OptionGroup var rate: SampleRateOption

    /// `-r`, or a sound card's usual rate.
    var sampleRate: Int { rate.rate ?? SampleRateOption.deviceDefault }

    @Option(help: ArgumentHelp("Frames per period (the block size).", valueName: "frames"))
    var period = HostOptions.defaultPeriodFrames

    @Option(help: ArgumentHelp("Periods in the device buffer.", valueName: "count"))
    var periods = 2

    @Flag(name: .customLong("no-realtime"), help: "Do not ask for real-time (SCHED_FIFO) scheduling.")
    var noRealtime = false

    @Option(help: ArgumentHelp(
        "How MIDI input is timed: stamped or asap.",
        discussion: "stamped: each event is stamped on arrival and sounds one period later, so its timing is kept to a FluidSynth block (64 frames) at any period size. asap: at the start of the next block, the lowest latency, but the timing jitters by up to a period.",
        valueName: "mode"))
    var timing: EventTiming = .stamped

    @Option(name: .customLong("give-up-after"), help: ArgumentHelp(
        "When the audio device or JACK server is gone: end with a failure after this many seconds without audio.",
        discussion: "Without it the session keeps its controls, zones, MIDI input, OSC and web page alive and reopens the same device or server about once a second until it is back. With it, the command exits non-zero after that long without audio, for a service manager that restarts it (systemd's Restart=on-failure).",
        valueName: "seconds"))
    var giveUpAfter: Double?

    var backend: AudioBackend { AudioBackend(rawValue: driver) ?? .alsa }

    func validate() throws {
        guard AudioBackend(rawValue: driver) != nil else { throw ValidationError("-a/--audio-driver must be alsa or jack, not '\(driver)'") }
        if backend != .jack && (jackConnect || !jackMIDIConnect.isEmpty) {
            throw ValidationError("--jack-connect and --jack-midi-connect need -a jack")
        }
        guard (16...8192).contains(period) else { throw ValidationError("--period must be 16…8192 frames") }
        guard (2...32).contains(periods) else { throw ValidationError("--periods must be 2…32") }
        if let s = giveUpAfter, !(s.isFinite && s > 0) { throw ValidationError("--give-up-after must be a number of seconds above 0, not \(s)") }
    }

    func apply(to options: inout LiveHost.Options) {
        options.backend = backend
        options.jack.connectOutputs = jackConnect
        options.jack.midiSources = jackMIDIConnect
        options.device = device
        options.sampleRate = sampleRate
        options.periodFrames = period
        options.periods = periods
        options.realtime = !noRealtime
        options.timing = timing
        options.giveUpAfter = giveUpAfter
    }
}

extension EventTiming: ExpressibleByArgument {}

/// The MIDI input's flags (keyboards, controllers, the mapping), shared by `live` and `play`.
struct MIDIInputOptions: ParsableArguments {
    @Option(name: .customLong("connect"), help: ArgumentHelp(
        "A source to connect: client:port or part of its name, any case (repeatable).", valueName: "source"))
    var connect: [String] = []

    @Flag(help: "Connect every MIDI source now and each one that appears later.")
    var autoconnect = false

    @Option(help: MIDIInputOptions.mappingHelp)
    var mapping: String?

    /// `--mapping` reads the same in live, play and render (one declaration's words).
    static let mappingHelp = ArgumentHelp(
        "A mapping file: the rig (channels' presets, LV2 instruments, inserts, zones, scenes; it starts in its first scene) and the controls that drive it (its port: pattern connects the controller).",
        valueName: "file")

    @Option(help: ArgumentHelp(
        "Send the controls' state back to this controller (motorised faders, LEDs): client:port or part of its name (repeatable). Default: the mapping's port: pattern.",
        valueName: "destination"))
    var feedback: [String] = []

    @Flag(name: .customLong("no-watch"), help: "Do not reload the mapping file when it changes.")
    var noWatch = false

    @Option(name: .customLong("client-name"), help: ArgumentHelp("The sequencer client's name.", valueName: "name"))
    var clientName = "carillon"

    func validate() throws {
        if !feedback.isEmpty && mapping == nil {
            throw ValidationError("--feedback needs --mapping: the controls whose state it sends")
        }
    }

    func apply(to options: inout LiveHost.Options) {
        options.clientName = clientName
        options.connect = connect
        options.autoconnect = autoconnect
        options.feedback = feedback
        options.watchMapping = noWatch ? nil : mapping
    }
}
