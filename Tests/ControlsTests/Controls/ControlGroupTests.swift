import Controls
import Foundation
import MIDI
import MappingFiles
import Parameters
import Testing

/// How a page lays out a mapping's controls: `groups:` and `group:`, or by what
/// the controls drive; dials over switches over faders; the strip for the meter.
@Suite struct ControlGroupTests {
    @Test func withoutGroups_controlsGoWithWhatTheyDrive() throws {
        let mapping = try ControlMapping.parse(yaml: """
            controls:
              - { name: Fader 3, kind: fader, source: { cc: 2 }, targets: [strip.3.gain] }
              - { name: Play, kind: momentary, source: { cc: 41 }, targets: [transport.play] }
              - { name: Cutoff 3, kind: knob, source: { cc: 74 }, targets: [channel.3.cc.74] }
              - { name: Master, kind: fader, source: { cc: 7 }, targets: [master.gain] }
              - { name: Mute 3, kind: toggle, source: { cc: 50 }, targets: [strip.3.mute] }
              - { name: Detune, kind: knob, source: { cc: 20 }, targets: [osc.detune] }
              - { name: Osc level, kind: fader, source: { cc: 21 }, targets: [osc.level] }
              - { name: Stop, kind: momentary, source: { cc: 42 }, targets: [transport.stop] }
              - { name: Drums, kind: fader, source: { cc: 22 }, targets: [track.2.gain] }
            """, file: "m.yaml")
        let groups = ControlGroup.arrange(mapping.controls, order: mapping.groups)
        #expect(groups.map(\.name) == ["Channel 3", "Transport", "Master", "Oscillator", "Track 2"])
        #expect(groups[0].controls == ["Cutoff 3", "Mute 3", "Fader 3"])
        #expect(groups[0].strip == .channel(Channel(2)))
        let joystick = try ControlMapping.parse(yaml: """
            controls:
              - { name: Bend, kind: fader, group: Joystick, source: pitch-bend, targets: [channel.1.pitch-bend] }
            """, file: "m.yaml")
        #expect(ControlGroup.arrange(joystick.controls)[0].strip == nil, "a pitch-bend fader has no meter beside it")
        #expect(groups[1].isTransport && groups[1].controls == ["Play", "Stop"] && groups[1].strip == nil)
        #expect(groups[2].strip == nil && !groups[2].isTransport)
        #expect(groups[3].controls == ["Detune", "Osc level"] && groups[3].strip == .oscillator)
        #expect(groups[4].strip == .track(1))
        #expect(groups.flatMap(\.controls).sorted() == mapping.controls.map(\.name).sorted())
    }

    @Test func groupsInTheFilesOrder_andTheFadersStrip() throws {
        let mapping = try ControlMapping.parse(yaml: """
            groups: [Right, Left]
            controls:
              - { name: A, kind: fader, group: Left, source: { cc: 1 }, targets: [strip.1.gain] }
              - { name: B, kind: fader, group: Right, source: { cc: 2 }, targets: [strip.2.gain] }
              - { name: C, kind: knob, group: Right, source: { cc: 3 }, targets: [strip.5.pan] }
              - { name: D, kind: toggle, group: Left, source: { cc: 4 }, targets: [synth.reverb.enabled] }
              - { name: E, kind: knob, source: { cc: 5 }, targets: [strip.5.pan] }
            """, file: "m.yaml")
        #expect(mapping.groups == ["Right", "Left"])
        let groups = ControlGroup.arrange(mapping.controls, order: mapping.groups)
        #expect(groups.map(\.name) == ["Right", "Left", "Channel 5"])
        #expect(groups[0].controls == ["C", "B"] && groups[0].strip == .channel(Channel(1)))   // the fader's strip
        #expect(groups[1].controls == ["D", "A"] && groups[1].strip == .channel(Channel(0)))   // the reverb has no strip
        #expect(groups[2].strip == .channel(Channel(4)))   // a pan knob's
        #expect(groups[2].controls == ["E"])
    }

    @Test func groupMistakes_namedWithTheirPlace() {
        #expect(diagnostics("""
            groups: [Strip 1, Strip 2, Strip 1, Spare]
            controls:
              - name: A
                kind: fader
                group: Strip 1
                source: { cc: 1 }
                targets: [strip.1.gain]
              - name: B
                kind: fader
                group: Strp 2
                source: { cc: 2 }
                targets: [strip.2.gain]
              - name: C
                kind: fader
                group: ""
                source: { cc: 3 }
                targets: [strip.3.gain]
            """) == [
            "m.yaml:1:19: error: group 'Strip 2' has no control (give one 'group: Strip 2')",
            "m.yaml:1:28: error: group 'Strip 1' is listed twice",
            "m.yaml:1:37: error: group 'Spare' has no control (give one 'group: Spare')",
            "m.yaml:10:12: error: group 'Strp 2' is not in the file's 'groups:'; did you mean 'Strip 2'?",
            "m.yaml:15:12: error: a group name cannot be empty",
        ])
        #expect(diagnostics("""
            controls:
              - { name: P, kind: xy, targets-x: [tone.level] }
              - { name: P, kind: xy, targets-y: [osc.level] }
              - { name: Q, kind: fader, source: { cc: 1 }, targets: [master.gain] }
              - { name: Q, kind: xy, targets-x: [osc.detune], targets-y: [osc.level] }
              - { name: R, kind: xy, source: { cc: 2 }, targets: [tone.level] }
            """) == [
            "m.yaml:3:5: error: control name 'P' is already used at line 2",
            "m.yaml:5:5: error: control name 'Q' is already used at line 4",
            "m.yaml:6:5: error: xy pad 'R' needs 'targets-x' or 'targets-y'",
            "m.yaml:6:26: error: an xy pad has no MIDI source: it is played on the page (map a hardware XY pad's two CCs as two faders)",
            "m.yaml:6:45: error: 'targets' does not apply to an xy pad (it has targets-x, targets-y, targets-touch and group)",
        ])
        #expect(diagnostics("""
            groups: Strip 1
            controls:
              - { name: A, kind: fader, source: { cc: 1 }, targets: [strip.1.gain] }
            """) == ["m.yaml:1:9: error: expected a list of group names, found 'Strip 1'"])
    }

    @Test func nanoKONTROL2_eightStripsAsTheHardwareHasThem_thenTheTransport() throws {
        let mapping = try ControlMapping.load(path: mappingsFolder.appendingPathComponent("korg-nanokontrol2.yaml").path)
        let groups = ControlGroup.arrange(mapping.controls, order: mapping.groups)
        #expect(groups.map(\.name) == (1...8).map { "Strip \($0)" } + ["Transport"])
        for n in 1...8 {
            let g = groups[n - 1]
            #expect(g.controls == ["Knob \(n)", "Solo \(n)", "Mute \(n)"] + (n <= 3 ? ["Record \(n)"] : []) + ["Fader \(n)"])
            #expect(g.strip == .channel(Channel(UInt8(n - 1))))
        }
        #expect(groups[8].isTransport && groups[8].controls == ["Play", "Stop", "Cycle"])
    }
}
