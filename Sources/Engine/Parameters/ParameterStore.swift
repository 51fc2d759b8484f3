import Parameters
import Synchronization

/// The parameter values other threads (controls, UI, command line) set and
/// the render thread reads once per block: one slot per parameter of the
/// parameter table whose application is a store slot (`ParameterAddress.spec`),
/// at the address's dense index. Each slot is one atomic word holding the
/// value's `Float` bit pattern (low 32 bits), converted as the table says
/// (dB → linear gain, …), and a change counter (high 32 bits), so the render
/// thread sees a value and whether it changed in one load, and ramps to it.
public final class ParameterStore: @unchecked Sendable {
    /// One slot per parameter address (those without a store slot stay unused).
    public static let slotCount = ParameterAddress.count
    private let slots: UnsafeMutablePointer<Atomic<UInt64>>
    private let refused = Atomic<Int>(0)

    /// Every slot at its table default.
    public init() {
        slots = .allocate(capacity: Self.slotCount)
        for index in 0..<Self.slotCount {
            // A plugin slot with no row yet starts at 0; its plugin reads only changes.
            let spec = ParameterAddress(index: index)?.spec
            let initial = spec.flatMap { $0.storeValue($0.defaultValue) } ?? 0
            (slots + index).initialize(to: Atomic(UInt64(initial.bitPattern)))
        }
    }

    deinit {
        slots.deinitialize(count: Self.slotCount)
        slots.deallocate()
    }

    /// Sets a parameter from a value in its own unit and range (the table's):
    /// clamped into range, converted, stored, its change counter bumped (even
    /// when the value is the same). Refuses (returns false and counts) NaN,
    /// infinity and parameters with no store slot (channel messages, transport).
    /// Any thread; never blocks.
    @discardableResult
    public func set(_ address: ParameterAddress, _ value: Double) -> Bool {
        let spec = address.spec
        guard let clamped = spec.clamp(value), let stored = spec.storeValue(clamped) else {
            refused.add(1, ordering: .relaxed)
            return false
        }
        let index = address.index
        var old = slots[index].load(ordering: .relaxed)
        while true {
            let new = ((old >> 32) &+ 1) << 32 | UInt64(stored.bitPattern)
            let (done, current) = slots[index].compareExchange(expected: old, desired: new, ordering: .releasing)
            if done { return true }
            old = current
        }
    }

    /// The stored (converted) value of a parameter. Any thread.
    public func value(_ address: ParameterAddress) -> Float { read(address.index).value }

    /// Values `set` refused (NaN, infinity, no store slot). Any thread.
    public var refusedCount: Int { refused.load(ordering: .relaxed) }

    /// Render thread: the stored value of slot `index` (an address's `index`,
    /// below `slotCount`) and its change counter.
    @inline(__always)
    public func read(_ index: Int) -> (value: Float, counter: UInt32) {
        let word = slots[index].load(ordering: .acquiring)
        return (Float(bitPattern: UInt32(truncatingIfNeeded: word)), UInt32(truncatingIfNeeded: word >> 32))
    }
}
