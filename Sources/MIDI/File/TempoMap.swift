/// Converts ticks to seconds and back, for one division and a list of tempo changes.
///
/// With ticks per quarter note, the time up to each tempo change is kept as an
/// exact integer count of µs/PPQN (Σ Δticks × µs per quarter), so a position is
/// off by one final rounding to `Double` only, however many changes precede it.
/// With SMPTE division, tempo does not matter: a tick is 1 / (fps × ticks per
/// frame) seconds, 29 meaning 30 drop-frame (30000/1001 frames per second).
public struct TempoMap: Hashable, Sendable {
    /// A tempo in force from `tick` on.
    public struct Change: Hashable, Sendable {
        public var tick: UInt64
        public var microsecondsPerQuarterNote: UInt32
        /// Where the change falls, in seconds.
        public var seconds: Double
        /// Beats per minute (60,000,000 / µs per quarter).
        public var beatsPerMinute: Double { 60_000_000 / Double(microsecondsPerQuarterNote) }
    }

    /// The MIDI default when a file sets no tempo: 120 beats per minute.
    public static let defaultMicrosecondsPerQuarterNote: UInt32 = 500_000

    public let division: StandardMIDIFile.Division
    /// Tempo changes in tick order, the first at tick 0. Empty with SMPTE division.
    public let changes: [Change]
    /// Exact start time of each change, in µs × PPQN units; nil after an overflow (then `seconds` is used).
    private let exactStarts: [UInt64?]
    /// Ticks per second × `secondsDenominator` for SMPTE division; µs per second × PPQN otherwise.
    private let unitsPerSecond: UInt64
    private let secondsDenominator: UInt64

    /// `tempoChanges` need not be sorted; at equal ticks the last one wins.
    /// A tempo of 0 µs per quarter (not meaningful) is read as 1.
    public init(division: StandardMIDIFile.Division,
                tempoChanges: [(tick: UInt64, microsecondsPerQuarterNote: UInt32)] = []) {
        self.division = division
        switch division {
        case .smpte(let fps, let ticksPerFrame):
            let tpf = UInt64(max(1, ticksPerFrame))
            if fps == 29 {
                unitsPerSecond = 30_000 * tpf
                secondsDenominator = 1001
            } else {
                unitsPerSecond = UInt64(max(1, fps)) * tpf
                secondsDenominator = 1
            }
            changes = []
            exactStarts = []
        case .ticksPerQuarterNote(let ppqn):
            let ppqn = UInt64(max(1, ppqn))
            unitsPerSecond = 1_000_000 * ppqn
            secondsDenominator = 1
            // Stable sort by tick; keep the last change at each tick.
            let sorted = tempoChanges.enumerated().sorted {
                ($0.element.tick, $0.offset) < ($1.element.tick, $1.offset)
            }.map(\.element)
            var points: [(tick: UInt64, tempo: UInt32)] = [(0, Self.defaultMicrosecondsPerQuarterNote)]
            for c in sorted {
                let tempo = max(1, c.microsecondsPerQuarterNote)
                if points[points.count - 1].tick == c.tick {
                    points[points.count - 1].tempo = tempo
                } else if points[points.count - 1].tempo != tempo {
                    points.append((c.tick, tempo))
                }
            }
            var changes: [Change] = []
            var starts: [UInt64?] = []
            changes.reserveCapacity(points.count)
            var exact: UInt64? = 0
            var seconds = 0.0
            for (k, point) in points.enumerated() {
                if k > 0 {
                    let previous = points[k - 1]
                    let span = point.tick - previous.tick
                    if let e = exact {
                        let (product, o1) = span.multipliedReportingOverflow(by: UInt64(previous.tempo))
                        let (sum, o2) = e.addingReportingOverflow(product)
                        exact = (o1 || o2) ? nil : sum
                    }
                    seconds += Double(span) * Double(previous.tempo) / Double(unitsPerSecond)
                    if let e = exact { seconds = Double(e) / Double(unitsPerSecond) }
                }
                changes.append(Change(tick: point.tick, microsecondsPerQuarterNote: point.tempo, seconds: seconds))
                starts.append(exact)
            }
            self.changes = changes
            self.exactStarts = starts
        }
    }

    /// Index of the change in force at `tick`.
    func changeIndex(atTick tick: UInt64) -> Int {
        var lo = 0, hi = changes.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if changes[mid].tick <= tick { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// Seconds from the start to `tick`.
    public func seconds(atTick tick: UInt64) -> Double {
        if changes.isEmpty { return smpteSeconds(tick) }
        return seconds(atTick: tick, changeIndex: changeIndex(atTick: tick))
    }

    func smpteSeconds(_ tick: UInt64) -> Double {
        let (n, overflow) = tick.multipliedReportingOverflow(by: secondsDenominator)
        if overflow { return Double(tick) * Double(secondsDenominator) / Double(unitsPerSecond) }
        return Double(n) / Double(unitsPerSecond)
    }

    /// Seconds at `tick`, given the index of the change in force there (as a sequencer sweeping forward knows it).
    @inline(__always)
    func seconds(atTick tick: UInt64, changeIndex k: Int) -> Double {
        let change = changes[k]
        let span = tick - change.tick
        let tempo = UInt64(change.microsecondsPerQuarterNote)
        if let start = exactStarts[k] {
            let (product, o1) = span.multipliedReportingOverflow(by: tempo)
            let (sum, o2) = start.addingReportingOverflow(product)
            if !o1 && !o2 { return Double(sum) / Double(unitsPerSecond) }
        }
        return change.seconds + Double(span) * Double(tempo) / Double(unitsPerSecond)
    }

    /// The (fractional) tick at `seconds`; 0 for negative times.
    public func tick(atSeconds seconds: Double) -> Double {
        guard seconds > 0 else { return 0 }
        if changes.isEmpty {
            return seconds * Double(unitsPerSecond) / Double(secondsDenominator)
        }
        var lo = 0, hi = changes.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if changes[mid].seconds <= seconds { lo = mid } else { hi = mid - 1 }
        }
        let change = changes[lo]
        return Double(change.tick)
            + (seconds - change.seconds) * Double(unitsPerSecond) / Double(change.microsecondsPerQuarterNote)
    }

    /// The tempo in force at `tick` (the default with SMPTE division, where tempo does not apply).
    public func microsecondsPerQuarterNote(atTick tick: UInt64) -> UInt32 {
        changes.isEmpty ? Self.defaultMicrosecondsPerQuarterNote : changes[changeIndex(atTick: tick)].microsecondsPerQuarterNote
    }
}

extension StandardMIDIFile {
    /// Where each track starts on the file's tick axis: 0 for all tracks of
    /// formats 0 and 1; for format 2, the sum of the earlier tracks' lengths.
    public var trackStartTicks: [UInt64] { Self.trackStartTicks(format: format, trackEndTicks: tracks.map(\.endTick)) }

    /// Where each track starts, from each track's last tick (see `trackStartTicks`).
    public static func trackStartTicks(format: Format, trackEndTicks: [UInt64]) -> [UInt64] {
        guard format == .sequentialTracks else { return Array(repeating: 0, count: trackEndTicks.count) }
        var starts: [UInt64] = []
        starts.reserveCapacity(trackEndTicks.count)
        var t: UInt64 = 0
        for end in trackEndTicks {
            starts.append(t)
            t &+= end
        }
        return starts
    }

    /// The tempo map of the whole file. Tempo events of every track count
    /// (track 0 holds them in a well-formed format 1 file). In format 2, each
    /// track starts at the default tempo unless it sets its own.
    public var tempoMap: TempoMap {
        var tempos: [[(tick: UInt64, microsecondsPerQuarterNote: UInt32)]] = []
        for track in tracks {
            var list: [(tick: UInt64, microsecondsPerQuarterNote: UInt32)] = []
            for e in track.events {
                if case .meta(.tempo(let t)) = e.event { list.append((e.tick, t)) }
            }
            tempos.append(list)
        }
        return Self.tempoMap(format: format, division: division, trackTempos: tempos, trackEndTicks: tracks.map(\.endTick))
    }

    /// The tempo map from each track's tempo events (ticks within the track) and last tick.
    public static func tempoMap(format: Format, division: Division,
                                trackTempos: [[(tick: UInt64, microsecondsPerQuarterNote: UInt32)]],
                                trackEndTicks: [UInt64]) -> TempoMap {
        var changes: [(tick: UInt64, microsecondsPerQuarterNote: UInt32)] = []
        let starts = trackStartTicks(format: format, trackEndTicks: trackEndTicks)
        for (k, list) in trackTempos.enumerated() {
            if format == .sequentialTracks && k > 0 {
                changes.append((starts[k], TempoMap.defaultMicrosecondsPerQuarterNote))
            }
            for c in list { changes.append((starts[k] &+ c.tick, c.microsecondsPerQuarterNote)) }
        }
        return TempoMap(division: division, tempoChanges: changes)
    }

    /// The tick of the file's last event (end-of-track included), on the file's tick axis.
    public var lastTick: UInt64 { Self.lastTick(format: format, trackEndTicks: tracks.map(\.endTick)) }

    public static func lastTick(format: Format, trackEndTicks: [UInt64]) -> UInt64 {
        if format == .sequentialTracks { return trackEndTicks.reduce(0) { $0 &+ $1 } }
        return trackEndTicks.reduce(0) { max($0, $1) }
    }

    /// Seconds from the start to the last event (end-of-track included).
    public var duration: Double { tempoMap.seconds(atTick: lastTick) }
}
