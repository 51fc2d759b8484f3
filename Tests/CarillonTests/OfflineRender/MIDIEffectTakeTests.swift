import Controls
import Foundation
import MIDI
import MappingFiles
import OfflineRender
import Parameters
import Testing

/// A zone's `midi-fx` in `render --mapping … --take`: x42's MIDI filter
/// plugins (Debian's x42-plugins) run in the take's pass on the sample clock,
/// and the labels see what they sent.
@Suite(.serialized) struct MIDIEffectTakeTests {
    static let x42 = "http://gareus.org/oss/lv2/midifilter#"

    static func render(_ events: [TrackEvent], mapping yaml: String, in dir: String,
                       settings: [(String, Double)] = []) throws -> RenderJob.Summary {
        TakeRenderTests.write(events, to: "\(dir)/take.mid")
        try yaml.write(toFile: "\(dir)/rig.yaml", atomically: true, encoding: .utf8)
        var options = RenderJob.Options()
        options.sampleRate = 22_050
        options.labels = true
        options.threads = 1
        let mapping = try ControlMapping.load(path: "\(dir)/rig.yaml")
        options.mapping = mapping
        options.take = true
        // The plugins' parameters are registered by the job; a first job registers them for `settings`.
        if !settings.isEmpty {
            _ = try RenderJob(soundFont: timGM, options: options)
            options.host.settings = try settings.map { name, value in
                ParameterChange(try #require(ParameterAddress(name), "\(name) is a parameter"), Float(value))
            }
        }
        let job = try RenderJob(soundFont: timGM, options: options)
        return try job.render(input: "\(dir)/take.mid", to: .file("\(dir)/take.wav", format: .wav, encoding: .float32))
    }

    static func describe(_ labels: [RenderLabels.Note]) -> String {
        labels.map { "ch\($0.channel) \($0.pitch) \(String(format: "%.3f", $0.onset))–\(String(format: "%.3f", $0.offset))" }.joined(separator: ", ")
    }

    /// x42's MIDI Chord at its defaults (scale C major; prime, 3rd, 5th and
    /// octave on): each key becomes the triad of the scale on it with its octave, on the zone's channel.
    @Test func chord_playsTheScalesTriadOnTheZonesChannel() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let yaml = """
        channels:
          2: { program: 0 }
        zones:
          - { name: Chords, to: 2, midi-fx: ["\(Self.x42)midichord"] }
        """
        // C4 at 0 s, D4 at 0.5 s, each 0.25 s (960 ticks a second).
        let events = TakeRenderTests.note(0, 60, 100, length: 240) + TakeRenderTests.note(480, 62, 100, length: 240)
        let labels = try #require(try Self.render(events, mapping: yaml, in: dir).labels).notes
        let c = labels.filter { $0.onset < 0.25 }, d = labels.filter { $0.onset > 0.4 }
        #expect(c.map(\.pitch).sorted() == [60, 64, 67, 72], "\(Self.describe(labels))")   // C E G C
        #expect(d.map(\.pitch).sorted() == [62, 65, 69, 74], "\(Self.describe(labels))")   // D F A D: the scale's, not a major triad
        #expect(labels.allSatisfy { $0.channel == 2 }, "\(Self.describe(labels))")
        for n in c { #expect(abs(n.onset) < 0.002 && abs(n.offset - 0.25) < 0.002, "\(Self.describe([n]))") }
        for n in d { #expect(abs(n.onset - 0.5) < 0.002 && abs(n.offset - 0.75) < 0.002, "\(Self.describe([n]))") }
    }

    /// The zone's changes come first, then its plugins: the zone moves C4 a
    /// semitone up (C#4, not in C major), which Enforce Scale then discards
    /// (its default mode, "Discard") or moves up ("Always up": D4); B3 becomes C4 and passes.
    @Test func enforceScale_actsOnTheZonesTransposedKeys() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let yaml = """
        zones:
          - { name: Strict, keys: C-1..B4, to: 1, transpose: 1, midi-fx: ["\(Self.x42)enforcescale"] }
          - { name: Up, keys: C5..G9, to: 3, transpose: 1, midi-fx: ["\(Self.x42)enforcescale"] }
        """
        // B3, C4 in the Strict zone; C5 in the Up zone.
        let events = TakeRenderTests.note(0, 59, 100, length: 200) + TakeRenderTests.note(480, 60, 100, length: 200)
            + TakeRenderTests.note(960, 72, 100, length: 200)
        let labels = try #require(try Self.render(events, mapping: yaml, in: dir, settings: [("fx.up.1.mode", 2)]).labels).notes
        #expect(labels.map(\.pitch) == [60, 74] && labels.map(\.channel) == [1, 3], "\(Self.describe(labels))")
    }

    /// x42's Chromatic Transpose by its `transpose` control, set as a parameter (`fx.ZONE.K.SYMBOL`).
    @Test func transpose_movesKeysByItsParameter() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let yaml = """
        zones:
          - { name: Lift, to: 4, midi-fx: ["\(Self.x42)miditranspose"] }
        """
        let events = TakeRenderTests.note(0, 60, 100, length: 200) + TakeRenderTests.note(480, 67, 100, length: 200)
        let labels = try #require(try Self.render(events, mapping: yaml, in: dir, settings: [("fx.lift.1.transpose", -5)]).labels).notes
        #expect(labels.map(\.pitch) == [55, 62] && labels.allSatisfy { $0.channel == 4 }, "\(Self.describe(labels))")
    }

    static let scenes = """
    channels:
      2: { program: 0 }
      3: { program: 48 }
    controls:
      - name: Scene
        kind: selector
        source: { program-change: true, channel: 16 }
        values: [0, 1]
        targets: [scene.select]
    scenes:
      - name: Effect
        zones:
          - { name: FX, to: 2, midi-fx: [URI] }
      - name: Plain
        zones:
          - { name: Plain, to: 3 }
    """

    /// A key held across a scene switch ends, at its release, every note the
    /// chord plugin made for it; after the switch the new scene's zone plays plain.
    @Test func chordHeldAcrossASceneSwitch_releasesEveryNoteItMade() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var events = TakeRenderTests.note(0, 60, 100, length: 960)    // C4 held 0…1 s
        events.append(TrackEvent(tick: 480, event: .midi(.programChange(1, channel: 15))))   // scene 2 at 0.5 s
        events += TakeRenderTests.note(1440, 64, 100, length: 240)   // E4 at 1.5 s
        let yaml = Self.scenes.replacingOccurrences(of: "URI", with: "\"\(Self.x42)midichord\"")
        let labels = try #require(try Self.render(events, mapping: yaml, in: dir).labels).notes
        let chord = labels.filter { $0.onset < 0.1 }
        #expect(chord.map(\.pitch).sorted() == [60, 64, 67, 72] && chord.allSatisfy { $0.channel == 2 }, "\(Self.describe(labels))")
        for n in chord { #expect(abs(n.offset - 1.0) < 0.002, "ends at the key's release: \(Self.describe([n]))") }
        let after = labels.filter { $0.onset > 1.4 }
        #expect(after.map(\.pitch) == [64] && after.map(\.channel) == [3], "\(Self.describe(labels))")
    }

    /// Note Toggle keeps a note on after its key is up (the next press ends
    /// it): when the scene no longer uses the zone, the note ends there, not at the piece's end.
    @Test func noteAPluginHolds_endsWhenTheSceneSwitchesAway() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var events = TakeRenderTests.note(0, 62, 100, length: 240)    // D4 pressed 0…0.25 s: toggled on
        events.append(TrackEvent(tick: 960, event: .midi(.programChange(1, channel: 15))))   // scene 2 at 1 s
        events += TakeRenderTests.note(1920, 64, 100, length: 240)   // E4 at 2 s
        let yaml = Self.scenes.replacingOccurrences(of: "URI", with: "\"\(Self.x42)notetoggle\"")
        let labels = try #require(try Self.render(events, mapping: yaml, in: dir).labels).notes
        let toggled = labels.filter { $0.pitch == 62 }
        #expect(toggled.count == 1 && toggled.first?.channel == 2, "\(Self.describe(labels))")
        // Held by the plugin past the key's release, ended at the switch.
        #expect(toggled.allSatisfy { abs($0.offset - 1.0) < 0.002 }, "\(Self.describe(labels))")
    }

    /// x42's N-Tap Delay on its own clock (`bpmsrc` 0: its BPM control, 120;
    /// a repeat every half beat, three repeats, each 10 softer: its `velocityadj`
    /// default): the echoes come at their sample times, after the key is up. And
    /// the take renders to the same bytes twice.
    @Test func nTapDelay_echoesAtItsSampleTimes_andRendersTheSameTwice() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let yaml = """
        zones:
          - { name: Echo, to: 1, midi-fx: ["\(Self.x42)ntapdelay"] }
        """
        let events = TakeRenderTests.note(0, 60, 100, length: 96) + TakeRenderTests.note(1920, 62, 1, length: 10)
        let settings = [("fx.echo.1.bpmsrc", 0.0), ("fx.echo.1.delayBeats", 0.5), ("fx.echo.1.taps", 3)]
        let labels = try #require(try Self.render(events, mapping: yaml, in: dir, settings: settings).labels).notes.filter { $0.pitch == 60 }
        #expect(labels.count == 4, "\(Self.describe(labels))")
        for (k, n) in labels.enumerated() {
            #expect(abs(n.onset - 0.25 * Double(k)) < 0.0035 && abs(n.offset - n.onset - 0.1) < 0.0035 && n.velocity == 100 - 10 * k,
                    "\(k): \(Self.describe([n])) v\(n.velocity)")
        }
        let first = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/take.wav"))
        _ = try Self.render(events, mapping: yaml, in: dir, settings: settings)
        #expect(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/take.wav")) == first)
    }
}
