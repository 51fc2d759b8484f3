import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One line of a batch manifest (JSON Lines): what became of one input.
public struct ManifestEntry: Sendable, Equatable {
    public enum Status: String, Sendable { case ok, failed, skipped }

    public var input: String
    public var output: String
    public var status: Status
    public var error: String? = nil
    /// Seconds of the piece (to its last event) and of audio written.
    public var pieceDuration: Double? = nil
    public var duration: Double? = nil
    public var peakDBFS: Double? = nil
    public var clippedSamples: Int? = nil
    /// Integrated loudness as rendered, in LUFS (−∞, written as null, for silence).
    public var loudness: Double? = nil
    /// With `--normalize`: the true peak as rendered (dBTP), the gain applied
    /// (dB) and the loudness after it.
    public var truePeak: Double? = nil
    public var gain: Double? = nil
    public var normalizedLoudness: Double? = nil
    public var truncated: Bool = false
    /// Stretches with no event longer than `--max-gap` that were cut to it, and the seconds they lost.
    public var shortenedGaps: Int? = nil
    public var secondsCut: Double? = nil
    public var renderSeconds: Double? = nil
    public var carillonVersion: String
    public var soundFont: String
    public var soundFontBytes: Int

    public init(input: String, output: String, status: Status, carillonVersion: String, soundFont: String, soundFontBytes: Int) {
        self.input = input; self.output = output; self.status = status
        self.carillonVersion = carillonVersion; self.soundFont = soundFont; self.soundFontBytes = soundFontBytes
    }

    /// The entry as one line of JSON (no newline). Every field is present;
    /// absent values and non-finite numbers are `null`.
    public var jsonLine: String {
        var fields: [(String, String)] = [
            ("input", Self.string(input)), ("output", Self.string(output)), ("status", Self.string(status.rawValue)),
            ("error", error.map(Self.string) ?? "null"),
            ("piece_seconds", Self.number(pieceDuration)), ("rendered_seconds", Self.number(duration)),
            ("peak_dbfs", Self.number(peakDBFS)), ("clipped_samples", clippedSamples.map(String.init) ?? "null"),
            ("loudness_lufs", Self.number(loudness)), ("true_peak_dbtp", Self.number(truePeak)),
            ("gain_db", Self.number(gain)), ("normalized_lufs", Self.number(normalizedLoudness)),
            ("truncated", truncated ? "true" : "false"), ("gaps_cut", shortenedGaps.map(String.init) ?? "null"), ("seconds_cut", Self.number(secondsCut)),
            ("render_seconds", Self.number(renderSeconds)),
        ]
        fields += [("carillon_version", Self.string(carillonVersion)), ("soundfont", Self.string(soundFont)),
                   ("soundfont_bytes", String(soundFontBytes))]
        return "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    static func number(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "null" }
        return "\(value)"   // Swift's shortest round-trip form is valid JSON (1e-05, 0.5, -23.0)
    }

    static func string(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

public struct ManifestError: Error, Equatable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot write manifest \(path): \(reason)" }
}

/// Appends manifest lines to a file as each input finishes: opened with
/// O_APPEND, each line one write(2) under a lock, so lines from several
/// workers never interleave and an interrupted batch keeps every line
/// written so far. Any thread.
public final class ManifestWriter: Sendable {
    public let path: String
    private let fd: Int32
    private let lock = Mutex(())

    public init(path: String) throws(ManifestError) {
        self.path = path
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw ManifestError(path: path, reason: errnoText()) }
    }

    deinit { close(fd) }

    public func append(_ entry: ManifestEntry) throws(ManifestError) {
        var line = entry.jsonLine + "\n"
        let failure: String? = lock.withLock { _ in
            line.withUTF8 { bytes in
                var done = 0
                while done < bytes.count {
                    let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
                    if n < 0 { if errno == EINTR { continue }; return errnoText() }
                    done += n
                }
                return nil
            }
        }
        if let failure { throw ManifestError(path: path, reason: failure) }
    }
}
