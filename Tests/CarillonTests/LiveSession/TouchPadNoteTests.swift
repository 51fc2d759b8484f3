import ControlDefinitions
import Hosting
import Controls
import Engine
import MIDI
import MappingFiles
import Parameters
import Testing

/// An xy pad on a channel's notes, from the hub to what the instrument hears:
/// touch-down plays the pad's pitch, a move to another pitch is a new note,
/// lifting the finger ends it, and a reload lets go of a held pad.
@Suite struct TouchPadNoteTests {
    static let yaml = """
        controls:
          - name: Touch
            kind: xy
            targets-x: [{ address: channel.2.note, range: [48, 72] }]
            targets-y: [channel.2.cc.11]
            targets-touch: [tone.enabled]
        """

    /// Keeps what it is sent.
    final class Listening: Instrument {
        let stripCount = 16
        var heard: [ChannelMessage] = []
        func prepare(sampleRate: Double, maxFrames: Int) {}
        func receive(_ message: ChannelMessage) { heard.append(message) }
        func render(frames: Int, dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                    effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {}
        func silence() {}
    }

    @Test func mapping_readsThePadAsItsParts() throws {
        let mapping = try ControlMapping.parse(yaml: Self.yaml, file: "m.yaml")
        #expect(mapping.controls.map(\.name) == ["Touch x", "Touch y", "Touch touch"])
        #expect(mapping.controls.map(\.kind) == [.fader, .fader, .button])
        #expect(mapping.controls.allSatisfy { $0.source == nil && $0.pad?.name == "Touch" && $0.group == "Channel 2" })
        #expect(mapping.controls.map { $0.pad?.part } == [.x, .y, .touch])
        // The note's gate comes with the note; the file's touch targets after it.
        #expect(mapping.controls[2].targets.map(\.address) == [.channelGate(Channel(1)), .tone(.enabled)])
        #expect(mapping.controls[0].targets.first?.range == ValueRange(48, 72))
        #expect(ControlGroup.arrange(mapping.controls).count == 1)
        // Its parts have no source a learned binding could be written to.
        let hub = ControlHub(mapping: mapping)
        #expect(throws: LearnError.padPart("Touch x", pad: "Touch")) { try hub.learn(.control("Touch x")) }
    }

    @Test func touchMoveAndLift_areNoteOnNewNoteAndNoteOff() throws {
        let hub = ControlHub(mapping: try ControlMapping.parse(yaml: Self.yaml, file: "m.yaml"))
        let instrument = Listening()
        let renderer = Renderer(instrument: instrument)
        renderer.prepare(sampleRate: 48_000, maxFrames: 480)
        let routing = ParameterRouting(parameters: renderer.parameters, events: EventQueueProducer(renderer.events), transport: nil)
        _ = hub.subscribe { routing.apply($0) }
        var buffer = [Float](repeating: 0, count: 2 * 480)
        func heard() -> [String] {
            buffer.withUnsafeMutableBufferPointer { renderer.render(frames: 480, into: $0) }
            defer { instrument.heard.removeAll() }
            return instrument.heard.filter { $0.kind == 0x80 || $0.kind == 0x90 }.map { "\($0.kind == 0x90 ? "on" : "off") \($0.data1) ch\($0.channel + 1)" }
        }
        _ = heard()
        // A move before the touch sounds nothing; the touch plays the pitch under the finger.
        #expect(hub.setControl("Touch x", to: 60))
        #expect(heard() == [])
        #expect(hub.setControl("Touch touch", to: 1))
        #expect(heard() == ["on 60 ch2"])
        #expect(hub.value(of: .tone(.enabled)) == 1)
        // Sliding within one semitone keeps the note; to another pitch it is a new note.
        #expect(hub.setControl("Touch x", to: 60.3))
        #expect(heard() == [])
        #expect(hub.setControl("Touch x", to: 67))
        #expect(heard() == ["off 60 ch2", "on 67 ch2"])
        // The y axis is expression, no note.
        #expect(hub.setControl("Touch y", to: 90))
        #expect(heard() == [])
        #expect(hub.setControl("Touch touch", to: 0))
        #expect(heard() == ["off 67 ch2"])
        #expect(hub.value(of: .tone(.enabled)) == 0)
        // A reload while the pad is held lets go of the note.
        #expect(hub.setControl("Touch touch", to: 1))
        #expect(heard() == ["on 67 ch2"])
        _ = hub.replace(mapping: try ControlMapping.parse(yaml: "controls: []", file: "m.yaml"))
        #expect(heard() == ["off 67 ch2"])
    }
}
