import MIDI

/// A piece's time in quarter-note beats and back, from its tempo map: what
/// MIDI clock (24 per beat) and Song Position Pointer (16ths) count in.
/// Fractional beats, so a clock falls between two ticks of the file exactly.
/// With SMPTE division (no tempo) and with no map at all: one tempo throughout.
///
/// Threads: made off the render thread; its reads (`beat`, `seconds`,
/// `beatsPerMinute`) neither allocate nor lock and may run on it.
public struct BeatMap: Sendable {
    struct Segment: Sendable {
        var seconds: Double
        var beat: Double
        var secondsPerBeat: Double
    }
    private let segments: [Segment]

    /// The map of a file's tempo changes.
    public init(tempoMap: TempoMap) {
        guard case .ticksPerQuarterNote(let ppqn) = tempoMap.division, !tempoMap.changes.isEmpty else {
            segments = [Segment(seconds: 0, beat: 0, secondsPerBeat: 0.5)]
            return
        }
        let q = Double(max(1, ppqn))
        segments = tempoMap.changes.map {
            Segment(seconds: $0.seconds, beat: Double($0.tick) / q, secondsPerBeat: Double($0.microsecondsPerQuarterNote) / 1e6)
        }
    }

    /// One tempo throughout.
    public init(beatsPerMinute: Double) {
        segments = [Segment(seconds: 0, beat: 0, secondsPerBeat: 60 / max(beatsPerMinute, 1e-6))]
    }

    /// The beat at `seconds` of the piece (0 before the start).
    public func beat(atSeconds seconds: Double) -> Double {
        guard seconds > 0 else { return 0 }
        var lo = 0, hi = segments.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if segments[mid].seconds <= seconds { lo = mid } else { hi = mid - 1 }
        }
        let s = segments[lo]
        return s.beat + (seconds - s.seconds) / s.secondsPerBeat
    }

    /// The piece's seconds at `beat` (0 before the start).
    public func seconds(atBeat beat: Double) -> Double {
        guard beat > 0 else { return 0 }
        var lo = 0, hi = segments.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if segments[mid].beat <= beat { lo = mid } else { hi = mid - 1 }
        }
        let s = segments[lo]
        return s.seconds + (beat - s.beat) * s.secondsPerBeat
    }

    /// The file's tempo at `seconds` (before any tempo scale).
    public func beatsPerMinute(atSeconds seconds: Double) -> Double {
        var lo = 0, hi = segments.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if segments[mid].seconds <= seconds { lo = mid } else { hi = mid - 1 }
        }
        return 60 / segments[lo].secondsPerBeat
    }
}
