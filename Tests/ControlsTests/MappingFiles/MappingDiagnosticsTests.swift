import ControlDefinitions
import Controls
import MappingFiles
import Testing

/// The diagnostics for `yaml`, as printed; empty when it loads.
func diagnostics(_ yaml: String) -> [String] {
    do {
        _ = try ControlMapping.parse(yaml: yaml, file: "m.yaml")
        return []
    } catch {
        return error.diagnostics.map(\.description)
    }
}

@Suite struct MappingDiagnosticsTests {
    @Test func severalMistakes_allReportedWithLineAndColumn() {
        let yaml = """
            name: Broken
            chanel: 1
            controls:
              - name: A
                kind: fader
                source: { cc: 130 }
                targets: [master.gian]
              - name: B
                kind: knobb
                source: { cc: 7, channel: 17 }
                targets: [strip.1.gain]
                curv: linear
              - name: C
                kind: fader
                source: { cc: 7 }
                targets: [strip.2.gain]
              - name: D
                kind: fader
                source: { cc: 7 }
                targets: [strip.3.gain]
            """
        #expect(diagnostics(yaml) == [
            "m.yaml:2:1: error: unknown key 'chanel' in the mapping file; did you mean 'channel'?",
            "m.yaml:6:19: error: controller 130 is out of range 0...127",
            "m.yaml:7:15: error: unknown target 'master.gian'; did you mean 'master.gain'?",
            "m.yaml:9:11: error: unknown control kind 'knobb'; did you mean 'knob'?",
            "m.yaml:10:31: error: channel 17 is out of range 1...16",
            "m.yaml:12:5: error: unknown key 'curv' in a control; did you mean 'curve'?",
            "m.yaml:19:13: error: CC 7 on any channel is already used by control 'C' (line 15)",
        ])
    }

    @Test func wrongTypes_sayWhatWasExpected() {
        let yaml = """
            controls:
              - name: A
                kind: fader
                source: { cc: seven }
                steps: 2.5
                invert: 3
                range: 5
                targets: master.gain
            """
        #expect(diagnostics(yaml) == [
            "m.yaml:4:19: error: expected an integer (controller), found 'seven'",
            "m.yaml:5:12: error: steps must be a whole number, found 2.5",
            "m.yaml:6:13: error: expected true or false (invert), found an integer",
            "m.yaml:7:12: error: expected a list of two numbers [from, to] (range), found an integer",
        ])
    }

    @Test func missingKeys_pointAtTheControl() {
        let yaml = """
            controls:
              - name: A
                source: { cc: 1 }
              - kind: knob
                source: { cc: 2 }
                targets: [master.gain]
              - name: C
                kind: toggle
            """
        #expect(diagnostics(yaml) == [
            "m.yaml:2:5: error: missing key 'kind' in control 'A'",
            "m.yaml:4:5: error: missing key 'name' in a control",
            "m.yaml:7:5: error: missing key 'source' in control 'C'",
            "m.yaml:7:5: error: missing key 'targets' in control 'C'",
        ])
    }

    @Test func outOfRangeNumbers_inTargetsDefaultsAndShapes() {
        let yaml = """
            controls:
              - name: A
                kind: fader
                source: { cc: 1 }
                default: 9
                targets:
                  - { address: master.gain, range: [-80, 0] }
                  - { address: strip.1.gain }
              - name: B
                kind: knob
                source: { nrpn: [128, 0], bits: 9 }
                curve: s-curve
                shape: 30
                targets: [channel.17.cc.1]
            """
        #expect(diagnostics(yaml) == [
            "m.yaml:5:14: error: default 9 is out of the control's range -60...6",
            "m.yaml:7:40: error: range -80...0 is outside master.gain's range -60...6",
            "m.yaml:11:22: error: nrpn MSB 128 is out of range 0...127",
            "m.yaml:11:37: error: bits must be 7 or 14, found 9",
            "m.yaml:13:12: error: an s-curve needs a shape in 1...20",
            "m.yaml:14:15: error: unknown target 'channel.17.cc.1'; did you mean 'channel.1.cc.1'?",
        ])
    }

    @Test func twoControlsOnOneSource_overlapsAreFound() {
        let yaml = """
            channel: 2
            controls:
              - { name: Fine, kind: fader, source: { cc14: 1 }, targets: [master.gain] }
              - { name: Coarse, kind: fader, source: { cc: 33 }, targets: [strip.1.gain] }
              - { name: Other channel, kind: fader, source: { cc: 1, channel: 3 }, targets: [strip.2.gain] }
              - { name: Param, kind: knob, source: { nrpn: 5 }, targets: [strip.3.pan] }
              - { name: Data, kind: knob, source: { cc: 6, channel: any }, targets: [strip.4.pan] }
              - { name: Fine, kind: button, source: { note: 1 }, targets: [strip.5.mute] }
            """
        #expect(diagnostics(yaml) == [
            "m.yaml:4:42: error: CC 33 on channel 2 is already used by control 'Fine' (line 3)",
            "m.yaml:7:39: error: CC 6 is an NRPN/RPN controller, and control 'Param' (line 6) uses NRPN/RPN on the same channel",
            "m.yaml:8:5: error: control name 'Fine' is already used at line 3",
        ])
    }

    @Test func nrpnAfterAPlainDataEntryCC_isAConflict() {
        let yaml = """
            controls:
              - { name: Data, kind: knob, source: { cc: 38, channel: 1 }, targets: [strip.4.pan] }
              - { name: Param, kind: knob, source: { rpn: 0 }, targets: [strip.3.pan] }
            """
        #expect(diagnostics(yaml) == [
            "m.yaml:3:40: error: CC 38 is an NRPN/RPN controller, and control 'Data' (line 2) uses CC 38 on the same channel"
        ])
    }

    @Test func kindSpecificKeys_areRejectedElsewhere() {
        let yaml = """
            controls:
              - name: A
                kind: fader
                source: { cc: 1 }
                encoding: offset-64
                targets: [master.gain]
              - name: B
                kind: encoder
                source: { note: 1 }
                encoding: offset64
                targets: [master.gain]
              - name: C
                kind: readout
                source: { cc: 3 }
                shows: transport.temp
            """
        #expect(diagnostics(yaml) == [
            "m.yaml:5:5: error: 'encoding' applies to encoders only, not to a fader",
            "m.yaml:9:13: error: an encoder cannot read note 1 (encoders read cc, nrpn or rpn)",
            "m.yaml:10:15: error: unknown encoding 'offset64'; did you mean 'offset-64'? (one of twos-complement, sign-magnitude, offset-64)",
            "m.yaml:14:5: error: a readout has no MIDI source; the engine sets it",
            "m.yaml:15:12: error: unknown target 'transport.temp'; did you mean 'transport.tempo'?",
        ])
    }

    @Test func yamlSyntaxError_isOneDiagnosticAtItsMark() {
        let d = diagnostics("controls:\n  - name: [A\n    kind: fader\n")
        #expect(d.count == 1)
        #expect(d.first?.hasPrefix("m.yaml:") == true)
        #expect(d.first?.contains("error: invalid YAML") == true)
    }

    @Test func duplicateKey_isReported() {
        let d = diagnostics("controls: []\ncontrols: []\n")
        #expect(d == ["m.yaml:1:1: error: duplicate key 'controls' in one mapping"])
    }

    @Test func emptyFileAndWrongTopLevel() {
        #expect(diagnostics("") == ["m.yaml:1:1: error: the file is empty; expected a mapping with 'controls'"])
        #expect(diagnostics("- 1\n") == ["m.yaml:1:1: error: expected a mapping (the mapping file), found a list"])
        #expect(diagnostics("name: x\n") == ["m.yaml:1:1: error: missing key 'controls' (or 'zones')"])
    }

    @Test func errors_meanNoMappingAtAll() {
        let yaml = """
            controls:
              - { name: Good, kind: fader, source: { cc: 1 }, targets: [master.gain] }
              - { name: Bad, kind: fader, source: { cc: 2 }, targets: [nowhere] }
            """
        #expect(throws: MappingError.self) { try ControlMapping.parse(yaml: yaml) }
    }

    @Test func unreadableFile_isADiagnosticWithoutLine() {
        #expect(throws: MappingError.self) { try ControlMapping.load(path: "/nonexistent/x.yaml") }
        do {
            _ = try ControlMapping.load(path: "/nonexistent/x.yaml")
        } catch {
            #expect(error.description.hasPrefix("/nonexistent/x.yaml: error: cannot read the file"))
        }
    }

    @Test func check_reportsAndExplains() throws {
        let files = mappingFiles()
        let ok = MappingCheck.run(files: files, explain: true)
        #expect(!ok.failed)
        #expect(ok.errors.isEmpty)
        #expect(ok.output.contains("CONTROL"))
        #expect(ok.output.contains("strip.1.gain"))
        let bad = MappingCheck.run(files: files + ["/nonexistent.yaml"], explain: false)
        #expect(bad.failed)
        #expect(bad.errors.contains("/nonexistent.yaml: error:"))
    }
}

@Suite struct MappingEachChannelTests {
    @Test func eachChannel_repeatsTheControlPerChannel() throws {
        let mapping = try ControlMapping.parse(yaml: """
            controls:
              - name: Volume
                kind: fader
                source: { cc: 7, channel: each }
                targets: [channel.*.cc.7, { address: strip.*.gain, range: [-30, 0] }, master.gain]
            """)
        #expect(mapping.controls.count == 16)
        #expect(mapping.controls[4].name == "Volume (ch 5)")
        #expect(mapping.controls[4].source == ControlSource(.cc(7), channel: 4))
        #expect(mapping.controls[4].targets.map(\.address) == [.channelCC(4, 7), .strip(.channel(4), .gain), .masterGain])
        let surface = ControlSurface(mapping: mapping)
        let r = Recorder(surface)
        surface.receive(cc(7, 0, ch: 12))
        #expect(r.values(.channelCC(11, 7)) == [0])
        #expect(r.values(.strip(.channel(11), .gain)) == [-30])
        #expect(r.changes.count == 3)
    }

    @Test func wildcard_needsEachChannel() {
        let yaml = """
            controls:
              - name: V
                kind: fader
                source: { cc: 7, channel: 1 }
                targets: [channel.*.cc.7]
              - name: W
                kind: fader
                source: { cc: 8, channel: each }
                targets: [channel.1.cc.*]
            """
        #expect(diagnostics(yaml) == [
            "m.yaml:5:15: error: '*' in 'channel.*.cc.7' stands for the source's channel; it needs 'channel: each' in the source",
            "m.yaml:9:15: error: '*' may only stand for the channel, as in strip.*.gain or channel.*.cc.7",
        ])
    }

    @Test func eachChannel_conflictsWithASingleChannel() {
        let yaml = """
            controls:
              - { name: All, kind: fader, source: { cc: 7, channel: each }, targets: [channel.*.cc.7] }
              - { name: One, kind: fader, source: { cc: 7, channel: 3 }, targets: [master.gain] }
            """
        #expect(diagnostics(yaml) == ["m.yaml:3:39: error: CC 7 on channel 3 is already used by control 'All (ch 3)' (line 2)"])
    }
}

@Suite struct MappingConflictWithMistakesTests {
    @Test func brokenControl_stillCountsForDuplicates() {
        let yaml = """
            controls:
              - { name: A, kind: fadr, source: { cc: 7 }, targets: [master.gain] }
              - { name: A, kind: fader, source: { cc: 7 }, targets: [strip.1.gain] }
            """
        #expect(diagnostics(yaml) == [
            "m.yaml:2:22: error: unknown control kind 'fadr'; did you mean 'fader'?",
            "m.yaml:3:5: error: control name 'A' is already used at line 2",
            "m.yaml:3:37: error: CC 7 on any channel is already used by control 'A' (line 2)",
        ])
    }
}
