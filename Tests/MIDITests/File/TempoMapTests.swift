import Testing
@testable import MIDI

@Suite struct TempoMapTests {
    @Test func defaultTempo_is120BPM() {
        let map = TempoMap(division: .ticksPerQuarterNote(96))
        #expect(map.seconds(atTick: 96) == 0.5)
        #expect(map.seconds(atTick: 0) == 0)
        #expect(map.tick(atSeconds: 1.5) == 288)
    }

    @Test func tempoChanges_exactAcrossChanges() {
        let map = TempoMap(division: .ticksPerQuarterNote(480), tempoChanges: [
            (0, 500_000), (960, 250_000), (1920, 1_000_000),
        ])
        #expect(map.seconds(atTick: 960) == 1.0)
        #expect(map.seconds(atTick: 1440) == 1.25)
        #expect(map.seconds(atTick: 1920) == 1.5)
        #expect(map.seconds(atTick: 2400) == 2.5)
        #expect(map.tick(atSeconds: 1.25) == 1440)
        #expect(map.tick(atSeconds: 2.5) == 2400)
        #expect(map.microsecondsPerQuarterNote(atTick: 1000) == 250_000)
    }

    @Test func manyOddTempoChanges_matchRationalArithmetic() {
        // 1000 changes of awkward tempi: accumulated Double sums would drift; the map must not.
        var changes: [(tick: UInt64, microsecondsPerQuarterNote: UInt32)] = []
        var exact: UInt64 = 0   // µs × PPQN
        var previous: (UInt64, UInt64) = (0, 500_000)
        for k in 1...1000 {
            let tick = UInt64(k * 7)
            let tempo = UInt32(333_333 + k % 17)
            exact += (tick - previous.0) * previous.1
            previous = (tick, UInt64(tempo))
            changes.append((tick, tempo))
        }
        let map = TempoMap(division: .ticksPerQuarterNote(441), tempoChanges: changes)
        let end: UInt64 = 7000 + 123
        exact += (end - previous.0) * previous.1
        #expect(map.seconds(atTick: end) == Double(exact) / (1_000_000 * 441))
    }

    @Test func unsortedChanges_sortedLastAtEqualTickWins() {
        let map = TempoMap(division: .ticksPerQuarterNote(100), tempoChanges: [(100, 1_000_000), (0, 400_000), (100, 200_000)])
        #expect(map.changes.map(\.microsecondsPerQuarterNote) == [400_000, 200_000])
        #expect(map.seconds(atTick: 200) == 0.6)
    }

    @Test func smpteDivision_ignoresTempo() {
        let map = TempoMap(division: .smpte(framesPerSecond: 25, ticksPerFrame: 40), tempoChanges: [(0, 123)])
        #expect(map.seconds(atTick: 1000) == 1.0)
        #expect(map.tick(atSeconds: 2.5) == 2500)
    }

    @Test func smpteDropFrame_is2997() {
        let map = TempoMap(division: .smpte(framesPerSecond: 29, ticksPerFrame: 1))
        #expect(map.seconds(atTick: 30_000) == 1001)
        #expect(map.tick(atSeconds: 1001) == 30_000)
    }

    @Test func roundTrip_tickSecondsTick() {
        let map = TempoMap(division: .ticksPerQuarterNote(96), tempoChanges: [(0, 600_000), (500, 450_000), (1000, 700_001)])
        for tick in stride(from: UInt64(0), through: 3000, by: 37) {
            let back = map.tick(atSeconds: map.seconds(atTick: tick))
            #expect(abs(back - Double(tick)) < 1e-6)
        }
    }

    @Test func hugeTicks_doNotOverflow() {
        let map = TempoMap(division: .ticksPerQuarterNote(1), tempoChanges: [(1 << 40, 16_000_000), (1 << 50, 1)])
        #expect(map.seconds(atTick: .max).isFinite)
        #expect(map.seconds(atTick: 1 << 51) > map.seconds(atTick: 1 << 50))
    }

    @Test func zeroTempo_readAsOneMicrosecond() {
        let map = TempoMap(division: .ticksPerQuarterNote(1), tempoChanges: [(0, 0)])
        #expect(map.seconds(atTick: 1_000_000) == 1)
        #expect(map.tick(atSeconds: 1).isFinite)
    }
}

@Suite struct TimelineTests {
    typealias B = SMFBytes

    @Test func format1_mergedStableAtEqualTicks() throws {
        let tempo: [UInt8] = [0x00, 0xFF, 0x51, 0x03, 0x0F, 0x42, 0x40, 0x60, 0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20] + B.endOfTrack  // 1 s/q, then 0.5 s/q at 96
        let a: [UInt8] = [0x00, 0x90, 1, 1, 0x60, 0x90, 2, 1, 0x00, 0x90, 3, 1] + B.endOfTrack
        let b: [UInt8] = [0x00, 0x91, 4, 1, 0x60, 0x91, 5, 1, 0x81, 0x40, 0x91, 6, 1] + B.endOfTrack
        let file = try StandardMIDIFile(bytes: B.file(tracks: [tempo, a, b]))
        let timeline = file.timeline()
        let notes = timeline.compactMap { e -> (UInt8, Double, Int)? in
            if case .midi(.noteOn(let n)) = e.event { return (n.note.value, e.seconds, e.track) }
            return nil
        }
        #expect(notes.map(\.0) == [1, 4, 2, 3, 5, 6])
        #expect(notes.map(\.1) == [0, 0, 1, 1, 1, 2])
        #expect(timeline.count == file.tracks.reduce(0) { $0 + $1.events.count })
        #expect(zip(timeline, timeline.dropFirst()).allSatisfy { $0.tick <= $1.tick })
        #expect(file.duration == 2)
    }

    @Test(arguments: [1, 2, 3, 7, 40])
    func merge_matchesStableSort(trackCount: Int) {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15 &* UInt64(trackCount)
        func next(_ n: UInt64) -> UInt64 {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return state % n
        }
        var tracks: [Track] = []
        for k in 0..<trackCount {
            var tick: UInt64 = 0
            var events: [TrackEvent] = []
            for n in 0..<Int(next(300)) {
                tick += next(4)   // many equal ticks within and across tracks
                events.append(TrackEvent(tick: tick, event: .midi(.cc(UInt7(n % 128), value: UInt7(k % 128), channel: 0))))
            }
            tracks.append(Track(events: events))
        }
        let file = StandardMIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(96), tracks: tracks)
        let expected = tracks.enumerated().flatMap { k, t in t.events.enumerated().map { (t: $0.element.tick, k: k, i: $0.offset, e: $0.element.event) } }
            .sorted { ($0.t, $0.k, $0.i) < ($1.t, $1.k, $1.i) }
        let timeline = file.timeline()
        #expect(timeline.map(\.tick) == expected.map(\.t))
        #expect(timeline.map(\.track) == expected.map(\.k))
        #expect(timeline.map(\.event) == expected.map(\.e))
        #expect(timeline.map(\.seconds) == expected.map { Double($0.t) / 192 })
    }

    @Test func format2_tracksPlayOneAfterAnother() throws {
        let one: [UInt8] = [0x00, 0xFF, 0x51, 0x03, 0x0F, 0x42, 0x40, 0x00, 0x90, 1, 1, 0x60, 0x80, 1, 0] + B.endOfTrack   // 1 s per quarter
        let two: [UInt8] = [0x00, 0x90, 2, 1, 0x60, 0x80, 2, 0] + B.endOfTrack   // default tempo again: 0.5 s
        let file = try StandardMIDIFile(bytes: B.file(format: 2, tracks: [one, two]))
        let notes = file.timeline().filter { if case .midi = $0.event { true } else { false } }
        #expect(notes.map(\.tick) == [0, 96, 96, 192])
        #expect(notes.map(\.seconds) == [0, 1, 1, 1.5])
        #expect(notes.map(\.track) == [0, 0, 1, 1])
        #expect(file.duration == 1.5)
    }

    @Test func smpteFile_timelineInFrames() throws {
        let body: [UInt8] = [0x00, 0x90, 1, 1, 0x83, 0x60, 0x80, 1, 0] + B.endOfTrack   // 480 ticks later
        let file = try StandardMIDIFile(bytes: B.file(format: 0, division: 0xE250, tracks: [body]))   // 30 fps × 80 = 2400 ticks/s
        #expect(file.timeline().map(\.seconds) == [0, 0.2, 0.2])
    }
}
