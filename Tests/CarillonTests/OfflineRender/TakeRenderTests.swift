import Controls
import Foundation
import MIDI
import MappingFiles
import OfflineRender
import Parameters
import SoundFile
import Testing

/// `render --mapping mappings/stage-piano.yaml --take`: a performance played
/// through the shipped stage rig offline — splits, layers, transposition and
/// velocity as its comments say, and a scene switched by program change in
/// the middle of a held chord without a stuck or a cut note.
@Suite struct TakeRenderTests {
    static let rig = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("mappings/stage-piano.yaml").path
    static let ppqn: UInt64 = 480   // 120 bpm: 960 ticks a second

    static func note(_ tick: UInt64, _ key: Int, _ velocity: Int, length: UInt64 = 40) -> [TrackEvent] {
        [TrackEvent(tick: tick, event: .midi(.noteOn(UInt7(key), velocity: UInt7(velocity), channel: 0))),
         TrackEvent(tick: tick + length, event: .midi(.noteOff(UInt7(key), channel: 0)))]
    }

    static func write(_ events: [TrackEvent], to path: String) {
        let tempo = TrackEvent(tick: 0, event: .meta(.tempo(microsecondsPerQuarterNote: 500_000)))
        let track = Track(events: [tempo] + events.sorted { $0.tick < $1.tick })
        let smf = StandardMIDIFile(format: .singleTrack, division: .ticksPerQuarterNote(UInt16(ppqn)), tracks: [track])
        FileManager.default.createFile(atPath: path, contents: Data(smf.serialized()))
    }

    static func render(_ input: String, in dir: String, take: Bool = true) throws -> RenderJob.Summary {
        var options = RenderJob.Options()
        options.sampleRate = 22_050
        options.labels = true
        options.threads = 2
        options.mapping = try ControlMapping.load(path: rig)
        options.take = take
        let job = try RenderJob(soundFont: timGM, options: options)
        return try job.render(input: input, to: .file("\(dir)/take.wav", format: .wav, encoding: .float32))
    }

    /// The velocity the Strings zone sends: `{ scale: 0.6, offset: 10 }`, rounded, within 1…127.
    static func strings(_ v: Int) -> Int { min(127, max(1, Int((Double(v) * 0.6 + 10).rounded()))) }

    @Test func everyKey_goesWhereTheRigSays() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Every key 0…127, one every 60 ms, velocities all over the range.
        var events: [TrackEvent] = []
        for key in 0..<128 { events += Self.note(UInt64(key) * 58, key, 1 + (key * 37) % 127) }
        Self.write(events, to: "\(dir)/keys.mid")
        let labels = try #require(try Self.render("\(dir)/keys.mid", in: dir).labels).notes
        for key in 0..<128 {
            let v = 1 + (key * 37) % 127
            let onset = Double(key * 58) / 960
            let here = labels.filter { abs($0.onset - onset) < 0.01 }
            if key < 48 {
                // Bass: channel 2, an octave up (a key pushed past G9 would be dropped: none here).
                #expect(here.map(\.channel) == [2] && here.first?.pitch == key + 12 && here.first?.velocity == v,
                        "key \(key): \(here.map { "ch\($0.channel) \($0.pitch)/\($0.velocity)" })")
                #expect(here.first?.program == 33, "key \(key): the bass's program")
            } else {
                // Piano on 1 as played, strings on 3 reshaped; the synth zone leaves Carillon.
                let piano = here.filter { $0.channel == 1 }, strings = here.filter { $0.channel == 3 }
                #expect(here.count == 2 && piano.first?.pitch == key && piano.first?.velocity == v
                        && strings.first?.pitch == key && strings.first?.velocity == Self.strings(v),
                        "key \(key) v\(v): \(here.map { "ch\($0.channel) \($0.pitch)/\($0.velocity)" })")
                #expect(piano.first?.program == 0 && strings.first?.program == 48)
            }
        }
        #expect(labels.count == 48 + 80 * 2)
    }

    @Test func sceneSwitch_whileAChordIsHeld_endsEveryNoteWhereItBegan() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // A split chord held across a program change on channel 16 ("Piano only": the whole
        // keyboard on the piano), released after it; then a low key, which now plays the piano.
        var events: [TrackEvent] = []
        for key in [36, 60, 64, 67] { events += Self.note(0, key, 100, length: 1920) }
        events.append(TrackEvent(tick: 960, event: .midi(.programChange(1, channel: 15))))
        events += Self.note(2400, 40, 90, length: 480)
        Self.write(events, to: "\(dir)/switch.mid")
        let summary = try Self.render("\(dir)/switch.mid", in: dir)
        let labels = try #require(summary.labels).notes
        let chord = labels.filter { $0.onset < 0.5 }
        // Held through the switch: bass on 2 (48), piano and strings on 1 and 3; each ends at its
        // own note-off (2 s), on the channel it began on — nothing cut at the switch, nothing held on.
        #expect(chord.count == 7, "\(chord.map { "ch\($0.channel) \($0.pitch)" })")
        for n in chord { #expect(abs(n.offset - 2.0) < 0.01, "ch\(n.channel) \(n.pitch) ends at \(n.offset)") }
        #expect(chord.contains { $0.channel == 2 && $0.pitch == 48 })
        // After the switch: key 40 plays the piano as played (the scene's zone), not the bass.
        let after = labels.filter { $0.onset > 2.4 }
        #expect(after.map(\.channel) == [1] && after.first?.pitch == 40, "\(after.map { "ch\($0.channel) \($0.pitch)" })")
        // Nothing sounds on after the last note-off (3 s) and its release: the render stops on silence.
        #expect(summary.duration < 3.0 + 4.0, "rendered \(summary.duration) s")
    }

    @Test func mappingWithoutTake_startsWithTheRigsPresets_andPlaysTheFileAsWritten() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        Self.write(Self.note(0, 36, 100) + Self.note(100, 72, 100), to: "\(dir)/plain.mid")
        let labels = try #require(try Self.render("\(dir)/plain.mid", in: dir, take: false).labels).notes
        // No zones without --take: both notes on channel 1, with the rig's piano (program 0).
        #expect(labels.map(\.channel) == [1, 1] && labels.map(\.pitch) == [36, 72] && labels.allSatisfy { $0.program == 0 })
    }
}

/// A momentary control pressed in a take falls back a block on (256 frames,
/// live's default period), as live's control loop has it; before, the take
/// left it pressed to the end.
@Suite struct TakeMomentaryTests {
    @Test func aMomentaryInATake_fallsBackABlockOn_andTheChangesStayInTimeOrder() throws {
        let mapping = try ControlMapping.parse(yaml: """
            controls:
              - { name: Kill, kind: momentary, source: { note: 36, channel: 10 }, targets: [strip.1.mute] }
              - { name: Level, kind: fader, source: { cc: 7 }, soft-takeover: false, targets: [strip.2.gain] }
            """)
        // 960 ticks a second: the press at 1 s, a fader move 1 ms later (before the release).
        let events = [TrackEvent(tick: 0, event: .meta(.tempo(microsecondsPerQuarterNote: 500_000))),
                      TrackEvent(tick: 960, event: .midi(.noteOn(36, velocity: 100, channel: 9))),
                      TrackEvent(tick: 961, event: .midi(.cc(7, value: 64, channel: 0))),
                      TrackEvent(tick: 1920, event: .midi(.noteOff(36, channel: 9)))]
        let file = StandardMIDIFile(format: .singleTrack, division: .ticksPerQuarterNote(480), tracks: [Track(events: events)])
        let take = try TakeRouting(file, hub: ControlHub(mapping: mapping), sampleRate: 48_000)
        let mute = take.changes.filter { $0.change.address == .strip(.channel(0), .mute) }
        #expect(mute.map(\.change.value) == [1, 0], "\(take.changes)")
        #expect(mute.count == 2 && abs(mute[0].seconds - 1) < 1e-9 && abs(mute[1].seconds - (1 + 256.0 / 48_000)) < 1e-9)
        #expect(take.changes.map(\.seconds) == take.changes.map(\.seconds).sorted())
    }
}
