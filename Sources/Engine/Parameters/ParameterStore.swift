import Atomics

/// The mixer parameters that other threads (controls, UI, command line) set
/// and the render thread reads once per block. Each slot is one atomic word
/// holding the value's `Float` bit pattern (low 32 bits) and a change counter
/// (high 32 bits), so the render thread sees a value and whether it changed
/// in one load, and ramps to it over the next block.
public final class ParameterStore: @unchecked Sendable {
    public static let stripCount = 16

    public enum Parameter: Hashable, Sendable {
        /// Linear gain applied to the mix (1 = unity).
        case masterGain
        /// Linear gain of the reverb return (1 = as FluidSynth renders it).
        case reverbReturn
        /// Linear gain of the chorus return.
        case chorusReturn
        /// Linear gain of a MIDI channel's strip (channel 0...15).
        case stripGain(Int)
        /// Balance of a strip, -1 (left) ... 0 (centre, unity both sides) ... +1 (right).
        case stripPan(Int)
        /// 1 mutes the strip, 0 does not.
        case stripMute(Int)
        /// 1 solos the strip: while any strip is soloed, only soloed strips sound.
        case stripSolo(Int)
        /// A FluidSynth effect setting (room size, chorus voices, …), in FluidSynth's units,
        /// handed to the instrument once per change at a block boundary.
        case effect(EffectParameter)
        /// The built-in tone generator (`ToneGenerator`).
        case tone(ToneParameter)

        public var index: Int {
            switch self {
            case .masterGain: 0
            case .reverbReturn: 1
            case .chorusReturn: 2
            case .stripGain(let c): 3 + 4 * c
            case .stripPan(let c): 4 + 4 * c
            case .stripMute(let c): 5 + 4 * c
            case .stripSolo(let c): 6 + 4 * c
            case .effect(let e): 3 + 4 * ParameterStore.stripCount + Int(e.rawValue)
            case .tone(let t): 3 + 4 * ParameterStore.stripCount + EffectParameter.count + Int(t.rawValue)
            }
        }

        public var defaultValue: Float {
            switch self {
            case .masterGain, .reverbReturn, .chorusReturn, .stripGain: 1
            case .stripPan, .stripMute, .stripSolo: 0
            case .effect(let e): e.defaultValue
            case .tone(let t): t.defaultValue
            }
        }

        public static var all: [Parameter] {
            [.masterGain, .reverbReturn, .chorusReturn]
                + (0..<ParameterStore.stripCount).flatMap { c in
                    [Parameter.stripGain(c), .stripPan(c), .stripMute(c), .stripSolo(c)]
                }
                + EffectParameter.allCases.map(Parameter.effect) + ToneParameter.allCases.map(Parameter.tone)
        }
    }

    public static let slotCount = 3 + 4 * stripCount + EffectParameter.allCases.count + ToneParameter.allCases.count
    private let slots: UnsafeMutablePointer<UnsafeAtomic<UInt64>.Storage>

    public init() {
        slots = .allocate(capacity: Self.slotCount)
        for parameter in Parameter.all {
            (slots + parameter.index).initialize(to: .init(UInt64(parameter.defaultValue.bitPattern)))
        }
    }

    deinit {
        slots.deinitialize(count: Self.slotCount)
        slots.deallocate()
    }

    @inline(__always) private func slot(_ index: Int) -> UnsafeAtomic<UInt64> {
        UnsafeAtomic(at: slots + index)
    }

    /// Any thread. Bumps the change counter even when the value is the same.
    public func set(_ parameter: Parameter, _ value: Float) {
        let atomic = slot(parameter.index)
        var old = atomic.load(ordering: .relaxed)
        while true {
            let new = ((old >> 32) &+ 1) << 32 | UInt64(value.bitPattern)
            let (done, current) = atomic.compareExchange(expected: old, desired: new, ordering: .releasing)
            if done { return }
            old = current
        }
    }

    /// Any thread.
    public func value(_ parameter: Parameter) -> Float { read(parameter.index).value }

    /// Render thread: the value of slot `index` and its change counter.
    @inline(__always)
    public func read(_ index: Int) -> (value: Float, counter: UInt32) {
        let word = slot(index).load(ordering: .acquiring)
        return (Float(bitPattern: UInt32(truncatingIfNeeded: word)), UInt32(truncatingIfNeeded: word >> 32))
    }
}
