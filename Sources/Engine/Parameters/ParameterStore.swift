import Parameters
import Synchronization

/// The parameter values other threads (controls, UI, command line) set and
/// the render thread reads once per block: one slot per parameter of the
/// parameter table whose application is a store slot (`ParameterAddress.spec`),
/// at the address's dense index. Each slot is one atomic word holding the
/// value's `Float` bit pattern (low 32 bits), converted as the table says
/// (dB → linear gain, …), and a change counter (high 32 bits), so the render
/// thread sees a value and whether it changed in one load, and ramps to it.
///
/// A change may also be timed (`set(_:_:atFrame:)`): a control moved by a
/// message that plays at a frame of the sample clock. It waits in a ring and
/// the render thread stores it at the start of the block that frame falls in
/// (`applyTimed(before:)`), where an offline render of the take applies it too.
/// A timed change never undoes a newer one: every change takes a sequence
/// number, and a queued change older than its slot's newest change stored at
/// once (`set`) is dropped.
public final class ParameterStore: @unchecked Sendable {
    /// One slot per parameter address (those without a store slot stay unused).
    public static let slotCount = ParameterAddress.count
    private let slots: UnsafeMutablePointer<Atomic<UInt64>>
    private let refused = Atomic<Int>(0)

    /// Per slot: the sequence number of its newest change stored at once (`sequence` counts every change).
    private let newest: UnsafeMutablePointer<Atomic<UInt64>>
    private let sequence = Atomic<UInt64>(0)

    /// Timed changes: a single-producer single-consumer ring (the producers take
    /// `producer`, a lock the render thread never takes).
    private struct TimedChange { var frame: UInt64; var sequence: UInt64; var index: Int; var stored: Float }
    private static let timedCapacity = 1024
    private let timed: UnsafeMutablePointer<TimedChange>
    private let timedHead = Atomic<Int>(0)
    private let timedTail = Atomic<Int>(0)
    private let producer = Mutex<Void>(())
    private let timedOverflows = Atomic<Int>(0)

    /// Every slot at its table default.
    public init() {
        slots = .allocate(capacity: Self.slotCount)
        for index in 0..<Self.slotCount {
            // A plugin slot with no row yet starts at 0; its plugin reads only changes.
            let spec = ParameterAddress(index: index)?.spec
            let initial = spec.flatMap { $0.storeValue($0.defaultValue) } ?? 0
            (slots + index).initialize(to: Atomic(UInt64(initial.bitPattern)))
        }
        newest = .allocate(capacity: Self.slotCount)
        for index in 0..<Self.slotCount { (newest + index).initialize(to: Atomic(0)) }
        timed = .allocate(capacity: Self.timedCapacity)
        timed.initialize(repeating: TimedChange(frame: 0, sequence: 0, index: 0, stored: 0), count: Self.timedCapacity)
    }

    deinit {
        slots.deinitialize(count: Self.slotCount)
        slots.deallocate()
        newest.deinitialize(count: Self.slotCount)
        newest.deallocate()
        timed.deallocate()
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
        _ = claim(address.index)
        store(stored, at: address.index)
        return true
    }

    /// The next sequence number, now slot `index`'s newest stored at once (an
    /// atomic maximum: two setters may finish in either order).
    private func claim(_ index: Int) -> UInt64 {
        let number = sequence.add(1, ordering: .relaxed).newValue
        var current = newest[index].load(ordering: .relaxed)
        while current < number {
            let (done, seen) = newest[index].compareExchange(expected: current, desired: number, ordering: .releasing)
            if done { break }
            current = seen
        }
        return number
    }

    /// Stores a converted value in slot `index` and bumps its change counter. Never locks.
    @inline(__always)
    private func store(_ stored: Float, at index: Int) {
        var old = slots[index].load(ordering: .relaxed)
        while true {
            let new = ((old >> 32) &+ 1) << 32 | UInt64(stored.bitPattern)
            let (done, current) = slots[index].compareExchange(expected: old, desired: new, ordering: .releasing)
            if done { return }
            old = current
        }
    }

    /// Sets a parameter at `frame` of the render thread's sample clock: stored
    /// at the start of the block `frame` falls in (at once when that block has
    /// passed), unless a newer change of it came first (a UI's `set`). Producers
    /// push frames in non-decreasing order (a frame pinned by the event queue's
    /// producer); one pushed behind a later one waits for it. Refused as `set`
    /// refuses; with the ring full (1024 waiting: no block rendered for a while),
    /// stored at once and counted in `timedOverflowCount` — the older ones
    /// queued for the slot are then dropped. Any thread but the render thread;
    /// never allocates.
    @discardableResult
    public func set(_ address: ParameterAddress, _ value: Double, atFrame frame: UInt64) -> Bool {
        // Converted here: the render thread only stores (a plugin's spec is looked up under a lock).
        let spec = address.spec
        guard let clamped = spec.clamp(value), let stored = spec.storeValue(clamped) else {
            refused.add(1, ordering: .relaxed)
            return false
        }
        let index = address.index
        let queued = producer.withLock { _ -> Bool in
            let t = timedTail.load(ordering: .relaxed)
            guard t &- timedHead.load(ordering: .acquiring) < Self.timedCapacity else { return false }
            let number = sequence.add(1, ordering: .relaxed).newValue
            timed[t & (Self.timedCapacity - 1)] = TimedChange(frame: frame, sequence: number, index: index, stored: stored)
            timedTail.store(t &+ 1, ordering: .releasing)
            return true
        }
        if !queued {
            timedOverflows.add(1, ordering: .relaxed)
            _ = claim(index)
            store(stored, at: index)
        }
        return true
    }

    /// Render thread, at a block's start (before anything reads the store):
    /// stores the timed changes due before `end`, the block's end frame.
    @inline(__always)
    public func applyTimed(before end: UInt64) {
        var h = timedHead.load(ordering: .relaxed)
        let t = timedTail.load(ordering: .acquiring)
        guard h != t else { return }
        while h != t {
            let change = timed[h & (Self.timedCapacity - 1)]
            guard change.frame < end else { break }
            if change.sequence > newest[change.index].load(ordering: .acquiring) { store(change.stored, at: change.index) }
            h &+= 1
        }
        timedHead.store(h, ordering: .releasing)
    }

    /// Timed changes stored at once because the ring was full. Any thread.
    public var timedOverflowCount: Int { timedOverflows.load(ordering: .relaxed) }

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
