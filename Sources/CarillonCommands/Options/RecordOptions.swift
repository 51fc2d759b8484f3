import ArgumentParser
import LiveSession
import SoundFile

/// `--record` and `--record-midi`, shared by `live` and `play`.
struct RecordOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Record what is heard into this audio file, finished on Ctrl-C or at the end "
            + "(format from the extension: \(AudioFileFormat.allCases.filter { $0 != .raw }.map(\.rawValue).joined(separator: ", "))).",
        valueName: "file"))
    var record: String?

    @Option(name: .customLong("record-bits"), help: ArgumentHelp("Bits per sample of --record: 16, 24 or 32 (float); lossy formats have none. Default: 16.", valueName: "bits"))
    var recordBits: Int?

    @Option(name: .customLong("record-midi"), help: ArgumentHelp(
        "Record the MIDI that comes in as a Standard MIDI File, written on Ctrl-C or at the end. With audio and --timing stamped (or JACK MIDI) a tick is a frame of the output, so render --take plays it at the frames it was played at; otherwise its real timing at 120 bpm, 480 ticks per quarter note.",
        valueName: "file"))
    var recordMIDI: String?

    func validate() throws { _ = try target() }

    /// The audio file to record into, nil without `--record`.
    func target() throws -> LiveHost.RecordTarget? {
        guard let record else {
            if recordBits != nil { throw ValidationError("--record-bits needs --record") }
            return nil
        }
        guard record != AudioFileWriter.standardOutput else { throw ValidationError("--record needs a file name (standard output is the view's)") }
        guard let format = AudioFileFormat(pathExtensionOf: record), format != .raw else {
            throw ValidationError("cannot tell the format of '\(record)' from its extension (use .wav, .flac, .ogg, .opus, .mp3, .aiff, .caf, .w64 or .rf64)")
        }
        guard format.isAvailable else { throw ValidationError("this system's libsndfile was built without \(format.rawValue.uppercased()) support") }
        var encoding: SampleEncoding?
        if let recordBits {
            guard let bits = SampleEncoding(bits: recordBits), format.encodings.contains(bits) else {
                throw ValidationError("--record-bits must be 16, 24 or 32 for \(format.rawValue) (and is not used by lossy formats)")
            }
            encoding = bits
        }
        return LiveHost.RecordTarget(path: record, format: format, encoding: encoding)
    }

    /// Adds the recordings to the host's options; `audio`: whether there is an output to record.
    func apply(to options: inout LiveHost.Options) throws {
        options.record = try target()
        if options.record != nil && !options.audio { throw ValidationError("--record needs audio (leave out --no-audio); --record-midi works without") }
        // The recording is at the sound card's rate (JACK's is the server's, known at start).
        if let target = options.record, options.backend == .alsa, let rates = target.format.sampleRates,
           !rates.contains(options.sampleRate) {
            throw ValidationError("--record \(target.path): \(target.format.rawValue) records at "
                + rates.map(String.init).joined(separator: ", ") + " Hz, not at -r \(options.sampleRate)")
        }
        options.recordMIDI = recordMIDI
    }
}
