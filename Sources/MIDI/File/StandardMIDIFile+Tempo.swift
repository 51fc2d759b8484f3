extension StandardMIDIFile {
    /// The file played `factor` times as fast (`render --tempo`): every Set
    /// Tempo event's microseconds per quarter note divided by `factor`
    /// (rounded, kept within 1...0xFFFFFF, the field's 24 bits), and when no
    /// tempo event falls at the file's tick 0, one added there (first in the
    /// first track) with the default 500,000 µs divided by `factor`, so a file
    /// that sets no tempo plays at 120 × `factor` beats per minute. Ticks are
    /// unchanged, so the tempo map, the beats and every event's time in
    /// seconds follow. With SMPTE division tempo events mean nothing: the file
    /// is returned as it is (scale its times instead).
    public func scalingTempo(by factor: Double) -> StandardMIDIFile {
        precondition(factor > 0 && factor.isFinite)
        guard factor != 1, case .ticksPerQuarterNote = division else { return self }
        func scaled(_ microseconds: UInt32) -> UInt32 {
            UInt32((Double(microseconds) / factor).rounded().clamped(to: 1...0xFF_FFFF))
        }
        var file = self
        var tempoAtStart = false
        for (t, start) in zip(file.tracks.indices, trackStartTicks) {
            for e in file.tracks[t].events.indices {
                guard case .meta(.tempo(let microseconds)) = file.tracks[t].events[e].event else { continue }
                file.tracks[t].events[e].event = .meta(.tempo(microsecondsPerQuarterNote: scaled(microseconds)))
                if start &+ file.tracks[t].events[e].tick == 0 { tempoAtStart = true }
            }
        }
        if !tempoAtStart && !file.tracks.isEmpty {
            let first = TrackEvent(tick: 0, event: .meta(.tempo(microsecondsPerQuarterNote: scaled(TempoMap.defaultMicrosecondsPerQuarterNote))))
            file.tracks[0].events.insert(first, at: 0)
        }
        return file
    }
}

extension Double {
    fileprivate func clamped(to range: ClosedRange<Double>) -> Double { Swift.min(Swift.max(self, range.lowerBound), range.upperBound) }
}
