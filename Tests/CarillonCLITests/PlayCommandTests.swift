import Testing
import Foundation

/// Whole `carillon play` and `carillon live` command lines that run without
/// a sound card (the ALSA integration tests play for real in the VM).
@Suite(.serialized) struct PlayCommandTests {
    typealias R = RenderCommandTests
    static let hasSoundCard = FileManager.default.fileExists(atPath: "/dev/snd")

    @Test(.enabled(if: !hasSoundCard, "needs a machine without ALSA devices"))
    func withoutSoundCard_saysSoAndFails() throws {
        let r = try R.carillon(["play", "\(R.openmsx)/coconut_run2.mid", "--soundfont", R.timGM])
        #expect(r.status != 0)
        #expect(r.stderr.contains("cannot play"))
        #expect(r.stderr.contains("not available"))
        #expect(!r.stderr.contains("Fatal error"))
    }

    @Test func startPastTheEnd_isAnError() throws {
        let r = try R.carillon(["play", "\(R.openmsx)/coconut_run2.mid", "--start", "600", "--soundfont", R.timGM])
        #expect(r.status != 0)
        #expect(r.stderr.contains("past the end"))
    }

    /// `play --labels` labels a recording of the whole piece (scripts/test-jack plays one for real).
    @Test(arguments: [
        (["--labels"], "--labels labels a recording: give --record FILE"),
        (["--labels", "--record", "r.wav", "--loop"], "not with --loop or --start"),
        (["--labels-format", "jsonl", "--record", "r.wav", "--start", "3"], "not with --loop or --start"),
    ])
    func labels_withoutARecordingOfTheWholePiece_isAUsageError(_ flags: [String], _ message: String) throws {
        let r = try R.carillon(["play", "\(R.openmsx)/coconut_run2.mid"] + flags)
        #expect(r.status == 64 && r.stderr.contains(message), "\(r.status) \(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "r.wav"))
    }

    /// `live --transport-master` leads JACK's transport: without `-a jack` (or with `--no-audio`) a usage error; `--help` says it.
    @Test(arguments: [["live", "--transport-master"], ["live", "--transport-master", "-a", "jack", "--no-audio"]])
    func liveTransportMaster_withoutJACK_isAUsageError(_ args: [String]) throws {
        let r = try R.carillon(args)
        #expect(r.status == 64 && r.stderr.contains("--transport-master leads the JACK transport: give -a jack"), "\(r.status) \(r.stderr)")
        let help = try R.carillon(["live", "--help"])
        #expect(help.stdout.contains("--transport-master"))
        #expect(help.stdout.contains("transport.tempo"))
    }

    @Test func tempoOutOfRange_isAUsageError() throws {
        let r = try R.carillon(["play", "\(R.openmsx)/coconut_run2.mid", "--tempo", "0"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("--tempo"))
    }

    @Test func timingMode_unknown_isAUsageError_andHelpNamesBoth() throws {
        for command in ["live", "play"] {
            let args = command == "play" ? ["play", "\(R.openmsx)/coconut_run2.mid"] : ["live"]
            let r = try R.carillon(args + ["--timing", "late"])
            #expect(r.status != 0)
            #expect(r.stderr.contains("--timing"))
            #expect(r.stderr.contains("late"))
            let help = try R.carillon([command, "--help"])
            #expect(help.stdout.contains("--timing <mode>"))
            #expect(help.stdout.contains("stamped"))
            #expect(help.stdout.contains("asap"))
        }
    }

    @Test func unreadableFile_saysWhich() throws {
        let r = try R.carillon(["play", "/nonexistent/x.mid"])
        #expect(r.status != 0)
        #expect(r.stderr.contains("/nonexistent/x.mid"))
    }

    /// `live --no-audio` runs anywhere: on a pseudo-terminal the view draws the
    /// mapping's controls as bars, and says when there is no MIDI input.
    @Test func liveNoAudio_onATerminal_showsTheControls() throws {
        let command = "\(R.carillon) live --no-audio --mapping mappings/general-midi.yaml --duration 0.5"
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let (text, status) = try runOnPseudoTerminal(command, in: repository)
        #expect(status == 0)
        #expect(text.contains("audio: none (--no-audio)"))
        #expect(text.contains("Modulation"))
        #expect(text.contains("[·"))  // a control drawn as a bar
        #expect(text.contains("\u{1B}[K"))  // redrawn in place
        if !Self.hasSoundCard { #expect(text.contains("no MIDI input")) }
        #expect(text.contains("carillon live: ended."))
    }

    @Test func liveNoAudio_notATerminal_plainLines() throws {
        let r = try R.carillon(["live", "--no-audio", "--duration", "0.3"])
        #expect(r.status == 0)
        #expect(!r.stdout.contains("\u{1B}["))
        #expect(r.stdout.contains("carillon live: ended."))
    }

    /// `--reverb-level` and `--chorus-level` were validated by live and play and
    /// never applied: now they are the start values of `synth.reverb.level` and
    /// `synth.chorus.level`, which a mapping's readouts show (and the engine holds).
    @Test func liveNoAudio_effectLevelFlags_reachTheParameters() throws {
        let dir = NSTemporaryDirectory() + "carillon-levels-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let mapping = "\(dir)/levels.yaml"
        try """
            name: Levels
            controls:
              - name: Reverb shown
                kind: readout
                shows: synth.reverb.level
              - name: Chorus knob
                kind: knob
                source: { cc: 93 }
                targets: [synth.chorus.level]
            """.write(toFile: mapping, atomically: true, encoding: .utf8)
        let command = "\(R.carillon) live --no-audio --mapping \(mapping) --reverb-level 0.3 --chorus-level 4.5 --duration 0.4"
        let (text, status) = try runOnPseudoTerminal(command)
        #expect(status == 0)
        #expect(text.contains("0.30"), "\(text)")
        #expect(text.contains("4.50"), "\(text)")
    }
}

/// `--sync` and `--clock-out` mistakes are usage errors (the VM's scenarios.d/sync.sh runs them for real).
@Suite struct PlaySyncOptionTests {
    typealias R = RenderCommandTests

    @Test(arguments: [
        (["--sync", "midi"], "--sync"),
        (["--sync", "clock="], "--sync"),
        (["--sync", "clock", "--tempo", "2"], "--sync follows the master's tempo: not with --tempo"),
        (["--sync", "clock", "--link"], "--link and --sync each set the tempo and start: give one"),
    ])
    func badSync_isAUsageError(_ flags: [String], _ message: String) throws {
        let r = try R.carillon(["play", "\(R.openmsx)/coconut_run2.mid"] + flags)
        #expect(r.status == 64 && r.stderr.contains(message), "\(r.status) \(r.stderr)")
    }

    @Test func clockOutWithoutAudio_isAUsageError() throws {
        let r = try R.carillon(["live", "--no-audio", "--clock-out", "24:0"])
        #expect(r.status == 64 && r.stderr.contains("--clock-out follows the audio clock"), "\(r.status) \(r.stderr)")
    }

    @Test func linkWithoutAudio_isAUsageError() throws {
        let r = try R.carillon(["live", "--no-audio", "--link"])
        #expect(r.status == 64 && r.stderr.contains("--link plays on the session's beats by the audio clock"), "\(r.status) \(r.stderr)")
    }
}
