#if canImport(Glibc)
import Glibc
#endif
import MIDI

/// How the engine applies a parameter: the one place that decides where a
/// value goes once a control, the command line or a UI has set it.
public enum ParameterApplication: Hashable, Sendable {
    /// A slot of the engine's parameter store (an atomic the render thread reads
    /// once per block and ramps to), holding the value converted as given.
    case store(StoreConversion)
    /// A store slot too, and the renderer hands each change to the instrument
    /// (the sampler's reverb and chorus settings) at a block's start.
    case instrumentEffect(SynthEffect)
    /// A MIDI channel message to the sampler, through the render thread's event queue.
    case channelMessage(ChannelVoiceTarget)
    /// A command to the sequencer's transport.
    case transport(ParameterAddress.Transport)
    /// Handled by the `ControlHub` itself (switching to a mapping's scene):
    /// the scene's own values reach the engine, this one does not.
    case scene
    /// Handled on the input side (`KeyboardRouting`): what the keyboard's notes
    /// become before they reach an instrument. The engine does nothing with it.
    case keyboard
}

/// How a parameter's value (in its own unit) becomes the number in its store slot.
public enum StoreConversion: Hashable, Sendable {
    /// Stored as it is.
    case none
    /// Decibels to a linear gain; the range's bottom (-60 dB) is silence.
    case decibelsToGain
    /// A level as a gain relative to the parameter's default: the sampler
    /// renders the effect at the default level and the mixer scales its return
    /// (so a change ramps per block instead of jumping inside the synth).
    case gainRelativeToDefault
    /// 0 or 1: on at 0.5 and above.
    case onOff
    /// Rounded to a whole number.
    case rounded
}

/// The sampler's effect settings the instrument is told about (FluidSynth's units).
public enum SynthEffect: UInt8, CaseIterable, Hashable, Sendable {
    case reverbRoomSize, reverbDamping, reverbWidth, reverbEnabled
    case chorusVoices, chorusDepth, chorusSpeed, chorusEnabled

    /// An on/off switch: turning it off reaches the instrument one block late,
    /// after the mixer has faded the effect's return to 0 (no click).
    public var isSwitch: Bool { self == .reverbEnabled || self == .chorusEnabled }

    /// The parameter that carries it.
    public var address: ParameterAddress {
        switch self {
        case .reverbRoomSize: .reverb(.roomSize)
        case .reverbDamping: .reverb(.damping)
        case .reverbWidth: .reverb(.width)
        case .reverbEnabled: .reverb(.enabled)
        case .chorusVoices: .chorus(.voices)
        case .chorusDepth: .chorus(.depth)
        case .chorusSpeed: .chorus(.speed)
        case .chorusEnabled: .chorus(.enabled)
        }
    }
}

/// A channel voice message a parameter sends, its value in the data byte(s).
public enum ChannelVoiceTarget: Hashable, Sendable {
    case controlChange(Channel, UInt7)
    case programChange(Channel)
    /// 0...16383, 8192 centre.
    case pitchBend(Channel)
    /// A held note's pitch and its gate: note-on and note-off follow from
    /// both (the router keeps which note sounds).
    case notePitch(Channel)
    case noteGate(Channel)
}

/// One row of the parameter table.
public struct ParameterSpec: Hashable, Sendable {
    public let range: ClosedRange<Double>
    public let unit: ParameterUnit
    public let defaultValue: Double
    public let kind: ParameterInfo.Kind
    public let application: ParameterApplication

    init(_ range: ClosedRange<Double>, _ unit: ParameterUnit, _ defaultValue: Double, _ kind: ParameterInfo.Kind,
         _ application: ParameterApplication) {
        self.range = range; self.unit = unit; self.defaultValue = defaultValue; self.kind = kind
        self.application = application
    }
}

extension ParameterAddress {
    /// The parameter table: every parameter's range, unit, default, kind and
    /// how the engine applies it, declared once. The registry (mapping files,
    /// the view), the engine's store slots and the routing all read it.
    ///
    /// Adding a parameter: a case in `ParameterAddress` (or one of its
    /// families) and its row here; the compiler then lists every exhaustive
    /// switch that has to handle the new application, if any.
    public var spec: ParameterSpec {
        switch self {
        case .masterGain: ParameterSpec(-60...6, .decibels, 0, .continuous, .store(.decibelsToGain))
        // Every mixer strip (channels, oscillator, tone, tracks): the tone's and the
        // oscillator's gain (`tone.level`, `osc.level`) start at -12 dB, the tone's tops at 0 dB.
        case .strip(.tone, .gain): ParameterSpec(-60...0, .decibels, -12, .continuous, .store(.decibelsToGain))
        case .strip(.oscillator, .gain): ParameterSpec(-60...6, .decibels, -12, .continuous, .store(.decibelsToGain))
        case .strip(_, .gain): ParameterSpec(-60...6, .decibels, 0, .continuous, .store(.decibelsToGain))
        // Balance: -1 left … 0 centre (unity both sides) … 1 right.
        case .strip(_, .pan): ParameterSpec(-1...1, .none, 0, .continuous, .store(.none))
        case .strip(_, .mute), .strip(_, .solo): ParameterSpec(0...1, .none, 0, .toggle, .store(.onOff))
        // Reverb and chorus: FluidSynth 2.3's ranges and defaults (synth.reverb.*, synth.chorus.*).
        case .reverb(.level): ParameterSpec(0...1, .none, 0.9, .continuous, .store(.gainRelativeToDefault))
        case .reverb(.roomSize): ParameterSpec(0...1, .none, 0.2, .continuous, .instrumentEffect(.reverbRoomSize))
        case .reverb(.damping): ParameterSpec(0...1, .none, 0, .continuous, .instrumentEffect(.reverbDamping))
        case .reverb(.width): ParameterSpec(0...100, .none, 0.5, .continuous, .instrumentEffect(.reverbWidth))
        case .reverb(.enabled): ParameterSpec(0...1, .none, 1, .toggle, .instrumentEffect(.reverbEnabled))
        case .chorus(.level): ParameterSpec(0...10, .none, 2, .continuous, .store(.gainRelativeToDefault))
        case .chorus(.depth): ParameterSpec(0...256, .milliseconds, 8, .continuous, .instrumentEffect(.chorusDepth))
        case .chorus(.speed): ParameterSpec(0.1...5, .hertz, 0.3, .continuous, .instrumentEffect(.chorusSpeed))
        case .chorus(.voices): ParameterSpec(0...99, .none, 3, .integer, .instrumentEffect(.chorusVoices))
        case .chorus(.enabled): ParameterSpec(0...1, .none, 1, .toggle, .instrumentEffect(.chorusEnabled))
        case .channelCC(let c, let cc):
            // General MIDI power-on values: volume 100, pan centre, expression full.
            ParameterSpec(0...127, .none, Self.powerOnValue(cc), .integer, .channelMessage(.controlChange(c, cc)))
        case .channelProgram(let c): ParameterSpec(0...127, .none, 0, .integer, .channelMessage(.programChange(c)))
        case .channelPitchBend(let c): ParameterSpec(0...16383, .none, 8192, .integer, .channelMessage(.pitchBend(c)))
        case .channelNote(let c): ParameterSpec(0...127, .none, 60, .integer, .channelMessage(.notePitch(c)))
        case .channelGate(let c): ParameterSpec(0...1, .none, 0, .toggle, .channelMessage(.noteGate(c)))
        // Triggers: each change to 1 is a press (see ParameterInfo.Kind.trigger).
        case .transport(.play): ParameterSpec(0...1, .none, 0, .trigger, .transport(.play))
        case .transport(.stop): ParameterSpec(0...1, .none, 0, .trigger, .transport(.stop))
        case .transport(.loop): ParameterSpec(0...1, .none, 0, .toggle, .transport(.loop))
        // In bpm: the piece plays at tempo / its first tempo.
        case .transport(.tempo): ParameterSpec(20...300, .beatsPerMinute, 120, .continuous, .transport(.tempo))
        case .transport(.position): ParameterSpec(0...100, .percent, 0, .continuous, .transport(.position))
        case .tone(.frequency): ParameterSpec(20...20000, .hertz, 440, .continuous, .store(.none))
        // 0 sine, 1 square, 2 sawtooth, 3 triangle.
        case .tone(.waveform): ParameterSpec(0...3, .none, 0, .integer, .store(.rounded))
        case .tone(.enabled): ParameterSpec(0...1, .none, 0, .toggle, .store(.onOff))
        // Any MIDI pitch; its frequency is tone.a4 · 2^((note − 69) / 12).
        case .tone(.note): ParameterSpec(0...127, .none, 69, .integer, .store(.rounded))
        // The reference pitch A4 for tone.note (orchestras tune from 415 to 466; 400...480 covers them).
        case .tone(.a4): ParameterSpec(400...480, .hertz, 440, .continuous, .store(.none))
        // 0 sine, 1 square, 2 sawtooth, 3 triangle (tone.waveform's numbers), 4 white noise.
        case .osc(.waveform): ParameterSpec(0...4, .none, 0, .integer, .store(.rounded))
        // Envelope times start at 1 ms: shorter would click (see Oscillator.minimumTime).
        case .osc(.attack): ParameterSpec(0.001...10, .seconds, 0.005, .continuous, .store(.none))
        case .osc(.decay): ParameterSpec(0.001...10, .seconds, 0.1, .continuous, .store(.none))
        case .osc(.sustain): ParameterSpec(0...1, .none, 0.7, .continuous, .store(.none))
        case .osc(.release): ParameterSpec(0.001...10, .seconds, 0.1, .continuous, .store(.none))
        case .osc(.detune): ParameterSpec(-1...1, .semitones, 0, .continuous, .store(.none))
        case .sceneSelect: ParameterSpec(0...127, .none, 0, .integer, .scene)
        // Four octaves either way: a singer's key, an octave shift, a bass an octave or two down.
        case .rigTranspose: ParameterSpec(-48...48, .semitones, 0, .integer, .keyboard)
        // A plugin's port: its own range and default (an unregistered row holds nothing).
        case .plugin(let k): PluginParameters.row(k)?.spec ?? ParameterSpec(0...0, .none, 0, .continuous, .store(.none))
        }
    }

    private static func powerOnValue(_ cc: UInt7) -> Double {
        switch cc.value { case 7: 100; case 10: 64; case 11: 127; default: 0 }
    }
}

extension ParameterSpec {
    /// The value clamped into range, rounded for integer, toggle and trigger
    /// kinds; nil for NaN or infinity (refused, never clamped to an end).
    public func clamp(_ value: Double) -> Double? {
        guard value.isFinite else { return nil }
        let v = min(max(value, range.lowerBound), range.upperBound)
        return kind == .continuous ? v : v.rounded()
    }

    /// What the store slot holds for `value` (already clamped), nil when the
    /// parameter has no store slot.
    public func storeValue(_ value: Double) -> Float? {
        let conversion: StoreConversion
        switch application {
        case .store(let c): conversion = c
        case .instrumentEffect(let effect): conversion = effect.isSwitch ? .onOff : .none
        case .channelMessage, .transport, .scene, .keyboard: return nil
        }
        switch conversion {
        case .none: return Float(value)
        case .decibelsToGain: return value <= range.lowerBound ? 0 : Float(pow(10, value / 20))
        case .gainRelativeToDefault: return defaultValue > 0 ? Float(max(0, value) / defaultValue) : Float(value)
        case .onOff: return value >= 0.5 ? 1 : 0
        case .rounded: return Float(value.rounded())
        }
    }

}
