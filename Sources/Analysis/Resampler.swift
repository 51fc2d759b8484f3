import CSampleRate

/// A failed libsamplerate call, named with libsamplerate's own reason.
public struct ResamplerError: Error, Equatable, Sendable, CustomStringConvertible {
    public var function: String
    public var code: Int32

    public var description: String {
        let reason = src_strerror(code).map { String(cString: $0) } ?? "error \(code)"
        return "resampling failed: \(function): \(reason)"
    }

    /// Turns a libsamplerate return code into a thrown error.
    static func check(_ code: Int32, _ function: String) throws(ResamplerError) {
        if code != 0 { throw ResamplerError(function: function, code: code) }
    }
}

/// Converts a stream of interleaved float frames from one sample rate to
/// another with libsamplerate's band-limited sinc converter, chunk by chunk.
///
/// Not thread-safe: one stream, used from one thread (a decoder thread); not
/// for the render thread (libsamplerate may allocate on its first call).
public final class Resampler {
    public let inputRate: Int
    public let outputRate: Int
    public let channels: Int
    /// Output frames per input frame.
    public let ratio: Double
    private let state: OpaquePointer

    /// The converter quality: medium sinc (97 dB SNR, 90 % bandwidth) is
    /// libsamplerate's own recommendation for real-time streams.
    public init(from inputRate: Int, to outputRate: Int, channels: Int = 2) throws(ResamplerError) {
        precondition(inputRate > 0 && outputRate > 0 && channels > 0)
        var error: Int32 = 0
        guard let state = src_new(Int32(SRC_SINC_MEDIUM_QUALITY), Int32(channels), &error) else {
            throw ResamplerError(function: "src_new", code: error)
        }
        self.state = state
        self.inputRate = inputRate; self.outputRate = outputRate; self.channels = channels
        ratio = Double(outputRate) / Double(inputRate)
        try ResamplerError.check(src_set_ratio(state, ratio), "src_set_ratio")
    }

    deinit { src_delete(state) }

    /// Output frames `inputFrames` input frames can give at most (room to leave in `output`).
    public func maximumOutput(forInput inputFrames: Int) -> Int { Int((Double(inputFrames) * ratio).rounded(.up)) + 2 }

    /// Converts `inputFrames` frames of `input`; writes at most `outputCapacity`
    /// frames to `output`. `endOfInput` flushes the converter's tail (call
    /// again with no input until it gives nothing). Returns the input frames
    /// used and the output frames made.
    public func process(input: UnsafePointer<Float>?, inputFrames: Int,
                        output: UnsafeMutablePointer<Float>, outputCapacity: Int,
                        endOfInput: Bool) throws(ResamplerError) -> (used: Int, made: Int) {
        var data = SRC_DATA()
        data.data_in = input
        data.input_frames = inputFrames
        data.data_out = output
        data.output_frames = outputCapacity
        data.end_of_input = endOfInput ? 1 : 0
        data.src_ratio = ratio
        try ResamplerError.check(src_process(state, &data), "src_process")
        return (data.input_frames_used, data.output_frames_gen)
    }

    /// Forgets the stream so far (after a seek).
    public func reset() throws(ResamplerError) {
        try ResamplerError.check(src_reset(state), "src_reset")
    }
}
