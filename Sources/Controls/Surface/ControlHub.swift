import Foundation
import MIDI

/// The controls and the parameter values they drive, shared by every front
/// end (MIDI input, the terminal view, a web page, controller feedback) and
/// every consumer (the engine): the `ControlSurface` plus subscribers.
///
/// One truth: the hub holds each parameter's value (in the parameter table's
/// units). It starts at the table's default, then the start values (command
/// line flags), then each control's `default:` from the mapping; controls
/// without one show the value the hub holds (soft takeover then waits for the
/// hardware). A subscriber gets every value that differs from the table's
/// default when it subscribes, then every change — so what the view shows is
/// what the engine was told.
///
/// Thread-safe: every method takes the hub's lock (never the render
/// thread's business). Subscribers run under it, on the caller's thread, in
/// subscription order: they should only store an atomic or enqueue.
public final class ControlHub: @unchecked Sendable {
    private let lock = NSLock()
    private var currentMapping: ControlMapping?
    private var surface: ControlSurface
    private var values: [Double]
    private var subscribers: [(id: Int, handler: (ParameterChange) -> Void)] = []
    private var nextID = 0

    /// `startValues`: parameters set before anything runs (e.g. `--reverb-level`),
    /// in the parameters' own units; NaN and infinity are ignored.
    public init(mapping: ControlMapping?, startValues: [ParameterChange] = []) {
        currentMapping = mapping
        surface = ControlSurface(controls: mapping?.controls ?? [])
        values = ParameterRegistry.standard.all.map(\.defaultValue)
        _ = surface.subscribe { [unowned self] change in self.didChange(change) }
        // The mapping's own start values first; the command line's override them.
        surface.publishMappingDefaults()
        for change in startValues {
            guard let v = change.address.spec.clamp(Double(change.value)) else { continue }
            values[change.index] = v
        }
        // Every control shows the value the hub holds.
        for address in surface.addresses {
            surface.parameterDidChange(address, value: values[address.index])
        }
    }

    /// The mapping the controls come from (the latest one after `replace`).
    public var mapping: ControlMapping? { lock.withLock { currentMapping } }

    /// Swaps in another mapping (a reload of the file) at once: the held
    /// controls of the old one let go first (their targets get their released
    /// values), then the new controls show the values the hub holds — so a
    /// control kept under the same name keeps its value, and nothing jumps.
    /// The new mapping's `default:` values are not published again: the
    /// parameters are where the old controls left them.
    public func replace(mapping: ControlMapping) {
        lock.withLock {
            surface.releaseHeld()
            let next = ControlSurface(controls: mapping.controls)
            _ = next.subscribe { [unowned self] change in self.didChange(change) }
            for address in next.addresses { next.parameterDidChange(address, value: values[address.index]) }
            surface = next
            currentMapping = mapping
        }
    }

    /// Surface thread (under the lock): record and pass on.
    private func didChange(_ change: ParameterChange) {
        values[change.index] = Double(change.value)
        for s in subscribers { s.handler(change) }
    }

    /// Adds a consumer of parameter changes. It is first handed every
    /// parameter whose value differs from the table's default (triggers
    /// excepted), then each change as it happens.
    @discardableResult
    public func subscribe(_ handler: @escaping (ParameterChange) -> Void) -> SubscriptionToken {
        lock.withLock {
            for (index, value) in values.enumerated() {
                let info = ParameterRegistry.standard.all[index]
                guard info.kind != .trigger, value != info.defaultValue else { continue }
                handler(ParameterChange(info.address, Float(value)))
            }
            nextID += 1
            subscribers.append((nextID, handler))
            return SubscriptionToken(id: nextID)
        }
    }

    public func unsubscribe(_ token: SubscriptionToken) {
        lock.withLock { subscribers.removeAll { $0.id == token.id } }
    }

    /// A MIDI message for the controls. True when a control used it (the
    /// caller should not also pass it to the sampler).
    public func receive(_ message: MIDIMessage) -> Bool {
        lock.withLock { surface.receive(message) }
    }

    /// Sets a parameter from outside the controls (a UI, a scene, a script),
    /// in its own unit: clamped, passed to the subscribers; the controls that
    /// drive it follow (and wait for pickup). False for NaN or infinity.
    @discardableResult
    public func set(_ address: ParameterAddress, to value: Double) -> Bool {
        guard let v = address.spec.clamp(value) else { return false }
        lock.withLock {
            values[address.index] = v
            let change = ParameterChange(address, Float(v))
            for s in subscribers { s.handler(change) }
            surface.parameterDidChange(address, value: v)
        }
        return true
    }

    /// The engine's own state fed back (the transport's position and tempo):
    /// the hub records it and the controls follow; nothing is published.
    public func engineDidChange(_ address: ParameterAddress, to value: Double) {
        guard let v = address.spec.clamp(value) else { return }
        lock.withLock {
            values[address.index] = v
            surface.parameterDidChange(address, value: v)
        }
    }

    /// The render-block boundary: momentary controls fall back to 0.
    public func tick() { lock.withLock { surface.tick() } }

    /// The value the hub holds for a parameter, in its own unit.
    public func value(of address: ParameterAddress) -> Double { lock.withLock { values[address.index] } }

    /// Every control's state, in mapping order (for a view).
    public var controlStates: [ControlState] { lock.withLock { surface.states } }

    /// Moves a control by name, as if its hardware had (a UI's widget).
    @discardableResult
    public func setControl(_ name: String, to value: Double) -> Bool {
        lock.withLock { surface.setValue(value, ofControl: name) }
    }
}
