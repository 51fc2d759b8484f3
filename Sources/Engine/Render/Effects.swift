import Parameters

/// Notices changes of the effect slots once per block and hands each to the
/// instrument, on the render thread, at the block boundary. Owned by the
/// renderer. Slots changed before the watcher was made are not applied: an
/// instrument keeps the effect set-up it was configured with until a control
/// moves one.
struct EffectWatcher {
    /// Per effect (in `allCases` order): the effect, its store slot, the change counter seen.
    private let effects: UnsafeMutablePointer<SynthEffect>
    private let slots: UnsafeMutablePointer<Int>
    private let seen: UnsafeMutablePointer<UInt32>
    private let count: Int
    /// Switches turned off (bit i: effect i), to hand over at the next block.
    private var pendingOff: UInt32 = 0

    init(parameters: ParameterStore) {
        let all = SynthEffect.allCases
        count = all.count
        effects = .allocate(capacity: count)
        slots = .allocate(capacity: count)
        seen = .allocate(capacity: count)
        for (i, e) in all.enumerated() {
            (effects + i).initialize(to: e)
            (slots + i).initialize(to: e.address.index)
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
