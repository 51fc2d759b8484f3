import Engine
import LV2
import Parameters

/// A plugin's control inputs, each bound to its parameter's store slot (which
/// holds the value in the plugin's own units): at each block's start, a slot
/// that changed since the last block sets its port on every instance (two for
/// a mono insert on a stereo strip). A slot is read for its changes only, so
/// the plugin starts at its own defaults and the hub's values reach it as changes.
final class PluginControls {
    /// Control `control` (its place in `LV2PluginInfo.controls`) is `address`.
    struct Binding: Hashable, Sendable {
        var control: Int
        var address: ParameterAddress
    }

    private let instances: [LV2Instance]
    private let store: ParameterStore
    private let count: Int
    private let places: UnsafeMutablePointer<Int>
    private let slots: UnsafeMutablePointer<Int>
    private let counters: UnsafeMutablePointer<UInt32>

    init(_ bindings: [Binding], instances: [LV2Instance], store: ParameterStore) {
        self.instances = instances
        self.store = store
        count = bindings.count
        places = .allocate(capacity: max(1, count)); slots = .allocate(capacity: max(1, count))
        counters = .allocate(capacity: max(1, count))
        for (k, binding) in bindings.enumerated() {
            places[k] = binding.control
            slots[k] = binding.address.index
            counters[k] = store.read(binding.address.index).counter
        }
    }

    deinit {
        places.deallocate(); slots.deallocate(); counters.deallocate()
    }

    /// Render thread: hands every changed value to its port. No allocation, lock or log.
    @inline(__always)
    func update() {
        for k in 0..<count {
            let (value, counter) = store.read(slots[k])
            guard counter != counters[k] else { continue }
            counters[k] = counter
            for i in 0..<instances.count { instances[i].setControl(at: places[k], to: value) }
        }
    }
}
