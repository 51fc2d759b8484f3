import ArgumentParser
import Carillon
import SoundFile

/// Where and how audio files are written.
struct AudioFileOptions: ParsableArguments {
    @Option(name: [.customShort("r"), .long], help: ArgumentHelp("Sample rate in Hz, 8000…96000 (FluidSynth's range).", valueName: "hz"))
    var rate: Int = 44_100

    @Option(help: ArgumentHelp("File format: wav, flac or ogg (default: from the output's extension, else wav).", valueName: "format"))
    var format: String?

    @Option(help: ArgumentHelp("Bits per sample: 16, 24 or 32 (float; WAV only). Default 16.", valueName: "bits"))
    var bits: Int?

    func validate() throws {
        guard SamplerOptions.sampleRates.contains(rate) else { throw ValidationError("--rate must be between 8000 and 96000 (FluidSynth renders at up to 96 kHz)") }
        if let format, AudioFileFormat(rawValue: format.lowercased()) == nil {
            throw ValidationError("unknown --format '\(format)' (use wav, flac or ogg)")
        }
        if let bits, SampleEncoding(bits: bits) == nil { throw ValidationError("--bits must be 16, 24 or 32") }
    }

    /// The format and encoding for an output path; throws when they don't go together.
    func resolve(for path: String?) throws -> (AudioFileFormat, SampleEncoding?) {
        let chosen: AudioFileFormat
        if let format {
            chosen = AudioFileFormat(rawValue: format.lowercased())!
        } else if let path {
            guard let byExtension = AudioFileFormat(pathExtensionOf: path) else {
                throw ValidationError("cannot tell the format of '\(path)' from its extension; use --format wav|flac|ogg")
            }
            chosen = byExtension
        } else {
            chosen = .wav
        }
        guard let bits else { return (chosen, nil) }
        let encoding = SampleEncoding(bits: bits)!
        guard chosen.encodings.contains(encoding) else {
            throw ValidationError("\(chosen.rawValue) cannot be written with --bits \(bits)"
                + (chosen == .ogg ? " (Ogg Vorbis has no bit depth; leave --bits out)" : " (use 16 or 24)"))
        }
        return (chosen, encoding)
    }
}
