import Foundation
import MIDI

/// Standard MIDI File parsing throughput (Benchmarks/parse.sh compares it with symusic and mido).
enum ParseBenchmark {
    /// A deterministic file of about `notes` notes: format 1, a tempo track and
    /// 16 instrument tracks, running status, note-on velocity 0 as note-off,
    /// controllers and pitch bends in between, tempo changes.
    static func makeFile(notes: Int, seed: UInt64 = 0x5EED_CA11_1DE5) -> StandardMIDIFile {
        var state = seed
        func next() -> UInt64 {   // xorshift64*
            state ^= state >> 12; state ^= state << 25; state ^= state >> 27
            return state &* 2_685_821_657_736_338_717
        }
        func random(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }

        let voices = 16
        let perTrack = notes / voices
        var tracks: [Track] = []
        var conductor: [TrackEvent] = [
            TrackEvent(tick: 0, event: .meta(.text(.trackName, Array("Conductor".utf8)))),
            TrackEvent(tick: 0, event: .meta(.timeSignature(.init(numerator: 4, denominatorPower: 2)))),
        ]
        var lastTick: UInt64 = 0
        var voiceTracks: [Track] = []
        for v in 0..<voices {
            let channel = Channel(v)
            var events: [TrackEvent] = []
            events.reserveCapacity(perTrack * 2 + perTrack / 8 + 4)
            events.append(TrackEvent(tick: 0, event: .meta(.text(.trackName, Array("Voice \(v + 1)".utf8)))))
            events.append(TrackEvent(tick: 0, event: .midi(.programChange(UInt7(random(0...127)), channel: channel))))
            var tick: UInt64 = 0
            for n in 0..<perTrack {
                tick += UInt64(random(0...120))
                let note = UInt7(random(36...96))
                events.append(TrackEvent(tick: tick, event: .midi(.noteOn(note, velocity: UInt7(random(1...127)), channel: channel))))
                if n % 16 == 0 {
                    events.append(TrackEvent(tick: tick, event: .midi(.cc(UInt7([1, 7, 10, 11, 64][random(0...4)]), value: UInt7(random(0...127)), channel: channel))))
                }
                if n % 32 == 0 {
                    events.append(TrackEvent(tick: tick, event: .midi(.pitchBend(UInt14(random(0...16383)), channel: channel))))
                }
                tick += UInt64(random(1...240))
                events.append(TrackEvent(tick: tick, event: .midi(.noteOn(note, velocity: 0, channel: channel))))
            }
            events.append(TrackEvent(tick: tick, event: .meta(.endOfTrack)))
            lastTick = max(lastTick, tick)
            voiceTracks.append(Track(events: events))
        }
        var t: UInt64 = 0
        while t < lastTick {
            conductor.append(TrackEvent(tick: t, event: .meta(.tempo(microsecondsPerQuarterNote: UInt32(random(300_000...900_000))))))
            t += 480 * 64
        }
        conductor.append(TrackEvent(tick: lastTick, event: .meta(.endOfTrack)))
        tracks.append(Track(events: conductor))
        tracks += voiceTracks
        return StandardMIDIFile(format: .multiTrack, division: .ticksPerQuarterNote(480), tracks: tracks)
    }

    static func generate(arguments: [String]) throws {
        guard let path = arguments.first else { throw BenchError("generate-smf needs an output path") }
        let notes = arguments.count > 1 ? Int(arguments[1]) ?? 1_000_000 : 1_000_000
        let bytes = makeFile(notes: notes).serialized()
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        print("wrote \(path): \(bytes.count) bytes, \(notes) notes")
    }

    /// Prints `carillon-parse <median seconds> <events> <bytes> <min seconds>` and the same for read + timeline.
    static func parse(arguments: [String]) throws {
        guard let path = arguments.first else { throw BenchError("parse needs a file") }
        let runs = arguments.count > 1 ? Int(arguments[1]) ?? 15 : 15
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        var events = 0
        let clock = ContinuousClock()
        func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18 }

        var parseTimes: [Double] = []
        for _ in 0...runs {   // the first run warms up and is dropped
            let start = clock.now
            let file = try StandardMIDIFile(bytes: bytes)
            parseTimes.append(seconds(clock.now - start))
            events = file.tracks.reduce(0) { $0 + $1.events.count }
            precondition(file.warnings.isEmpty)
        }
        var timelineTimes: [Double] = []
        for _ in 0...max(3, runs / 3) {
            let start = clock.now
            let file = try StandardMIDIFile(bytes: bytes)
            let timeline = file.timeline()
            timelineTimes.append(seconds(clock.now - start))
            precondition(timeline.count == events)
        }
        func report(_ name: String, _ times: [Double]) {
            let t = times.dropFirst().sorted()
            print("\(name) \(t[t.count / 2]) \(events) \(bytes.count) \(t.first!)")
        }
        report("carillon-parse", parseTimes)
        report("carillon-parse+timeline", timelineTimes)
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
