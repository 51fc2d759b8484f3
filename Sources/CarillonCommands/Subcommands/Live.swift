import ArgumentParser
import Hosting
import Controls
#if canImport(Glibc)
import Glibc
#endif

/// `carillon live`: keyboards and controllers → sampler → sound card.
struct Live: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play live: MIDI keyboards and controllers (ALSA sequencer) through the SoundFont sampler to a sound card.",
        discussion: """
            Examples:
              carillon live --autoconnect
              carillon live --connect "nanoKONTROL" --connect 24:0 --mapping mappings/korg-nanokontrol2.yaml
              carillon live -d hw:1 --period 64 --periods 2
              carillon live --no-audio --mapping mappings/general-midi.yaml
              carillon live --mapping mappings/korg-nanokontrol2.yaml --web 8080
              carillon live -a jack -j --jack-midi-connect a2j   # JACK (or PipeWire's): playback ports, a MIDI source
              carillon live -a jack --transport-master --mapping rig.yaml   # loopers on JACK follow transport.tempo

            Other programs can also play into Carillon's port (aplaymidi -p carillon:0, aconnect). \
            When a source goes away, the notes it held are released. Ctrl-C ends: all notes off, \
            the device drained, the ports closed. `carillon ports` lists sources and devices.
            """)

    @OptionGroup var input: MIDIInputOptions

    @Flag(name: .customLong("no-audio"), help: "No sound card and no sampler: the controls and the view only.")
    var noAudio = false

    @OptionGroup var audio: AudioDeviceOptions

    @Option(help: ArgumentHelp("Stop after this many seconds (default: until Ctrl-C).", valueName: "seconds"))
    var duration: Double?

    @Flag(name: .customLong("whole-font"),
          help: "Load the whole SoundFont at start. Without it, live loads at start the presets the mapping's channels and scenes name and each other one off the audio thread on its first program change, the channel's next messages waiting a few milliseconds with it (FluidR3 with the stage-piano rig: 175 MiB instead of 292).")
    var wholeFont = false

    @OptionGroup var synth: SynthOptions
    @OptionGroup var recording: RecordOptions

    @OptionGroup var web: WebOptions
    @OptionGroup var osc: OSCOptions
    @OptionGroup var log: LogOptions
    @OptionGroup var clockOptions: ClockOutOptions
    @OptionGroup var linkOption: LinkOption

    @OptionGroup var transportMasterOption: TransportMasterOption

    func validate() throws {
        try synth.refuseSeveralSoundFonts("live")
        if noAudio && !clockOptions.clockOut.isEmpty { throw ValidationError("--clock-out follows the audio clock: leave out --no-audio") }
        if noAudio && linkOption.link { throw ValidationError("--link plays on the session's beats by the audio clock: leave out --no-audio") }
        if transportMasterOption.transportMaster && (noAudio || audio.backend != .jack) {
            throw ValidationError("--transport-master leads the JACK transport: give -a jack (and audio)")
        }
        if let duration, duration <= 0 { throw ValidationError("--duration must be positive") }
        if noAudio && recording.record != nil { throw ValidationError("--record needs audio (leave out --no-audio); --record-midi works without") }
    }

    func run() throws {
        HostSession.catchInterrupts()
        let loaded = HostSession.loadMapping(input.mapping, synth: synth)
        var fontPath: String?
        if !noAudio {
            do { fontPath = try synth.locateSoundFont() } catch { Diagnostics.fail("\(error)") }
        }
        let session = try Session(soundFont: fontPath, mapping: loaded, input: input, audio: audio, synth: synth,
                                  recording: recording, log: log) {
            $0.audio = !noAudio; $0.presetsOnDemand = !wholeFont; clockOptions.apply(to: &$0); linkOption.apply(to: &$0); transportMasterOption.apply(to: &$0)
        }
        let view = session.view
        if let line = session.inputLine { view.line("carillon live: " + line) }
        if let device = session.host.status().device { view.line("audio: \(device)") } else { view.line("audio: none (--no-audio)") }

        session.startWeb(web)
        session.startOSC(osc)
        // MIDI learn, scenes and presets from the keyboard (a terminal only): arrows, l, x, s, c, [ ].
        let learnKeys = LiveKeys(hub: session.host.hub, view: view, fonts: session.channelFont)
        let host = session.host
        let ending = session.watch(header: { host.syncDescription }) { _, seconds, _ in
            learnKeys?.poll()
            return duration.map { seconds >= $0 } ?? false
        }
        learnKeys?.restore()
        session.end(command: "live")
        // After a fault (given up, or ended while the output was gone): non-zero, so systemd's on-failure restarts it.
        if ending == .audioFailed { throw ExitCode.failure }
    }

}
