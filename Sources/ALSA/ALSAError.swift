import CALSA
import Glibc

/// A failed ALSA call: the function that failed, its negative error code and
/// what `snd_strerror` says about it, plus — for the two failures people
/// actually meet (no sequencer, no sound card) — a sentence saying what to check.
public struct ALSAError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Equatable, Sendable {
        /// `/dev/snd/seq` could not be opened: no sound in the kernel, or `snd-seq` not loaded.
        case sequencerUnavailable
        /// A PCM device could not be opened.
        case pcmUnavailable(device: String)
        /// `connect(source:)` found no source matching what was asked; `candidates` are the sources there are.
        case noMatchingSource(spec: String, candidates: [String])
        /// `connectOutput(destination:)` found no port to send to matching what was asked.
        case noMatchingDestination(spec: String, candidates: [String])
        /// Any other failing call.
        case call
    }

    public var kind: Kind
    /// The C function that failed, e.g. `snd_pcm_hw_params_set_rate_near`.
    public var function: String
    /// The negative errno-style code the function returned.
    public var code: Int32
    /// What the failing call was trying to do, when more than the function name helps.
    public var context: String?

    public init(kind: Kind = .call, function: String, code: Int32, context: String? = nil) {
        self.kind = kind; self.function = function; self.code = code; self.context = context
    }

    /// A write ended by `PCMPlayback.cancel`, not by the device.
    public var isCancellation: Bool { code == -ECANCELED }

    /// `snd_strerror(code)`.
    public var reason: String { String(cString: snd_strerror(code)) }

    public var description: String {
        switch kind {
        case .sequencerUnavailable:
            "ALSA sequencer not available (/dev/snd/seq: \(reason)) — is the snd-seq module loaded?"
        case .pcmUnavailable(let device):
            "ALSA PCM device '\(device)' not available (\(function): \(reason))"
                + (code == -ENOENT ? " — is there a sound card (/dev/snd)?" : "")
        case .noMatchingSource(let spec, let candidates):
            "no sequencer source matches '\(spec)' (client:port or part of a name, any case); "
                + (candidates.isEmpty ? "there are no sources" : "sources: " + candidates.joined(separator: ", "))
        case .noMatchingDestination(let spec, let candidates):
            "no sequencer destination matches '\(spec)' (client:port or part of a name, any case); "
                + (candidates.isEmpty ? "there are no destinations" : "destinations: " + candidates.joined(separator: ", "))
        case .call:
            "\(function) failed: \(reason)" + (context.map { " (\($0))" } ?? "")
        }
    }
}

/// The one checking helper every ALSA call that can fail goes through:
/// returns a non-negative result, throws `ALSAError` naming `function` otherwise.
@discardableResult
@inline(__always)
func check<T: BinaryInteger>(
    _ function: String, _ result: T,
    context: @autoclosure () -> String? = nil, kind: ALSAError.Kind = .call
) throws(ALSAError) -> T {
    if result < 0 {
        throw ALSAError(kind: kind, function: function, code: Int32(truncatingIfNeeded: result), context: context())
    }
    return result
}

/// Process-wide alsa-lib settings.
public enum ALSALibrary {
    /// Stops alsa-lib from printing its own error lines to stderr (Carillon
    /// reports failures as `ALSAError`). Done once, by the first
    /// `SequencerClient` or `PCMPlayback`; harmless to call again.
    public static func silenceErrorMessages() { _ = silenced }

    private static let silenced: Void = carillon_silence_alsa_lib_errors()
}
