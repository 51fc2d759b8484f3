import Controls
import MIDI
import Parameters
import Testing

@Suite struct ParameterAddressTests {
    @Test func text_roundTripsForEveryAddress() {
        for address in ParameterAddress.all {
            #expect(ParameterAddress(address.description) == address, "\(address)")
        }
    }

    @Test func index_isDenseAndInvertible() {
        // The built-in addresses fill the indices below the plugin rows' reserved slots.
        #expect(ParameterAddress.builtIn.count == ParameterAddress.count - PluginParameters.capacity)
        for (i, address) in ParameterAddress.builtIn.enumerated() {
            #expect(address.index == i)
            #expect(ParameterAddress(index: i) == address)
        }
        for address in PluginParameters.all { #expect(ParameterAddress(index: address.index) == address) }
        #expect(ParameterAddress(index: -1) == nil)
        #expect(ParameterAddress(index: ParameterAddress.count) == nil)
    }

    @Test func parse_examplesFromTheIssue() {
        #expect(ParameterAddress("master.gain") == .masterGain)
        #expect(ParameterAddress("strip.3.pan") == .strip(.channel(2), .pan))
        #expect(ParameterAddress("strip.10.mute") == .strip(.channel(9), .mute))
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
        #expect(registry.count == ParameterAddress.all.count)
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

/// The parameter table: every row is usable and the registry is derived from it.
@Suite struct ParameterTableTests {
    @Test func everyRow_hasItsDefaultInRangeAndAStoreValueWhereStored() {
        for address in ParameterAddress.all {
            let spec = address.spec
            #expect(spec.range.contains(spec.defaultValue), "\(address)")
            #expect(spec.clamp(spec.defaultValue) == spec.defaultValue, "\(address)")
            switch spec.application {
            case .store, .instrumentEffect: #expect(spec.storeValue(spec.defaultValue) != nil, "\(address)")
            case .channelMessage, .transport, .scene, .keyboard: #expect(spec.storeValue(spec.defaultValue) == nil, "\(address)")
            }
            let info = ParameterRegistry.standard.info(for: address)
            #expect(info.range == spec.range && info.unit == spec.unit && info.defaultValue == spec.defaultValue
                    && info.kind == spec.kind, "\(address)")
        }
    }

    @Test func clamp_refusesNonFiniteValues() {
        let spec = ParameterAddress.masterGain.spec
        #expect(spec.clamp(.nan) == nil && spec.clamp(.infinity) == nil && spec.clamp(-.infinity) == nil)
        #expect(spec.clamp(100) == 6)
        #expect(ParameterAddress.chorus(.voices).spec.clamp(4.6) == 5)
    }

    @Test func storeValues_convertAsTheRowSays() {
        #expect(ParameterAddress.masterGain.spec.storeValue(0) == 1)
        #expect(ParameterAddress.masterGain.spec.storeValue(-60) == 0)
        #expect(abs(ParameterAddress.strip(.channel(0), .gain).spec.storeValue(-6)! - 0.501_187) < 1e-5)
        #expect(ParameterAddress.reverb(.level).spec.storeValue(0.45) == 0.5)
        #expect(ParameterAddress.chorus(.level).spec.storeValue(4) == 2)
        #expect(ParameterAddress.strip(.channel(0), .mute).spec.storeValue(0.7) == 1)
        #expect(ParameterAddress.tone(.waveform).spec.storeValue(2.4) == 2)
        #expect(ParameterAddress.reverb(.enabled).spec.storeValue(0.2) == 0)
        #expect(ParameterAddress.reverb(.roomSize).spec.storeValue(0.7) == 0.7)
    }

    @Test func synthEffects_andTheirRows_pointAtEachOther() {
        for effect in SynthEffect.allCases {
            #expect(effect.address.spec.application == .instrumentEffect(effect))
        }
    }

    /// One strip family, the old names kept: every strip's gain, pan, mute and solo
    /// are `strip(id, …)`, written as mapping files have always written them.
    @Test func stripFamily_keepsTheOldNames() {
        let names: [(String, ParameterAddress)] = [
            ("strip.3.pan", .strip(.channel(2), .pan)), ("osc.level", .strip(.oscillator, .gain)),
            ("osc.solo", .strip(.oscillator, .solo)), ("tone.level", .strip(.tone, .gain)),
            ("tone.mute", .strip(.tone, .mute)), ("track.2.gain", .strip(.track(1), .gain)),
            ("strip.reverb.gain", .strip(.reverb, .gain)), ("strip.chorus.solo", .strip(.chorus, .solo)),
        ]
        for (text, address) in names {
            #expect(ParameterAddress(text) == address, "\(text)")
            #expect(address.description == text)
        }
        // No second name for the same parameter.
        #expect(ParameterAddress("osc.gain") == nil && ParameterAddress("tone.gain") == nil)
        #expect(ParameterAddress("track.9.gain") == nil && ParameterAddress("track.0.pan") == nil)
        #expect(ParameterAddress("strip.reverb.level") == nil && ParameterAddress("strip.delay.gain") == nil)
        // Every strip has every strip parameter, each its own slot.
        let slots = Set(ParameterAddress.StripID.all.flatMap { id in ParameterAddress.StripParameter.allCases.map { ParameterAddress.strip(id, $0).index } })
        #expect(slots.count == ParameterAddress.StripID.all.count * ParameterAddress.StripParameter.allCases.count)
    }
}
