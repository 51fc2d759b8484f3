import ArgumentParser
import Hosting
import SoundFile

/// Where and how audio files are written.
struct AudioFileOptions: ParsableArguments {
    @OptionGroup var sampleRate: SampleRateOption

    /// `-r` as given, nil without it.
    var rate: Int? { sampleRate.rate }

    /// The rate when `-r` is not given and the format takes any.
    static let defaultRate = SampleRateOption.fileDefault

    @Option(help: ArgumentHelp(
        "File format: \(Self.formatNames) (default: by the output's extension, wav for --output-dir). "
            + "wav at 16 or 24 bits turns into RF64 by itself past 4 GB (32-bit float wav stays plain WAV, "
            + "up to 4 GB); rf64 and w64 always are 64-bit. "
            + "'-o -' writes raw PCM to standard output: 16-bit signed little-endian "
            + "interleaved stereo at --rate (24-bit with --bits 24, 32-bit float with --bits 32), "
            + "e.g. | ffmpeg -f s16le -ar 44100 -ac 2 -i - out.m4a.",
        valueName: "format"))
    var format: String?

    @Option(help: ArgumentHelp("Bits per sample: 16, 24 or 32 (float) for wav, aiff, caf, w64, rf64 and raw; 16 or 24 for flac; lossy formats have none. Default: 16.", valueName: "bits"))
    var bits: Int?

    static var formatNames: String { AudioFileFormat.allCases.map(\.rawValue).joined(separator: ", ") }

    func validate() throws {
        if let format, AudioFileFormat(rawValue: format.lowercased()) == nil {
            throw ValidationError("unknown --format '\(format)' (use \(Self.formatNames))")
        }
        if let bits, SampleEncoding(bits: bits) == nil { throw ValidationError("--bits must be 16, 24 or 32") }
    }

    /// The format, encoding and sample rate for an output path; throws when they
    /// don't go together. Without `-r`, a format with fixed rates gets its own
    /// (`rateChosen`: say so); a rate the user gave that it cannot take is refused.
    func resolve(for path: String?) throws -> (format: AudioFileFormat, encoding: SampleEncoding?, rate: Int, rateChosen: Bool) {
        let chosen: AudioFileFormat
        if let format {
            chosen = AudioFileFormat(rawValue: format.lowercased())!
            if path == AudioFileWriter.standardOutput && chosen != .raw {
                throw ValidationError("-o - writes raw PCM only (a pipe cannot take a \(chosen.rawValue) header); leave --format out or use raw")
            }
        } else if path == AudioFileWriter.standardOutput {
            chosen = .raw
        } else if let path {
            guard let byExtension = AudioFileFormat(pathExtensionOf: path) else {
                throw ValidationError("cannot tell the format of '\(path)' from its extension; use --format \(AudioFileFormat.allCases.map(\.rawValue).joined(separator: "|"))")
            }
            chosen = byExtension
        } else {
            chosen = .wav
        }
        guard chosen.isAvailable else {
            throw ValidationError("this system's libsndfile was built without \(chosen.rawValue.uppercased()) support")
        }
        let sampleRate = rate ?? chosen.rate(preferring: Self.defaultRate)
        if let rates = chosen.sampleRates, !rates.contains(sampleRate) {
            throw ValidationError("\(chosen.rawValue) cannot be written at -r \(sampleRate): it takes "
                + rates.map(String.init).joined(separator: ", ") + " Hz (leave -r out for \(chosen.rate(preferring: Self.defaultRate)))")
        }
        let rateChosen = rate == nil && sampleRate != Self.defaultRate
        guard let bits else { return (chosen, nil, sampleRate, rateChosen) }
        let encoding = SampleEncoding(bits: bits)!
        guard chosen.encodings.contains(encoding) else {
            let lossy: String? = switch chosen {
            case .ogg: "Ogg Vorbis"
            case .opus: "Ogg Opus"
            case .mp3: "MP3"
            default: nil
            }
            throw ValidationError("\(chosen.rawValue) cannot be written with --bits \(bits)"
                + (lossy.map { " (\($0) has no bit depth; leave --bits out)" } ?? " (use 16 or 24)"))
        }
        return (chosen, encoding, sampleRate, rateChosen)
    }
}
