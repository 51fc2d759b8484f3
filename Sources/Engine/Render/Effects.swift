/// The sampler's effect settings that controls can move, in FluidSynth's
/// units, as `ParameterStore` slots. The reverb and chorus *levels* are the
/// mixer's return gains (`ParameterStore.Parameter.reverbReturn`,
/// `.chorusReturn`), which ramp per block; these are the rest.
public enum EffectParameter: UInt8, CaseIterable, Sendable {
    case reverbRoomSize, reverbDamping, reverbWidth, reverbEnabled
    case chorusVoices, chorusDepth, chorusSpeed, chorusEnabled

    /// FluidSynth 2.3's defaults (`synth.reverb.*`, `synth.chorus.*`).
    public var defaultValue: Float {
        switch self {
        case .reverbRoomSize: 0.2
        case .reverbDamping: 0
        case .reverbWidth: 0.5
        case .reverbEnabled: 1
        case .chorusVoices: 3
        case .chorusDepth: 8
        case .chorusSpeed: 0.3
        case .chorusEnabled: 1
        }
    }

    /// An on/off switch: turning it off is handed to the instrument one block
    /// late, after the mixer has faded the effect's return to 0 (no click).
    public var isSwitch: Bool { self == .reverbEnabled || self == .chorusEnabled }

    /// `allCases.count` without building the array (render thread).
    static let count = 8
}

/// Notices changes of the effect slots once per block and hands each to the
/// instrument, on the render thread, at the block boundary. Owned by the
/// renderer. Slots changed before the watcher was made are not applied: an
/// instrument keeps the effect set-up it was configured with until a control
/// moves one.
struct EffectWatcher {
    /// Per effect (in `allCases` order): the parameter, its store slot, the change counter seen.
    private let effects: UnsafeMutablePointer<EffectParameter>
    private let slots: UnsafeMutablePointer<Int>
    private let seen: UnsafeMutablePointer<UInt32>
    private let count: Int
    /// Switches turned off (bit i: effect i), to hand over at the next block.
    private var pendingOff: UInt32 = 0

    init(parameters: ParameterStore) {
        let all = EffectParameter.allCases
        count = all.count
        effects = .allocate(capacity: count)
        slots = .allocate(capacity: count)
        seen = .allocate(capacity: count)
        for (i, e) in all.enumerated() {
            (effects + i).initialize(to: e)
            (slots + i).initialize(to: ParameterStore.Parameter.effect(e).index)
            (seen + i).initialize(to: parameters.read(slots[i]).counter)
        }
    }

    func release() { effects.deallocate(); slots.deallocate(); seen.deallocate() }

    /// Render thread, at a block's start.
    @inline(__always)
    mutating func poll(_ parameters: ParameterStore, _ instrument: any Instrument) {
        if pendingOff != 0 {
            for i in 0..<count where pendingOff & (1 << UInt32(i)) != 0 {
                instrument.setEffect(effects[i], to: parameters.read(slots[i]).value)
            }
            pendingOff = 0
        }
        for i in 0..<count {
            let (value, counter) = parameters.read(slots[i])
            guard counter != seen[i] else { continue }
            seen[i] = counter
            if effects[i].isSwitch && value < 0.5 {
                pendingOff |= 1 << UInt32(i)
            } else {
                instrument.setEffect(effects[i], to: value)
            }
        }
    }
}
