import Foundation
import Testing

/// `carillon render` into every format, and raw PCM on standard output, read
/// back by FFmpeg (an independent decoder); `live --record-midi` without audio.
@Suite(.serialized) struct RenderFormatTests {
    static let piece = "\(RenderCommandTests.openmsx)/train_filled_with_cash.mid"   // 69.9 s
    static let font = RenderCommandTests.timGM

    /// Runs `command` through /bin/sh; returns stdout's bytes, stderr and the status.
    static func shell(_ command: String) throws -> (stdout: Data, stderr: String, status: Int32) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out; process.standardError = err
        try process.run()
        // Read both while it runs: a full pipe would stall it.
        nonisolated(unsafe) var errData = Data()
        let reader = Thread { errData = err.fileHandleForReading.readDataToEndOfFile() }
        reader.start()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !reader.isFinished { usleep(1_000) }
        return (data, String(decoding: errData, as: UTF8.self), process.terminationStatus)
    }

    /// ffprobe's `key=value` lines for the first audio stream and the container.
    static func probe(_ path: String) throws -> [String: String] {
        let r = try shell("ffprobe -v error -select_streams a:0 -show_entries stream=codec_name,sample_rate,channels:format=format_name,duration -of default=nw=1 '\(path)'")
        var fields: [String: String] = [:]
        for line in String(decoding: r.stdout, as: UTF8.self).split(separator: "\n") {
            let kv = line.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { fields[String(kv[0])] = String(kv[1]) }
        }
        return fields
    }

    @Test(arguments: [
        ("mp3", [String](), "mp3", "mp3"),
        ("opus", [], "opus", "ogg"),   // 48 kHz without -r
        ("aiff", [], "pcm_s16be", "aiff"),
        ("caf", ["--bits", "24"], "pcm_s24", "caf"),
        ("w64", ["--bits", "32"], "pcm_f32le", "w64"),
        ("rf64", [], "pcm_s16le", "wav"),   // FFmpeg's wav demuxer reads RF64
    ])
    func render_byExtension_readsBackWithFFmpeg(ext: String, flags: [String], codec: String, container: String) throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let out = "\(dir)/out.\(ext)"
        let r = try RenderCommandTests.carillon(["render", Self.piece, "-o", out, "--soundfont", Self.font, "--tail", "0", "-q"] + flags)
        #expect(r.status == 0, "\(r.stderr)")
        let p = try Self.probe(out)
        #expect(p["codec_name"]?.hasPrefix(codec) == true, "\(p)")
        #expect(p["format_name"]?.split(separator: ",").contains(Substring(container)) == true, "\(p)")
        #expect(p["channels"] == "2" && p["sample_rate"] == (ext == "opus" ? "48000" : "44100"), "\(p)")
        let seconds = try #require(p["duration"].flatMap(Double.init))
        #expect(abs(seconds - 69.9) < 0.15, "\(seconds) s")
    }

    /// Without -r, Opus is written at its own 48 kHz and the summary says so; a
    /// format that takes any rate stays at 44.1 kHz, with nothing said.
    @Test func opusWithoutRate_isWrittenAt48kHz_andTheSummarySaysSo() throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let opus = try RenderCommandTests.carillon(["render", Self.piece, "-o", "\(dir)/out.opus", "--soundfont", Self.font,
                                                    "--max-duration", "2"])
        #expect(opus.status == 0, "\(opus.stderr)")
        #expect(opus.stdout.contains("out.opus: ") && opus.stdout.contains(", at 48000 Hz (opus's rate; no -r given)"), "\(opus.stdout)")
        #expect(try Self.probe("\(dir)/out.opus")["sample_rate"] == "48000")

        let batch = try RenderCommandTests.carillon(["render", Self.piece, "\(RenderCommandTests.openmsx)/coconut_run2.mid",
                                                     "--output-dir", dir, "--format", "opus", "--soundfont", Self.font,
                                                     "--max-duration", "1", "--jobs", "2", "-q"])
        #expect(batch.status == 0, "\(batch.stderr)")
        #expect(try Self.probe("\(dir)/coconut_run2.opus")["sample_rate"] == "48000")

        let wav = try RenderCommandTests.carillon(["render", Self.piece, "-o", "\(dir)/out.wav", "--soundfont", Self.font,
                                                   "--max-duration", "1"])
        #expect(wav.status == 0, "\(wav.stderr)")
        #expect(!wav.stdout.contains(" Hz ("), "\(wav.stdout)")
        #expect(try Self.probe("\(dir)/out.wav")["sample_rate"] == "44100")
    }

    @Test func formatFlag_overridesTheExtension() throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try RenderCommandTests.carillon(["render", Self.piece, "-o", "\(dir)/out.bin", "--format", "caf",
                                                  "--soundfont", Self.font, "--tail", "0", "-q"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.probe("\(dir)/out.bin")["format_name"] == "caf")
    }

    /// `-o -`: raw little-endian samples on stdout, the very samples the WAV
    /// render holds (decoded by FFmpeg), the summary on stderr, no file left.
    @Test(arguments: [("16", "s16le", 4), ("32", "f32le", 8)])
    func standardOutput_isRawPCM_sameAsTheFile(bits: String, ffmpegFormat: String, bytesPerFrame: Int) throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let carillon = RenderCommandTests.carillon
        let common = "'\(Self.piece)' --soundfont '\(Self.font)' --tail 1 --bits \(bits)"
        let piped = try Self.shell("cd '\(dir)' && '\(carillon)' render \(common) -o -")
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stderr.contains("1:1") && piped.stderr.contains("real time"))   // the summary, not in the audio
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
        #expect(piped.stdout.count % bytesPerFrame == 0 && piped.stdout.count / bytesPerFrame > 44_100 * 69)

        let wav = "\(dir)/ref.wav"
        #expect(try RenderCommandTests.carillon(["render", Self.piece, "--soundfont", Self.font, "--tail", "1", "--bits", bits, "-o", wav, "-q"]).status == 0)
        let decoded = try Self.shell("ffmpeg -v error -i '\(wav)' -f \(ffmpegFormat) -")
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(decoded.stdout.count == piped.stdout.count)
        #expect(decoded.stdout == piped.stdout)
    }

    /// mda Piano prints a debug line to standard output for some samples it
    /// plays ("what is this shit?"): with -o - that must not land in the audio.
    @Test func standardOutput_staysTheAudios_whenAPluginPrints() throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let carillon = RenderCommandTests.carillon
        let flags = "--soundfont '\(Self.font)' --max-duration 4 --instrument 2=http://drobilla.net/plugins/mda/Piano"
        let song = "\(RenderCommandTests.openmsx)/flying_scotsman.mid"
        let piped = try Self.shell("cd '\(dir)' && '\(carillon)' render '\(song)' \(flags) -o -")
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stderr.contains("what is this shit?"), "the plugin printed nothing: the test shows nothing")
        let raw = try Self.shell("cd '\(dir)' && '\(carillon)' render '\(song)' \(flags) -q -o ref.raw")
        #expect(raw.status == 0, "\(raw.stderr)")
        #expect(piped.stdout == (try Data(contentsOf: URL(fileURLWithPath: "\(dir)/ref.raw"))))
    }

    @Test func standardOutput_pipesIntoFFmpeg_asTheHelpSays() throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try Self.shell("'\(RenderCommandTests.carillon)' render '\(Self.piece)' --soundfont '\(Self.font)' --tail 0 -q -o - "
            + "| ffmpeg -v error -f s16le -ar 44100 -ac 2 -i - '\(dir)/out.flac'")
        #expect(r.status == 0, "\(r.stderr)")
        let seconds = try #require(try Self.probe("\(dir)/out.flac")["duration"].flatMap(Double.init))
        #expect(abs(seconds - 69.9) < 0.15)
    }

    @Test(arguments: [
        (["-o", "x.opus", "-r", "44100"], "opus cannot be written at -r 44100: it takes 8000, 12000, 16000, 24000, 48000 Hz (leave -r out for 48000)"),
        (["--output-dir", "d", "--format", "opus", "-r", "96000"], "opus cannot be written at -r 96000"),
        (["-o", "x.mp3", "-r", "96000"], "mp3 cannot be written at -r 96000: it takes 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000 Hz (leave -r out for 44100)"),
        (["-o", "-", "--format", "wav"], "-o - writes raw PCM only"),
        (["-o", "x.xyz"], "use --format wav|flac|ogg|opus|mp3|aiff|caf|w64|rf64|raw"),
        (["-o", "x.mp3", "--bits", "16"], "MP3 has no bit depth"),
        (["-o", "x.aiff", "--format", "vorbis"], "unknown --format 'vorbis' (use wav, flac, ogg, opus, mp3, aiff, caf, w64, rf64, raw)"),
        (["--block", "8"], "--block must be 16...8192 frames"),
        (["--block", "16384"], "--block must be 16...8192 frames"),
    ])
    func usageMistakes_areOneClearLine(flags: [String], message: String) throws {
        let r = try RenderCommandTests.carillon(["render", "a.mid"] + flags)
        #expect(r.status != 0)
        #expect(r.stderr.contains(message), "\(r.stderr)")
    }

    @Test func liveWithoutAudio_recordsMIDI_butNotAudio() throws {
        let dir = RenderCommandTests.scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try RenderCommandTests.carillon(["live", "--no-audio", "--record-midi", "\(dir)/in.mid", "--duration", "0.3"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("recorded MIDI \(dir)/in.mid: 0 messages"))
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: "\(dir)/in.mid")))
        #expect(bytes.starts(with: Array("MThd".utf8)) && bytes.count == 14 + 8 + 7 + 4)   // header, track: tempo, end

        let audio = try RenderCommandTests.carillon(["live", "--no-audio", "--record", "\(dir)/x.wav", "--duration", "0.3"])
        #expect(audio.status != 0 && audio.stderr.contains("--record needs audio"))
        let opus = try RenderCommandTests.carillon(["live", "--record", "\(dir)/x.opus", "-r", "44100", "--soundfont", Self.font])
        #expect(opus.status != 0 && opus.stderr.contains("x.opus: opus records at 8000, 12000, 16000, 24000, 48000 Hz, not at -r 44100"),
                "\(opus.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(dir)/x.opus"))
        let unknown = try RenderCommandTests.carillon(["play", "a.mid", "--record", "\(dir)/x.xyz"])
        #expect(unknown.status != 0 && unknown.stderr.contains("cannot tell the format of"))
    }
}
