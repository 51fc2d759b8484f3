/// Where the piece is on the sample clock, as the sequencer maps it after a
/// block: `seconds(at: frame) = anchorSeconds + (frame − anchorFrame) × scale / rate`
/// while `playing`, never past `limitSeconds` (a clock-gated follower's gate:
/// it holds there); `anchorSeconds` (the position it stopped at) otherwise.
/// A plain value, read on the render thread (`Renderer.pieceMap`) by whatever
/// follows the piece block by block (MIDI clock out).
public struct PieceMap: Equatable, Sendable, BitwiseCopyable {
    public var anchorFrame: UInt64
    /// The piece's position at `anchorFrame`, in seconds of the piece.
    public var anchorSeconds: Double
    /// The tempo scale (`Transport.tempoScale`): piece seconds per second.
    public var scale: Double
    /// A piece is scheduled, the transport plays and the piece has not ended.
    public var playing: Bool
    public var sampleRate: Double
    /// The gate: the position the piece holds at until the next clock opens it (infinity: no gate).
    public var limitSeconds: Double

    public init(anchorFrame: UInt64, anchorSeconds: Double, scale: Double, playing: Bool, sampleRate: Double,
                limitSeconds: Double = .infinity) {
        self.anchorFrame = anchorFrame; self.anchorSeconds = anchorSeconds
        self.scale = scale; self.playing = playing; self.sampleRate = sampleRate; self.limitSeconds = limitSeconds
    }

    /// The piece's position at sample-clock `frame` (the anchor's position before the anchor or when stopped).
    @inline(__always) public func seconds(at frame: UInt64) -> Double {
        guard playing, frame > anchorFrame else { return anchorSeconds }
        return anchorSeconds + min(Double(frame - anchorFrame) * scale / sampleRate, max(0, limitSeconds - anchorSeconds))
    }

    /// The (fractional) sample-clock frame at which the piece reaches `seconds`, playing on from the
    /// anchor; infinity for a place at or past the gate's limit (not reached until the gate opens;
    /// within half a frame, as the sequencer keeps the limit in whole frames).
    @inline(__always) public func frame(atSeconds seconds: Double) -> Double {
        if seconds > anchorSeconds && (seconds - limitSeconds) * sampleRate > -0.5 { return .infinity }
        return Double(anchorFrame) + (seconds - anchorSeconds) * sampleRate / scale
    }
}
