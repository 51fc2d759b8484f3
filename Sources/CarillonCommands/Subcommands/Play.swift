import ArgumentParser
import Hosting
import OfflineRender
import Controls
import Engine
import WebSurface
#if canImport(Glibc)
import Glibc
#endif

/// `carillon play`: a MIDI file → sampler → sound card, with keyboards and controllers live at the same time.
struct Play: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Play a MIDI file to the sound card, with MIDI keyboards and controllers live at the same time.",
        discussion: """
            Examples:
              carillon play song.mid
              carillon play song.mid --loop --tempo 0.75 --start 42
              carillon play song.mid --autoconnect --mapping mappings/general-midi.yaml -d hw:1 --period 128
              carillon play song.mid -a jack -j

            The file plays on the sample clock of the sound card; a mapping's transport.play, \
            transport.stop, transport.tempo (bpm), transport.position (% of the piece) and \
            transport.loop controls drive it. It ends when the piece (and its tail) ends, \
            unless --loop; Ctrl-C ends at once: all notes off, the device drained.
            """)

    @Argument(help: ArgumentHelp("The Standard MIDI file to play.", valueName: "midi-file"))
    var file: String

    @Flag(help: "Play the piece again and again, until Ctrl-C.")
    var loop = false

    @Option(help: ArgumentHelp("Speed as a factor of the file's tempo (0.1...10; 0.5 is half speed).", valueName: "scale"))
    var tempo = 1.0

    @Option(help: ArgumentHelp("Start this many seconds into the piece.", valueName: "seconds"))
    var start = 0.0

    @OptionGroup var tailOption: TailOption
    var tail: Double { tailOption.tail ?? TailOption.playDefault }

    @OptionGroup var input: MIDIInputOptions
    @OptionGroup var audio: AudioDeviceOptions
    @OptionGroup var synth: SynthOptions
    @OptionGroup var web: WebOptions
    @OptionGroup var osc: OSCOptions
    @OptionGroup var log: LogOptions
    @OptionGroup var recording: RecordOptions

    @OptionGroup var labelOptions: LabelOptions
    @OptionGroup var clockOptions: ClockOutOptions
    @OptionGroup var linkOption: LinkOption

    @Option(help: ArgumentHelp("Follow a master: clock (MIDI clock from any source connected), clock=PORT (client:port or part of its name), or jack (the JACK transport, with -a jack).",
                               valueName: "clock[=PORT]|jack"))
    var sync: SyncSource?

    @OptionGroup var transportMasterOption: TransportMasterOption
    var transportMaster: Bool { transportMasterOption.transportMaster }

    /// `--labels` / `--labels-format`: the recording's labels' format, nil for none.
    var labelFormat: RenderLabels.Format? { labelOptions.format }

    func validate() throws {
        try synth.refuseSeveralSoundFonts("play")
        guard (0.1...10).contains(tempo) else { throw ValidationError("--tempo must be 0.1…10 (a factor of the file's tempo)") }
        guard start >= 0 else { throw ValidationError("--start must not be negative") }
        if labelFormat != nil {
            guard recording.record != nil else { throw ValidationError("--labels labels a recording: give --record FILE") }
            guard !loop && start == 0 else {
                throw ValidationError("--labels labels a recording of the whole piece from its start: not with --loop or --start")
            }
        }
        if sync == .jack && audio.backend != .jack { throw ValidationError("--sync jack follows the JACK transport: give -a jack") }
        if transportMaster && audio.backend != .jack { throw ValidationError("--transport-master leads the JACK transport: give -a jack") }
        if transportMaster && sync != nil { throw ValidationError("--transport-master leads the transport: not with --sync, which follows one") }
        if sync != nil && tempo != 1 { throw ValidationError("--sync follows the master's tempo: not with --tempo") }
        if sync != nil && linkOption.link { throw ValidationError("--link and --sync each set the tempo and start: give one") }
    }

    func run() throws {
        HostSession.catchInterrupts()
        let mapping = HostSession.loadMapping(input.mapping, synth: synth)
        let piece: Piece
        do { piece = try Piece(contentsOf: file) } catch { Diagnostics.fail("\(error)") }
        if start > 0 && start >= piece.duration {
            Diagnostics.fail("--start \(formatted(start, 3, trimmed: true)) s is past the end of \(file) (\(clock(piece.duration)))")
        }
        let fontPath: String
        do { fontPath = try synth.locateSoundFont() } catch { Diagnostics.fail("\(error)") }

        let session = try Session(soundFont: fontPath, mapping: mapping, input: input, audio: audio, synth: synth,
                                  recording: recording, log: log, failurePrefix: "cannot play: ",
                                  adjust: { options in
                                      options.inputOptional = true
                                      clockOptions.apply(to: &options)
                                      linkOption.apply(to: &options)
                                      if case .clock(let port) = sync { options.syncClock = port ?? "" }
                                      options.syncJACK = sync == .jack
                                      transportMasterOption.apply(to: &options)
                                  },
                                  prepare: { host in
                                      host.load(piece.score, tempo: tempo, start: start, loop: loop, pieceTempo: piece.firstTempo)
                                      host.useTempoMap(piece.tempoMap, timeSignatures: piece.timeSignatures)
                                  })
        guard let transport = session.host.transport else { Diagnostics.fail("cannot play: no audio output") }
        let view = session.view
        view.line("carillon play: \(file) (\(clock(piece.duration)), \(formatted(piece.firstTempo, 1)) bpm)"
            + (loop ? " looping" : "") + (tempo != 1 ? " at ×\(formatted(tempo, 3, trimmed: true))" : "")
            + (start > 0 ? " from \(clock(start))" : ""))
        if let device = session.host.status().device { view.line("audio: \(device)") }
        if let line = session.inputLine { view.line(line) }

        let bpm = piece.firstTempo
        session.startWeb(web, transport: {
            TransportSnapshot(position: transport.position, duration: transport.duration,
                              playing: transport.isPlaying && !transport.isFinished, looping: transport.isLooping,
                              bpm: transport.tempoScale * bpm)
        })
        session.startOSC(osc, duration: { transport.duration })
        var quietFor = 0.0, tailFor = 0.0
        let host = session.host
        let ending = session.watch(header: { Self.positionLine(transport) + (host.syncDescription.map { "  " + $0 } ?? "") }) { status, _, step in
            // The end: the piece played out (not looping), then its sound died away.
            guard transport.isFinished && !transport.isLooping else { tailFor = 0; quietFor = 0; return false }
            tailFor += step
            quietFor = status.peak < 0.001 ? quietFor + step : 0
            return quietFor >= 0.25 || tailFor >= tail
        }
        session.end(command: "play", lastLine: "\(ending.rawValue) at " + Self.positionLine(transport))
        if ending == .audioFailed { throw ExitCode.failure }
        if let format = labelFormat, let path = recording.record, let rate = session.host.outputSampleRate {
            writeLabels(beside: path, format: format, soundFont: fontPath, sampleRate: rate,
                        changedTempo: transport.tempoScale != tempo, dropped: session.host.droppedRecordingBlocks)
        }
    }

    /// `--labels`: the piece's notes as the synth applied them, from the
    /// recording's first frame (the piece's start), at `--tempo`. Worked out
    /// as `render --labels` does (the same grid and presets) without rendering.
    private func writeLabels(beside path: String, format: RenderLabels.Format, soundFont: String, sampleRate: Int,
                             changedTempo: Bool, dropped: Int) {
        if changedTempo { Diagnostics.warning("the tempo changed while playing: the labels follow --tempo \(formatted(tempo, 3, trimmed: true))") }
        if dropped > 0 { Diagnostics.warning("the recording dropped \(dropped) blocks: its labels are late from the first") }
        var options = RenderJob.Options()
        options.sampleRate = sampleRate
        options.host = synth.hostOptions
        options.maxGap = nil   // play cuts no gap
        options.limits = nil   // nor damage: it plays the file as it is
        options.labels = true
        do {
            let labels = try RenderJob(soundFont: soundFont, options: options).labels(of: file, tempo: tempo)
            let written = try labels.write(beside: path, format: format)
            print("labels: " + written.joined(separator: ", "))
        } catch {
            Diagnostics.fail("\(path): labels not written: \(error)")
        }
    }

    /// `▶ 1:23.4 / 3:45.0  tempo ×1.0  loop off` (■ when stopped).
    static func positionLine(_ transport: Transport) -> String {
        let state = transport.isFinished ? "end" : (transport.isPlaying ? "▶" : "■")
        let region = transport.loopRegion
        let loop = transport.isLooping
            ? "loop on" + (region.start > 0 || region.end != nil
                ? " \(clock(region.start))–\(clock(region.end ?? transport.duration))" : "") + " (\(transport.loopWraps)×)"
            : "loop off"
        return "\(state) \(clock(transport.position)) / \(clock(transport.duration))  tempo ×\(formatted(transport.tempoScale, 2, trimmed: true))  \(loop)"
    }
}
