import Engine

/// `--link`'s decisions, pure (the session itself is `Link`'s, the thread
/// that asks it `LiveSession`'s `LinkFollowing`): which tempo the piece plays
/// at and which one to share, and how to hold the piece's beats in phase with
/// the session's bars.
///
/// One tempo is shared both ways: a change in the Link session sets the
/// transport's tempo scale (the session's bpm over the file's where the piece
/// is), and a change of the scale made here (`transport.tempo` moved by a
/// control, OSC, the web page) is the tempo Carillon gives the session. The
/// session's wins when both change between two steps.
///
/// Phase: the piece's beat (through its tempo map) against the session's
/// beat at the time the same frame is heard, in the quantum (a bar of 4). An
/// error up to `seekBeyond` beats is worked off by playing up to `maxNudge`
/// faster or slower for `correctionSeconds`' worth of it; a bigger one (the
/// transport played from elsewhere, a peer that re-mapped the session) is a seek.
public struct LinkLock: Sendable {
    /// Beats in a bar: where the piece starts, what phase is counted in.
    public static let quantum = 4.0

    public let beats: BeatMap
    /// The time (s) to work off a phase error in.
    public var correctionSeconds = 0.5
    /// The most the tempo is nudged by (±, a fraction) while correcting phase.
    public var maxNudge = 0.05
    /// A phase error beyond this (beats: a 32nd note) is a seek, not a nudge.
    public var seekBeyond = 0.125

    /// The tempo (bpm) last exchanged with the session: read from it or given to it.
    public private(set) var sharedBPM: Double?
    /// The tempo scale last set (clamped as the transport clamps it).
    public private(set) var lastScale: Double?

    public init(beats: BeatMap) { self.beats = beats }

    /// What one step asks of the transport and the session.
    public struct Step: Equatable, Sendable {
        /// The transport's new tempo scale.
        public var scale: Double
        /// Seek the piece here (seconds), nil: no seek.
        public var seek: Double?
        /// Give the session this tempo (bpm), nil: nothing to share.
        public var share: Double?

        public init(scale: Double, seek: Double? = nil, share: Double? = nil) {
            self.scale = scale; self.seek = seek; self.share = share
        }
    }

    /// One step: the session's tempo now (`linkBPM`), the transport's scale and
    /// position as they are, and, while the piece plays, its phase error in beats
    /// (`phaseError(sessionBeat:pieceBeat:)`; nil when stopped).
    public mutating func step(linkBPM: Double, scale: Double, position: Double, phaseError: Double?) -> Step {
        let fileBPM = max(beats.beatsPerMinute(atSeconds: position), 1e-9)
        var share: Double?
        let sessionMoved = sharedBPM.map { abs(linkBPM - $0) > 1e-6 } ?? true
        if !sessionMoved, let last = lastScale, abs(scale - last) > 1e-9 * last {
            // Moved here: the piece's tempo now is the session's from now.
            let bpm = min(max(scale * fileBPM, Self.tempoRange.lowerBound), Self.tempoRange.upperBound)
            share = bpm
            sharedBPM = bpm
        } else if sessionMoved {
            sharedBPM = linkBPM
        }
        let target = sharedBPM ?? linkBPM
        var nudge = 1.0, seek: Double?
        if let e = phaseError, e.isFinite {
            if abs(e) > seekBeyond {
                seek = max(0, beats.seconds(atBeat: beats.beat(atSeconds: position) + e))
            } else {
                nudge += min(max(e * 60 / (target * correctionSeconds), -maxNudge), maxNudge)
            }
        }
        let s = min(max(target / fileBPM * nudge, Transport.tempoScaleRange.lowerBound), Transport.tempoScaleRange.upperBound)
        lastScale = s
        return Step(scale: s, seek: seek, share: share)
    }

    /// Link's tempo range (bpm): what can be shared.
    public static let tempoRange = 20.0...999.0

    /// How far (beats) the piece is behind the session (positive: it must catch up),
    /// in the quantum: wrapped to -quantum/2 ..< quantum/2, so only the phase counts.
    public static func phaseError(sessionBeat: Double, pieceBeat: Double, quantum: Double = quantum) -> Double {
        var d = (sessionBeat - pieceBeat).truncatingRemainder(dividingBy: quantum)
        if d >= quantum / 2 { d -= quantum } else if d < -quantum / 2 { d += quantum }
        return d
    }
}
