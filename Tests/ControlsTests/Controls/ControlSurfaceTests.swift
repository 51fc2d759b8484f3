import ControlDefinitions
import Controls
import MIDI
import Parameters
import Testing

@Suite struct ControlSurfaceKindTests {
    @Test func fader_movesItsTargetAcrossTheParameterRange() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Vol", kind: .fader, source: .init(.cc(7), channel: 0),
                              targets: [.init(.strip(.channel(0), .gain))], softTakeover: false)
        ])
        let r = Recorder(s)
        s.receive(cc(7, 127))
        s.receive(cc(7, 0))
        #expect(r.values(.strip(.channel(0), .gain)) == [6, -60])
        #expect(s.state(named: "Vol")?.display == "-inf dB")
        s.receive(cc(7, 127, ch: 2))  // another channel: not this control
        #expect(r.changes.count == 2)
    }

    @Test func fader_onAnyChannel() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Any", kind: .knob, source: .init(.cc(20)), targets: [.init(.masterGain)],
                              softTakeover: false)
        ])
        let r = Recorder(s)
        for ch in 1...16 { s.receive(cc(20, ch * 7, ch: ch)) }
        #expect(r.changes.count == 16)
    }

    @Test func encoder_twosComplementStepsFromTheDefault() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Enc", kind: .encoder, source: .init(.cc(16), channel: 0),
                              range: ValueRange(0, 127), targets: [.init(.channelCC(0, 74))])
        ])
        let r = Recorder(s)
        s.receive(cc(16, 1)); s.receive(cc(16, 1)); s.receive(cc(16, 127))
        #expect(r.values(.channelCC(0, 74)) == [1, 2, 1])
        s.receive(cc(16, 127)); s.receive(cc(16, 127))  // stops at 0
        #expect(s.state(named: "Enc")?.value == 0)
    }

    @Test func encoder_signMagnitudeAndOffset64() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "A", kind: .encoder, source: .init(.cc(1), channel: 0), range: ValueRange(0, 127),
                              targets: [.init(.channelCC(0, 1))], encoding: .signMagnitude),
            ControlDefinition(name: "B", kind: .encoder, source: .init(.cc(2), channel: 0), range: ValueRange(0, 127),
                              targets: [.init(.channelCC(0, 2))], encoding: .offset64),
        ])
        s.receive(cc(1, 5)); s.receive(cc(1, 66))
        #expect(approx(s.state(named: "A")!.value, 3))
        s.receive(cc(2, 67)); s.receive(cc(2, 63)); s.receive(cc(2, 0))
        #expect(approx(s.state(named: "B")!.value, 2))
    }

    @Test func encoder_accelerationGrowsBigSteps() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "E", kind: .encoder, source: .init(.cc(3), channel: 0), range: ValueRange(0, 1000),
                              targets: [.init(.tone(.frequency), range: ValueRange(20, 1020))],
                              encoderResolution: 1000, acceleration: 1),
        ])
        s.receive(cc(3, 1))
        #expect(approx(s.state(named: "E")!.value, 1))
        s.receive(cc(3, 3))  // 3^(1+1) = 9 steps
        #expect(approx(s.state(named: "E")!.value, 10))
    }

    @Test func toggle_flipsOnPressOnly() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Mute", kind: .toggle, source: .init(.cc(48), channel: 0),
                              targets: [.init(.strip(.channel(0), .mute))])
        ])
        let r = Recorder(s)
        s.receive(cc(48, 127)); s.receive(cc(48, 0)); s.receive(cc(48, 127)); s.receive(cc(48, 0))
        #expect(r.values(.strip(.channel(0), .mute)) == [1, 0])
        #expect(s.state(named: "Mute")?.display == "off")
    }

    @Test func toggle_followsADeviceThatLatches() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "T", kind: .toggle, source: .init(.cc(48), channel: 0),
                              targets: [.init(.transport(.loop))], followsValue: true)
        ])
        let r = Recorder(s)
        s.receive(cc(48, 127)); s.receive(cc(48, 0))
        #expect(r.values(.transport(.loop)) == [1, 0])
    }

    @Test func button_isOnWhileHeld() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Solo", kind: .button, source: .init(.note(40), channel: 0),
                              targets: [.init(.strip(.channel(2), .solo))])
        ])
        let r = Recorder(s)
        s.receive(.noteOn(40, velocity: 100, channel: 0))
        #expect(s.state(named: "Solo")?.display == "on")
        s.receive(.noteOn(40, velocity: 0, channel: 0))
        s.receive(.noteOn(40, velocity: 90, channel: 0))
        s.receive(.noteOff(40, channel: 0))
        #expect(r.values(.strip(.channel(2), .solo)) == [1, 0, 1, 0])
    }

    @Test func momentary_isOneForOneBlock() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Play", kind: .momentary, source: .init(.cc(41), channel: 0),
                              targets: [.init(.transport(.play))])
        ])
        let r = Recorder(s)
        s.receive(cc(41, 127))
        #expect(r.values(.transport(.play)) == [1])
        s.receive(cc(41, 0))  // release does nothing by itself
        #expect(r.values(.transport(.play)) == [1])
        s.tick()
        #expect(r.values(.transport(.play)) == [1, 0])
        s.tick()  // nothing pending
        #expect(r.changes.count == 2)
        s.receive(cc(41, 127)); s.tick()
        #expect(r.values(.transport(.play)) == [1, 0, 1, 0])
    }

    @Test func pad_sendsVelocityThenZero() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Pad", kind: .pad, source: .init(.note(36), channel: 9),
                              targets: [.init(.strip(.tone, .gain))])
        ])
        let r = Recorder(s)
        s.receive(.noteOn(36, velocity: 127, channel: 9))
        s.receive(.noteOff(36, channel: 9))
        #expect(r.values(.strip(.tone, .gain)) == [0, -60])
    }

    @Test func selector_programChangeSelectsAStepValue() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Sound", kind: .selector, source: .init(.programChange, channel: 0),
                              targets: [.init(.channelProgram(0))], selectorValues: [0, 24, 40, 73])
        ])
        let r = Recorder(s)
        s.receive(.programChange(2, channel: 0))
        s.receive(.programChange(99, channel: 0))  // past the end: the last step
        #expect(r.values(.channelProgram(0)) == [40, 73])
    }

    @Test func selector_splitsACCIntoSteps() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Wave", kind: .selector, source: .init(.cc(70), channel: 0),
                              shaping: Shaping(steps: 4), targets: [.init(.tone(.waveform))])
        ])
        let r = Recorder(s)
        for v in [0, 31, 32, 64, 96, 127] { s.receive(cc(70, v)) }
        #expect(r.values(.tone(.waveform)) == [1, 2, 3])  // 0 and 31 stay at the default 0
        #expect(s.state(named: "Wave")?.display == "3")
    }

    @Test func selector_stepsOnEachPressOfANote() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Next", kind: .selector, source: .init(.note(60), channel: 0),
                              targets: [.init(.tone(.waveform))], selectorValues: [0, 1, 2, 3])
        ])
        let r = Recorder(s)
        for _ in 0..<5 {
            s.receive(.noteOn(60, velocity: 100, channel: 0))
            s.receive(.noteOff(60, channel: 0))
        }
        #expect(r.values(.tone(.waveform)) == [1, 2, 3, 0, 1])
    }

    @Test func readout_isSetByTheEngineOnly() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Tempo", kind: .readout, source: nil, readoutParameter: .transport(.tempo)),
            ControlDefinition(name: "Meter", kind: .readout, source: nil, range: ValueRange(-60, 0), unit: .decibels),
        ])
        #expect(s.state(named: "Tempo")?.display == "120.0 bpm")  // the parameter's default
        #expect(s.state(named: "Meter")?.display == "—")  // nothing set yet
        s.parameterDidChange(.transport(.tempo), value: 96)
        #expect(s.state(named: "Tempo")?.display == "96.0 bpm")
        #expect(s.setReadout("Meter", value: -12))
        #expect(s.state(named: "Meter")?.display == "-12.0 dB")
        #expect(!s.setReadout("Tempo2", value: 1))
    }

    @Test func pitchBendAndPressure_driveTargets() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Bend", kind: .fader, source: .init(.pitchBend, channel: 0),
                              targets: [.init(.channelPitchBend(0))], softTakeover: false),
            ControlDefinition(name: "Press", kind: .fader, source: .init(.channelPressure),
                              targets: [.init(.chorus(.level))], softTakeover: false),
        ])
        let r = Recorder(s)
        s.receive(.pitchBend(16383, channel: 0))
        s.receive(.channelPressure(127, channel: 5))
        #expect(r.values(.channelPitchBend(0)) == [16383])
        #expect(r.values(.chorus(.level)) == [10])
    }

    @Test func receive_reportsWhetherAControlUsedTheMessage() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "V", kind: .fader, source: .init(.cc(7), channel: 0), targets: [.init(.masterGain)])
        ])
        #expect(s.receive(cc(7, 1)))
        #expect(!s.receive(cc(8, 1)))
        #expect(!s.receive(.noteOn(60, velocity: 1, channel: 0)))
        #expect(!s.receive(.timingClock))
    }

    @Test func states_listEveryControlWithUnitDisplay() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Freq", kind: .knob, source: .init(.cc(1)), shaping: Shaping(curve: .exponential(shape: 4)),
                              targets: [.init(.tone(.frequency))]),
            ControlDefinition(name: "Pan", kind: .knob, source: .init(.cc(10)), targets: [.init(.strip(.channel(0), .pan))]),
        ])
        let states = s.states
        #expect(states.map(\.name) == ["Freq", "Pan"])
        #expect(states[0].display == "440.0 Hz")
        #expect(states[0].unit == .hertz)
        #expect(states[1].display == "0.00")
    }
}

@Suite struct ControlSurfaceShapingTests {
    @Test func curveAndRange_shapeTheTargetValue() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Cut", kind: .knob, source: .init(.cc(74), channel: 0),
                              shaping: Shaping(curve: .exponential(shape: 4)), range: ValueRange(20, 20000),
                              unit: .hertz, targets: [.init(.tone(.frequency))], softTakeover: false)
        ])
        let r = Recorder(s)
        s.receive(cc(74, 64))
        let expected = 20 + (20000 - 20) * Curve.exponential(shape: 4).apply(64.0 / 127)
        #expect(approx(r.last!.value, Float(expected), 0.01))
        #expect(s.state(named: "Cut")!.display.hasSuffix("Hz"))
    }

    @Test func invert_reversesTheTravel() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "I", kind: .fader, source: .init(.cc(1), channel: 0), shaping: Shaping(inverted: true),
                              targets: [.init(.channelCC(0, 1))], softTakeover: false)
        ])
        let r = Recorder(s)
        s.receive(cc(1, 127)); s.receive(cc(1, 0))
        #expect(r.values(.channelCC(0, 1)) == [127])  // 127 → 0 (the default: unchanged), 0 → 127
    }

    @Test func fanOut_drivesEachTargetInItsOwnRange() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Macro", kind: .knob, source: .init(.cc(21), channel: 0),
                              targets: [
                                .init(.reverb(.level), range: ValueRange(0, 0.5)),
                                .init(.chorus(.level), range: ValueRange(10, 0)),
                                .init(.channelCC(0, 74)),
                              ], softTakeover: false)
        ])
        let r = Recorder(s)
        s.receive(cc(21, 127))
        #expect(r.values(.reverb(.level)) == [0.5])
        #expect(r.values(.chorus(.level)) == [0])
        #expect(r.values(.channelCC(0, 74)) == [127])
    }

    @Test func cc14_drivesAFaderWithFullResolution() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Fine", kind: .fader, source: .init(.cc14(msb: 7, order: .msbFirst), channel: 0),
                              targets: [.init(.channelPitchBend(0))], softTakeover: false)
        ])
        let r = Recorder(s)
        s.receive(cc(7, 32)); s.receive(cc(39, 1))
        #expect(r.values(.channelPitchBend(0)) == [4096, 4097])
    }

    @Test func cc14_lsbFirstDevicePairsCorrectly() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Fine", kind: .fader, source: .init(.cc14(msb: 1, order: .auto), channel: 0),
                              targets: [.init(.channelPitchBend(0))], softTakeover: false)
        ])
        let r = Recorder(s)
        s.receive(cc(33, 10)); s.receive(cc(1, 2)); s.receive(cc(33, 11)); s.receive(cc(1, 2))
        #expect(r.values(.channelPitchBend(0)) == [266, 267])
    }

    @Test func nrpn_interleavedChannelsAndRunningDataEntry() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "N1", kind: .fader, source: .init(.nrpn(UInt14(msb: 1, lsb: 8), bits: 14), channel: 0),
                              targets: [.init(.reverb(.roomSize))], softTakeover: false),
            ControlDefinition(name: "N2", kind: .fader, source: .init(.nrpn(UInt14(msb: 1, lsb: 8), bits: 7), channel: 1),
                              targets: [.init(.reverb(.damping))], softTakeover: false),
        ])
        let r = Recorder(s)
        // Both channels select NRPN 1/8, interleaved.
        s.receive(cc(99, 1, ch: 1)); s.receive(cc(99, 1, ch: 2))
        s.receive(cc(98, 8, ch: 2)); s.receive(cc(98, 8, ch: 1))
        s.receive(cc(6, 127, ch: 2))
        s.receive(cc(6, 127, ch: 1)); s.receive(cc(38, 127, ch: 1))
        s.receive(cc(6, 0, ch: 1))  // running data entry: same parameter again
        #expect(r.values(.reverb(.damping)) == [1])
        let room = r.values(.reverb(.roomSize))
        #expect(room.count == 3)
        #expect(approx(room[0], Float(127 * 128) / 16383))
        #expect(room[1] == 1)
        #expect(room[2] == 0)
    }

    @Test func rpn_incrementAndDecrementStep() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "Range", kind: .encoder, source: .init(.rpn(0, bits: 7), channel: 0),
                              range: ValueRange(0, 127), targets: [.init(.channelCC(0, 20))]),
        ])
        s.receive(cc(101, 0)); s.receive(cc(100, 0))
        s.receive(cc(6, 2))
        s.receive(cc(96, 0)); s.receive(cc(96, 0)); s.receive(cc(97, 0))
        #expect(approx(s.state(named: "Range")!.value, 3))
        // The null parameter ends it.
        s.receive(cc(101, 127)); s.receive(cc(100, 127)); s.receive(cc(96, 0))
        #expect(approx(s.state(named: "Range")!.value, 3))
    }
}

@Suite struct SoftTakeoverTests {
    static func surface() -> ControlSurface {
        ControlSurface(controls: [
            ControlDefinition(name: "F", kind: .fader, source: .init(.cc(0), channel: 0), range: ValueRange(0, 127),
                              targets: [.init(.channelCC(0, 7))], softTakeover: true),
            ControlDefinition(name: "G", kind: .fader, source: .init(.cc(1), channel: 0), range: ValueRange(0, 127),
                              targets: [.init(.channelCC(0, 7))], softTakeover: true),
        ])
    }

    @Test func softTakeover_waitsUntilTheHardwareCrossesTheValue() {
        let s = Self.surface()
        let r = Recorder(s)
        s.receive(cc(0, 20))  // first move: nothing known yet, taken as is
        #expect(r.values(.channelCC(0, 7)) == [20])
        s.parameterDidChange(.channelCC(0, 7), value: 100)  // moved elsewhere
        #expect(s.state(named: "F")!.awaitingPickup)
        #expect(approx(s.state(named: "F")!.value, 100))
        s.receive(cc(0, 30)); s.receive(cc(0, 60)); s.receive(cc(0, 90))
        #expect(r.values(.channelCC(0, 7)) == [20])  // no jump
        s.receive(cc(0, 105))  // crossed 100
        #expect(r.values(.channelCC(0, 7)) == [20, 105])
        #expect(!s.state(named: "F")!.awaitingPickup)
    }

    @Test func softTakeover_catchesAnExactMatch() {
        let s = Self.surface()
        let r = Recorder(s)
        s.parameterDidChange(.channelCC(0, 7), value: 64)
        s.receive(cc(0, 10))
        #expect(s.state(named: "F")!.awaitingPickup)
        s.receive(cc(0, 64))  // caught: the value is already 64, nothing to publish
        #expect(!s.state(named: "F")!.awaitingPickup)
        s.receive(cc(0, 65))
        #expect(r.values(.channelCC(0, 7)) == [65])
    }

    @Test func twoControlsOnOneTarget_theOtherWaitsForPickup() {
        let s = Self.surface()
        let r = Recorder(s)
        s.receive(cc(0, 10)); s.receive(cc(1, 10))
        s.receive(cc(1, 110))  // G moves the level; F is now out of step
        #expect(s.state(named: "F")!.awaitingPickup)
        s.receive(cc(0, 12))
        #expect(r.values(.channelCC(0, 7)).last == 110)
    }

    @Test func setValue_fromAUIPublishesAndRequiresPickup() {
        let s = Self.surface()
        let r = Recorder(s)
        #expect(s.setValue(50, ofControl: "F"))
        #expect(r.values(.channelCC(0, 7)) == [50])
        s.receive(cc(0, 0))
        #expect(r.values(.channelCC(0, 7)) == [50])
        #expect(!s.setValue(1, ofControl: "nope"))
    }

    @Test func off_jumpsImmediately() {
        let s = ControlSurface(controls: [
            ControlDefinition(name: "F", kind: .fader, source: .init(.cc(0), channel: 0),
                              targets: [.init(.channelCC(0, 7))], softTakeover: false)
        ])
        let r = Recorder(s)
        s.parameterDidChange(.channelCC(0, 7), value: 100)
        s.receive(cc(0, 3))
        #expect(r.values(.channelCC(0, 7)) == [3])
    }
}

@Suite struct ControlSurfaceSubscriptionTests {
    static func surface() -> ControlSurface {
        ControlSurface(controls: [
            ControlDefinition(name: "F", kind: .fader, source: .init(.cc(0), channel: 0), range: ValueRange(0, 127),
                              targets: [.init(.channelCC(0, 7)), .init(.strip(.channel(0), .gain))]),
        ])
    }

    final class Store: ParameterChangeSubscriber {
        var values: [Int: Float] = [:]
        func parameterDidChange(_ change: ParameterChange) { values[change.index] = change.value }
    }

    @Test func unsubscribe_stopsDelivery() {
        let s = Self.surface()
        var count = 0
        let token = s.subscribe { _ in count += 1 }
        s.receive(cc(0, 10))
        s.unsubscribe(token)
        s.receive(cc(0, 20))
        #expect(count == 2)  // two targets, first message only
    }

    @Test func protocolSubscriber_receivesByDenseIndex() {
        let s = Self.surface()
        let store = Store()
        s.subscribe(store)
        s.receive(cc(0, 127))
        #expect(store.values[ParameterAddress.channelCC(0, 7).index] == 127)
        #expect(store.values[ParameterAddress.strip(.channel(0), .gain).index] == 6)
    }

    @Test func observeControls_seesEachChange() {
        let s = Self.surface()
        var seen: [String] = []
        s.observeControls { seen.append("\($0.name)=\($0.display)") }
        s.receive(cc(0, 64))
        #expect(seen == ["F=64.00"])
    }

    @Test func publishAll_bringsANewSubscriberUpToDate() {
        let s = Self.surface()
        s.receive(cc(0, 100))
        let r = Recorder(s)
        s.publishAll()
        #expect(r.values(.channelCC(0, 7)) == [100])
        #expect(s.value(of: .channelCC(0, 7)) == 100)
    }

    @Test func resetPickup_makesFadersWaitAgain() {
        let s = Self.surface()
        let r = Recorder(s)
        s.receive(cc(0, 90))
        s.resetPickup()
        s.receive(cc(0, 10))  // far from 90: ignored
        #expect(r.values(.channelCC(0, 7)) == [90])
        #expect(s.state(named: "F")!.awaitingPickup)
    }
}
