import MIDI

/// A piece's time in quarter-note beats and back, from its tempo map: what
/// MIDI clock (24 per beat) and Song Position Pointer (16ths) count in.
/// Fractional beats, so a clock falls between two ticks of the file exactly.
/// With SMPTE division (no tempo) and with no map at all: one tempo throughout.
/// Its time signatures give bars and beats (`barPosition`, the JACK transport's
/// bar/beat/tick when Carillon leads it); 4/4 without them.
///
/// Threads: made off the render thread; its reads (`beat`, `seconds`,
/// `beatsPerMinute`) neither allocate nor lock and may run on it.
public struct BeatMap: Sendable {
    struct Segment: Sendable {
        var seconds: Double
        var beat: Double
        var secondsPerBeat: Double
    }
    /// A time signature from `beat` (quarter notes) on, where bar `bar` + 1 starts.
    struct Meter: Sendable {
        var beat: Double
        var bar: Int
        var numerator: Int
        var denominator: Int
        /// Quarter notes in one of its beats.
        var quartersPerBeat: Double { 4 / Double(denominator) }
    }
    private let segments: [Segment]
    private let meters: [Meter]
    private static let fourFour = [Meter(beat: 0, bar: 0, numerator: 4, denominator: 4)]

    /// The map of a file's tempo changes and time signatures (4/4 without any;
    /// each signature starts a bar, as a sequencer writes them).
    public init(tempoMap: TempoMap, timeSignatures: [TimeSignatureChange] = []) {
        guard case .ticksPerQuarterNote(let ppqn) = tempoMap.division, !tempoMap.changes.isEmpty else {
            segments = [Segment(seconds: 0, beat: 0, secondsPerBeat: 0.5)]
            meters = Self.fourFour
            return
        }
        let q = Double(max(1, ppqn))
        segments = tempoMap.changes.map {
            Segment(seconds: $0.seconds, beat: Double($0.tick) / q, secondsPerBeat: Double($0.microsecondsPerQuarterNote) / 1e6)
        }
        var meters = Self.fourFour
        for sig in timeSignatures where sig.numerator > 0 && sig.denominator > 0 {
            let beat = Double(sig.tick) / q, last = meters[meters.count - 1]
            // A bar cut short by the next signature still counts.
            let bars = ((beat - last.beat) / (Double(last.numerator) * last.quartersPerBeat) - 1e-9).rounded(.up)
            let meter = Meter(beat: beat, bar: last.bar + max(0, Int(bars)), numerator: sig.numerator, denominator: sig.denominator)
            if beat <= last.beat { meters[meters.count - 1] = Meter(beat: last.beat, bar: last.bar, numerator: sig.numerator, denominator: sig.denominator) } else { meters.append(meter) }
        }
        self.meters = meters
    }

    /// One tempo throughout, in 4/4.
    public init(beatsPerMinute: Double) {
        segments = [Segment(seconds: 0, beat: 0, secondsPerBeat: 60 / max(beatsPerMinute, 1e-6))]
        meters = Self.fourFour
    }

    /// Where a beat falls in bars: what the JACK transport's BBT says.
    public struct BarPosition: Equatable, Sendable {
        /// 1-based.
        public var bar: Int
        /// 1-based, in the time signature's beats (eighths in 6/8).
        public var beat: Int
        /// How far into that beat, 0..<1.
        public var fraction: Double
        public var numerator: Int
        public var denominator: Int
        /// The bar's start in the signature's beats from the top.
        public var barStartBeats: Double
    }

    /// Bar, beat and the fraction of it at `beat` quarter notes from the top (0 before it).
    public func barPosition(atBeat beat: Double) -> BarPosition {
        let q = max(beat, 0)
        let m = meters[Self.lastIndex(in: meters, atOrBefore: q) { $0.beat }]
        let beats = (q - m.beat) / m.quartersPerBeat
        let bars = (beats / Double(m.numerator)).rounded(.down)
        let within = beats - bars * Double(m.numerator)
        let whole = min(within.rounded(.down), Double(m.numerator - 1))
        return BarPosition(bar: m.bar + Int(bars) + 1, beat: Int(whole) + 1, fraction: min(max(within - whole, 0), 0.999_999),
                           numerator: m.numerator, denominator: m.denominator,
                           barStartBeats: m.beat / m.quartersPerBeat + bars * Double(m.numerator))
    }

    /// The beat at `seconds` of the piece (0 before the start).
    public func beat(atSeconds seconds: Double) -> Double {
        guard seconds > 0 else { return 0 }
        let s = segments[Self.lastIndex(in: segments, atOrBefore: seconds) { $0.seconds }]
        return s.beat + (seconds - s.seconds) / s.secondsPerBeat
    }

    /// The piece's seconds at `beat` (0 before the start).
    public func seconds(atBeat beat: Double) -> Double {
        guard beat > 0 else { return 0 }
        let s = segments[Self.lastIndex(in: segments, atOrBefore: beat) { $0.beat }]
        return s.seconds + (beat - s.beat) * s.secondsPerBeat
    }

    /// The file's tempo at `seconds` (before any tempo scale).
    public func beatsPerMinute(atSeconds seconds: Double) -> Double {
        60 / segments[Self.lastIndex(in: segments, atOrBefore: seconds) { $0.seconds }].secondsPerBeat
    }

    /// The last index whose key is at or before `value` (0 when none is): the segment or
    /// meter a time falls in. Keys ascend; a binary search, no allocation (JACK's process thread asks).
    private static func lastIndex<T>(in items: [T], atOrBefore value: Double, _ key: (T) -> Double) -> Int {
        var lo = 0, hi = items.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if key(items[mid]) <= value { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }
}
