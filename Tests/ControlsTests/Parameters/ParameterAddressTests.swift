import Controls
import MIDI
import Testing

@Suite struct ParameterAddressTests {
    @Test func text_roundTripsForEveryAddress() {
        for address in ParameterAddress.all {
            #expect(ParameterAddress(address.description) == address, "\(address)")
        }
    }

    @Test func index_isDenseAndInvertible() {
        #expect(ParameterAddress.all.count == ParameterAddress.count)
        for (i, address) in ParameterAddress.all.enumerated() {
            #expect(address.index == i)
            #expect(ParameterAddress(index: i) == address)
        }
        #expect(ParameterAddress(index: -1) == nil)
        #expect(ParameterAddress(index: ParameterAddress.count) == nil)
    }

    @Test func parse_examplesFromTheIssue() {
        #expect(ParameterAddress("master.gain") == .masterGain)
        #expect(ParameterAddress("strip.3.pan") == .strip(2, .pan))
        #expect(ParameterAddress("strip.10.mute") == .strip(9, .mute))
        #expect(ParameterAddress("synth.reverb.room-size") == .reverb(.roomSize))
        #expect(ParameterAddress("synth.chorus.level") == .chorus(.level))
        #expect(ParameterAddress("channel.1.cc.74") == .channelCC(0, 74))
        #expect(ParameterAddress("channel.16.program") == .channelProgram(15))
        #expect(ParameterAddress("channel.2.pitch-bend") == .channelPitchBend(1))
        #expect(ParameterAddress("transport.play") == .transport(.play))
        #expect(ParameterAddress("tone.frequency") == .tone(.frequency))
    }

    @Test func parse_rejectsNearMisses() {
        for text in ["strip.0.gain", "strip.17.gain", "strip.03.gain", "channel.1.cc.128", "channel.1.cc", "master",
                     "master.gain.x", "synth.reverb", "tone.freq", "", "..", "channel.1.cc.-1", "strip.+3.pan"]
        {
            #expect(ParameterAddress(text) == nil, "\(text)")
        }
    }

    @Test func registry_knowsEveryAddressWithDefaultInRange() {
        let registry = ParameterRegistry.standard
        #expect(registry.count == ParameterAddress.count)
        for info in registry.all {
            #expect(info.range.contains(info.defaultValue), "\(info.address)")
            #expect(registry.info(at: info.index) == info)
        }
        #expect(registry.info(for: .masterGain).unit == .decibels)
        #expect(registry.info(for: .tone(.frequency)).unit == .hertz)
        #expect(registry.info(for: .transport(.play)).kind == .trigger)
        #expect(registry.info(for: .channelCC(0, 7)).defaultValue == 100)
    }

    @Test func registry_suggestsCloseAddresses() {
        let registry = ParameterRegistry.standard
        guard case .failure(let e) = registry.resolve("synth.reverb.roomsize") else { Issue.record(); return }
        #expect(e.suggestion == "synth.reverb.room-size")
        guard case .failure(let e2) = registry.resolve("strip.3.gian") else { Issue.record(); return }
        #expect(e2.suggestion == "strip.3.gain")
        guard case .failure(let e3) = registry.resolve("chanel.2.cc.74") else { Issue.record(); return }
        #expect(e3.suggestion == "channel.2.cc.74")
    }

    @Test func unit_formatsWithUnit() {
        #expect(ParameterUnit.decibels.format(-6) == "-6.0 dB")
        #expect(ParameterUnit.decibels.format(-60) == "-inf dB")
        #expect(ParameterUnit.hertz.format(440) == "440.0 Hz")
        #expect(ParameterUnit.hertz.format(2500) == "2.50k Hz")
        #expect(ParameterUnit.percent.format(50) == "50 %")
        #expect(ParameterUnit.semitones.format(2) == "+2.0 st")
        #expect(ParameterUnit.none.format(12, integral: true) == "12")
    }
}
