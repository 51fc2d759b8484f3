import ControlDefinitions
import Controls
import Foundation
import MIDI
import MappingFiles
import Parameters
import Testing

/// MIDI learn on the hub: the next message that moves binds, the file gains
/// the binding, the mapping with it is swapped in.
@Suite struct MIDILearnTests {
    static let text = """
        # Learn test: this comment stays.
        name: Learn test
        controls:
          - name: Level          # the strip's gain
            kind: knob
            source: { cc: 7 }
            soft-takeover: false
            targets: [strip.1.gain]
          - name: Pan
            kind: knob
            source: { cc: 10 }
            targets: [strip.1.pan]
        """

    /// A hub on a mapping file in a scratch folder, and what its observers heard.
    final class Fixture: @unchecked Sendable {
        let dir: String, path: String, hub: ControlHub
        let lock = NSLock()
        var events: [LearnEvent] = []
        var changes: [ParameterChange] = []

        init(_ text: String = MIDILearnTests.text) throws {
            dir = NSTemporaryDirectory() + "carillon-learn-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            path = dir + "/m.yaml"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            hub = ControlHub(mapping: try ControlMapping.load(path: path))
            hub.observeLearn { [unowned self] e in lock.withLock { events.append(e) } }
            hub.subscribe { [unowned self] c in lock.withLock { changes.append(c) } }
        }
        deinit { try? FileManager.default.removeItem(atPath: dir) }

        var file: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        var bound: LearnedBinding? {
            lock.withLock { events.compactMap { if case .bound(let b) = $0 { b } else { nil } }.last }
        }
        var failure: String? {
            lock.withLock { events.compactMap { if case .failed(_, let why) = $0 { why } else { nil } }.last }
        }
        func ticks(_ n: Int = 2) { for _ in 0..<n { hub.tick() } }
    }

    @Test func learn_repeatedValue_doesNotBind_aMovingCCDoes() throws {
        let f = try Fixture()
        _ = f.hub.receive(cc(21, 40))                 // the controller's last value, before arming
        try f.hub.learn(.control("Level"))
        #expect(f.hub.learning == .control("Level"))
        #expect(!f.hub.receive(cc(21, 40)))           // a repeat: not learn's, not a control's
        f.ticks()
        #expect(f.hub.learning == .control("Level"))
        #expect(f.bound == nil)
        #expect(f.hub.receive(cc(21, 41)))            // it moved: learn takes it
        f.ticks()
        let bound = try #require(f.bound)
        #expect(bound.control == "Level")
        #expect(bound.source == ControlSource(.cc(UInt7(21)), channel: Channel(0)))
        #expect(f.hub.learning == nil)
        #expect(f.file.contains("    source: { cc: 21, channel: 1 }\n"))
        #expect(f.file.contains("# Learn test: this comment stays."))
        #expect(f.file.contains("  - name: Level          # the strip's gain\n"))
        // The swapped-in mapping: CC 21 drives the strip, CC 7 no longer does.
        #expect(f.hub.mapping?.controls.first?.source == bound.source)
        f.changes.removeAll()
        #expect(!f.hub.receive(cc(7, 0)))
        #expect(f.hub.receive(cc(21, 0)))
        #expect(f.hub.value(of: .strip(.channel(0), .gain)) == ParameterRegistry.standard.info(for: .strip(.channel(0), .gain)).range.lowerBound)
        #expect(f.changes.contains { $0.address == .strip(.channel(0), .gain) })
    }

    @Test func learn_parameterWithoutControl_createsAKnobThatDrivesIt() throws {
        let f = try Fixture()
        try f.hub.learn(.parameter(.reverb(.level)))
        #expect(f.hub.receive(cc(74, 90, ch: 2)))     // CC 64–127 cannot be half of a pair: binds at once
        let bound = try #require(f.bound)
        #expect(bound.created)
        #expect(bound.control == "synth.reverb.level")
        #expect(f.file.hasSuffix("""
                targets: [strip.1.pan]
              - name: synth.reverb.level
                kind: knob
                source: { cc: 74, channel: 2 }
                targets: [synth.reverb.level]
            """))
        let knob = try #require(f.hub.controlStates.last)
        #expect(knob.name == "synth.reverb.level")
        #expect(knob.kind == .knob)
        // Soft takeover: the knob picks the value up when the hardware crosses it.
        _ = f.hub.receive(cc(74, 0, ch: 2))
        _ = f.hub.receive(cc(74, 127, ch: 2))
        #expect(f.hub.value(of: .reverb(.level)) == ParameterRegistry.standard.info(for: .reverb(.level)).range.upperBound)
    }

    @Test func learn_parameterDrivenByAControl_rebindsThatControl() throws {
        let f = try Fixture()
        try f.hub.learn(.parameter(.strip(.channel(0), .pan)))
        _ = f.hub.receive(cc(80, 1))
        #expect(f.bound?.control == "Pan")
        #expect(f.bound?.created == false)
        #expect(f.hub.mapping?.controls.count == 2)
    }

    @Test func learn_14BitPair_bindsCC14_eitherOrder() throws {
        let f = try Fixture()
        try f.hub.learn(.control("Level"))
        _ = f.hub.receive(cc(1, 64))
        _ = f.hub.receive(cc(33, 0))
        #expect(f.bound?.source == ControlSource(.cc14(msb: UInt7(1), order: .auto), channel: Channel(0)))
        try f.hub.learn(.control("Pan"))
        _ = f.hub.receive(cc(34, 5))                   // LSB first
        _ = f.hub.receive(cc(2, 9))
        #expect(f.bound?.source == ControlSource(.cc14(msb: UInt7(2), order: .auto), channel: Channel(0)))
        #expect(f.file.contains("source: { cc14: 2, channel: 1 }"))
    }

    @Test func learn_nrpn_14BitWhenTheLSBFollows() throws {
        let f = try Fixture()
        try f.hub.learn(.control("Level"))
        for m in [cc(99, 3), cc(98, 17), cc(6, 64), cc(38, 5)] { #expect(f.hub.receive(m)) }
        #expect(f.bound?.source == ControlSource(.nrpn(UInt14(msb: UInt7(3), lsb: UInt7(17)), bits: 14), channel: Channel(0)))
        #expect(f.file.contains("source: { nrpn: [3, 17], channel: 1 }"))
    }

    @Test func learn_note_noteOffDoesNotBind_noteOnMakesAToggleForMute() throws {
        let f = try Fixture()
        try f.hub.learn(.parameter(.strip(.channel(0), .mute)))
        _ = f.hub.receive(.noteOff(UInt7(36), velocity: UInt7(0), channel: Channel(9)))
        _ = f.hub.receive(.noteOn(UInt7(36), velocity: UInt7(0), channel: Channel(9)))   // a note-off too
        f.ticks()
        #expect(f.bound == nil)
        #expect(f.hub.receive(.noteOn(UInt7(36), velocity: UInt7(100), channel: Channel(9))))
        #expect(f.bound?.source == ControlSource(.note(UInt7(36)), channel: Channel(9)))
        #expect(f.hub.controlStates.last?.kind == .toggle)
        _ = f.hub.receive(.noteOn(UInt7(36), velocity: UInt7(100), channel: Channel(9)))
        #expect(f.hub.value(of: .strip(.channel(0), .mute)) == 1)
    }

    @Test func learn_sourceUsedByAnotherControl_failsAndLeavesTheFile() throws {
        let f = try Fixture()
        let before = f.file
        try f.hub.learn(.control("Level"))
        _ = f.hub.receive(cc(10, 99))                 // Pan's CC
        f.ticks()
        let why = try #require(f.failure)
        #expect(why.contains("m.yaml:"), "\(why)")    // file:line:column, as mapping check says it
        #expect(why.contains("CC 10 on any channel is already used by control 'Level'"), "\(why)")
        #expect(f.file == before)
        #expect(f.hub.mapping?.controls.first?.source == ControlSource(.cc(UInt7(7))))
    }

    @Test func learn_unknownControlOrNoMapping_isRefused() throws {
        let f = try Fixture()
        #expect(throws: LearnError.unknownControl("Nope")) { try f.hub.learn(.control("Nope")) }
        #expect(throws: LearnError.noMapping) { try ControlHub(mapping: nil).learn(.parameter(.masterGain)) }
    }

    @Test func cancelLearn_disarms_andMessagesGoToTheControlsAgain() throws {
        let f = try Fixture()
        try f.hub.learn(.control("Level"))
        f.hub.cancelLearn()
        #expect(f.hub.learning == nil)
        #expect(f.hub.receive(cc(7, 3)))               // Level's own CC, as before
        f.ticks()
        #expect(f.bound == nil)
    }
}
