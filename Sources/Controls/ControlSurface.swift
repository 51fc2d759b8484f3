import ControlDefinitions
import Foundation
import MIDI
import MappingFiles
import Parameters

/// The MidiWidgetsManager equivalent: MIDI messages in, control state and
/// parameter changes out. It runs without any audio engine.
///
/// Threading: not thread-safe. Call every method from one thread (the MIDI
/// input thread or a control queue), never from the render thread.
/// Subscribers are called synchronously, on that thread, in subscription
/// order; the engine's subscriber should only store an atomic or enqueue.
public final class ControlSurface {
    public let registry: ParameterRegistry
    public let definitions: [ControlDefinition]

    private struct Runtime {
        var position: Double = 0
        var shaped: Double = 0
        var value: Double = 0
        var pickedUp = true
        var lastHardware: Double?
        var on = false
        var fired = false
        var index = 0
        var readoutValue: Double?
        /// Feedback: the raw value the controller is known to show (what it
        /// sent last, or what was sent to it), and the channel it used.
        var shown: Int?
        var wireChannel: Channel?
    }

    private struct Resolved {
        var range: ValueRange
        var unit: ParameterUnit
        var integral: Bool
        var binary: Bool
    }

    private enum Input {
        case absolute(Double)
        case relative(Double)
        case press(Bool, velocity: Double)
        case index(Int)
    }

    private struct NRPNKey: Hashable {
        var kind: ParameterNumberAssembler.Kind
        var channel: UInt8
        var parameter: UInt16
    }

    private var runtimes: [Runtime]
    private var resolved: [Resolved]
    private var indexByName: [String: Int] = [:]

    private var ccControls = [[Int]](repeating: [], count: 16 * 128)
    private var cc14Controls = [[Int]](repeating: [], count: 16 * 64)
    private var noteControls = [[Int]](repeating: [], count: 16 * 128)
    private var programControls = [[Int]](repeating: [], count: 16)
    private var bendControls = [[Int]](repeating: [], count: 16)
    private var pressureControls = [[Int]](repeating: [], count: 16)
    private var nrpnControls: [NRPNKey: [Int]] = [:]
    private var followers: [Int: [Int]] = [:]  // parameter index → controls whose first target it is
    private var readouts: [Int: [Int]] = [:]  // parameter index → readouts showing it

    private var cc14 = CC14Assembler()
    private var parameterNumbers = ParameterNumberAssembler()
    /// The parameters' values: the hub's own (shared), or the surface's.
    private let values: ParameterValues
    private var momentaryPending: [Int] = []
    /// Parameters whose held value stands for nothing now (the scene selector after a reload):
    /// a control's next value for one goes out even when it equals the held one.
    private var staleValues: [Int] = []
    /// Controls whose state may differ from what their controller shows, for `takeFeedback`.
    private var feedbackPending: [Int] = []
    private var isFeedbackPending: [Bool] = []

    private var subscribers = ObserverList<ParameterChange>()
    private var controlObservers = ObserverList<ControlState>()

    /// Soft takeover catches the value when the hardware comes this close (of the travel) or crosses it.
    public static let pickupTolerance = 0.02

    public convenience init(mapping: ControlMapping, registry: ParameterRegistry = .standard) {
        self.init(controls: mapping.controls, registry: registry)
    }

    /// Builds a surface from definitions; names should be unique (the mapping
    /// loader checks). `values`: a hub's, which the surface then reads and
    /// writes as its own (nil: its own, every parameter at its default).
    public init(controls: [ControlDefinition], registry: ParameterRegistry = .standard, values: ParameterValues? = nil) {
        self.registry = registry
        self.definitions = controls
        self.values = values ?? ParameterValues(registry: registry)
        self.runtimes = []
        self.resolved = []
        for (i, def) in controls.enumerated() {
            let first = def.targets.first.map { registry.info(for: $0.address) }
                ?? def.readoutParameter.map { registry.info(for: $0) }
            let range = def.range
                ?? def.selectorValues.map { ValueRange($0.min() ?? 0, $0.max() ?? 0) }
                ?? def.targets.first?.range
                ?? first.map { ValueRange($0.range.lowerBound, $0.range.upperBound) }
                ?? ValueRange(0, 1)
            let binary = [.toggle, .button, .momentary].contains(def.kind)
                || (def.range == nil && (first?.kind == .toggle || first?.kind == .trigger))
            let integral = def.range == nil && def.selectorValues == nil && first?.kind == .integer
            resolved.append(Resolved(range: range, unit: def.unit ?? first?.unit ?? .none,
                                     integral: integral, binary: binary))
            var rt = Runtime()
            let initial = def.defaultValue ?? (def.range == nil ? first?.defaultValue : nil) ?? range.from
            if def.kind == .selector, let values = def.selectorValues {
                rt.index = values.firstIndex(of: initial) ?? 0
                rt.shaped = values.count > 1 ? Double(rt.index) / Double(values.count - 1) : 0
                rt.position = rt.shaped
            } else if [.button, .momentary].contains(def.kind) {
                rt.shaped = 0
            } else {
                rt.shaped = range.unscale(initial)
                rt.position = def.shaping.inverse(rt.shaped)
            }
            rt.on = rt.shaped >= 0.5
            if let shown = def.readoutParameter { rt.readoutValue = registry.info(for: shown).defaultValue }
            runtimes.append(rt)
            recompute(i, &runtimes[i])
            if indexByName[def.name] == nil { indexByName[def.name] = i }
            register(i, def)
        }
        // A new surface (a start, a reload): every control shows its state once.
        isFeedbackPending = [Bool](repeating: true, count: controls.count)
        feedbackPending = Array(controls.indices)
    }

    private func register(_ i: Int, _ def: ControlDefinition) {
        if let first = def.targets.first { followers[first.address.index, default: []].append(i) }
        if let p = def.readoutParameter { readouts[p.index, default: []].append(i) }
        guard let source = def.source else { return }
        let channels = source.channel.map { [$0.intValue] } ?? Array(0..<16)
        for ch in channels {
            switch source.message {
            case .cc(let n): ccControls[ch * 128 + n.intValue].append(i)
            case .cc14(let msb, _):
                cc14Controls[ch * 64 + msb.intValue].append(i)
                cc14Controls[ch * 64 + msb.intValue + 32].append(i)
            case .nrpn(let n, _): nrpnControls[NRPNKey(kind: .nrpn, channel: UInt8(ch), parameter: n.value), default: []].append(i)
            case .rpn(let n, _): nrpnControls[NRPNKey(kind: .rpn, channel: UInt8(ch), parameter: n.value), default: []].append(i)
            case .note(let n): noteControls[ch * 128 + n.intValue].append(i)
            case .programChange: programControls[ch].append(i)
            case .pitchBend: bendControls[ch].append(i)
            case .channelPressure: pressureControls[ch].append(i)
            }
        }
    }

    // MARK: - Subscriptions

    /// Calls `handler` for every parameter change from now on.
    @discardableResult
    public func subscribe(_ handler: @escaping (ParameterChange) -> Void) -> SubscriptionToken {
        subscribers.add(handler)
    }

    /// Subscribes an object (held weakly).
    @discardableResult
    public func subscribe(_ subscriber: some ParameterChangeSubscriber) -> SubscriptionToken {
        subscribe { [weak subscriber] change in subscriber?.parameterDidChange(change) }
    }

    /// Calls `handler` with a control's new state whenever it changes (a view's refresh).
    @discardableResult
    public func observeControls(_ handler: @escaping (ControlState) -> Void) -> SubscriptionToken {
        controlObservers.add(handler)
    }

    public func unsubscribe(_ token: SubscriptionToken) {
        subscribers.remove(token)
        controlObservers.remove(token)
    }

    // MARK: - Input

    /// Feeds one MIDI message. Returns true when a control used it (the
    /// router may then keep it from the sampler). NRPN/RPN selection
    /// controllers (99/98, 101/100) are followed but never reported as used.
    @discardableResult
    public func receive(_ message: MIDIMessage) -> Bool {
        switch message {
        case .controlChange(let m):
            return receiveCC(m)
        case .noteOn(let m):
            let list = noteControls[m.channel.intValue * 128 + m.note.intValue]
            let on = m.velocity.value > 0
            for i in list {
                heard(i, raw: Int(m.velocity.value), on: m.channel)
                apply(i, .press(on, velocity: Double(m.velocity.value) / 127))
            }
            return !list.isEmpty
        case .noteOff(let m):
            let list = noteControls[m.channel.intValue * 128 + m.note.intValue]
            for i in list {
                heard(i, raw: 0, on: m.channel)
                apply(i, .press(false, velocity: 0))
            }
            return !list.isEmpty
        case .programChange(let m):
            let list = programControls[m.channel.intValue]
            for i in list {
                heard(i, raw: m.program.intValue, on: m.channel)
                if definitions[i].kind == .selector {
                    apply(i, .index(m.program.intValue))
                } else {
                    apply(i, .absolute(Double(m.program.value) / 127))
                }
            }
            return !list.isEmpty
        case .pitchBend(let m):
            let list = bendControls[m.channel.intValue]
            for i in list {
                heard(i, raw: Int(m.value.value), on: m.channel)
                apply(i, .absolute(Double(m.value.value) / 16383))
            }
            return !list.isEmpty
        case .channelPressure(let m):
            let list = pressureControls[m.channel.intValue]
            for i in list {
                heard(i, raw: Int(m.pressure.value), on: m.channel)
                apply(i, .absolute(Double(m.pressure.value) / 127))
            }
            return !list.isEmpty
        default:
            return false
        }
    }

    private func receiveCC(_ m: MIDIMessage.ControlChange) -> Bool {
        let ch = m.channel.intValue
        var used = false
        if ParameterNumberAssembler.handles(m.controller),
            let event = parameterNumbers.receive(channel: m.channel, controller: m.controller, value: m.value)
        {
            let key = NRPNKey(kind: event.kind, channel: UInt8(ch), parameter: event.parameter.value)
            if let list = nrpnControls[key] {
                used = true
                for i in list {
                    guard let source = definitions[i].source else { continue }
                    let resolution = Double(source.resolution)
                    switch event.action {
                    case .set(let msb, let lsb):
                        let raw = source.resolution == 127
                            ? Double(msb.value)
                            : Double(UInt14(msb: msb, lsb: lsb ?? 0).value)
                        heard(i, raw: Int(raw), on: m.channel)
                        apply(i, .absolute(raw / resolution))
                    case .increment:
                        heard(i, raw: nil, on: m.channel)
                        apply(i, .relative(1 / resolution))
                    case .decrement:
                        heard(i, raw: nil, on: m.channel)
                        apply(i, .relative(-1 / resolution))
                    }
                }
            }
        }
        if m.controller.value < 64 {
            let list = cc14Controls[ch * 64 + m.controller.intValue]
            if let first = list.first, case .cc14(_, let order)? = definitions[first].source?.message {
                used = true
                if let v = cc14.receive(channel: m.channel, controller: m.controller, value: m.value, order: order) {
                    for i in list {
                        heard(i, raw: Int(v.value), on: m.channel)
                        apply(i, .absolute(Double(v.value) / 16383))
                    }
                }
            }
        }
        let list = ccControls[ch * 128 + m.controller.intValue]
        for i in list {
            let def = definitions[i]
            heard(i, raw: def.kind == .encoder ? nil : Int(m.value.value), on: m.channel)
            switch def.kind {
            case .encoder: apply(i, .relative(encoderSteps(def, m.value)))
            case .toggle, .button, .momentary: apply(i, .press(m.value.value >= 64, velocity: 1))
            default: apply(i, .absolute(Double(m.value.value) / 127))
            }
        }
        return used || !list.isEmpty
    }

    private func encoderSteps(_ def: ControlDefinition, _ value: UInt7) -> Double {
        let d = Double(def.encoding.delta(value))
        let magnitude = pow(abs(d), 1 + max(0, def.acceleration))
        return (d < 0 ? -magnitude : magnitude) / Double(max(1, def.encoderResolution))
    }

    private func apply(_ i: Int, _ input: Input) {
        let def = definitions[i]
        var rt = runtimes[i]
        switch (def.kind, input) {
        case (.readout, _):
            return
        case (.toggle, _):
            let pressed = Self.isPressed(input, current: rt.on)
            if def.followsValue {
                guard rt.on != pressed else { return }
                rt.on = pressed
            } else {
                // Flip on each press: a release (or a repeated "down") does nothing.
                let wasDown = rt.lastHardware.map { $0 >= 0.5 } ?? false
                rt.lastHardware = pressed ? 1 : 0
                guard pressed, !wasDown else { runtimes[i] = rt; return }
                rt.on.toggle()
            }
            rt.shaped = rt.on ? 1 : 0
        case (.button, _):
            let pressed = Self.isPressed(input, current: rt.on)
            guard pressed != rt.on else { return }
            rt.on = pressed
            rt.shaped = pressed ? 1 : 0
        case (.momentary, _):
            guard Self.isPressed(input, current: false) else { return }
            rt.on = true
            rt.shaped = 1
            if !rt.fired { rt.fired = true; momentaryPending.append(i) }
        case (.pad, .press(let down, let velocity)):
            rt.position = down ? velocity : 0
            rt.shaped = def.shaping.apply(rt.position)
        case (.selector, .index(let n)):
            rt.index = min(max(0, n), def.selectorSteps - 1)
            rt.shaped = def.selectorSteps > 1 ? Double(rt.index) / Double(def.selectorSteps - 1) : 0
            rt.position = rt.shaped
        case (.selector, .press(let down, _)):
            // A button or pad on a selector steps to the next choice, wrapping round.
            guard down else { return }
            rt.index = (rt.index + 1) % def.selectorSteps
            rt.shaped = def.selectorSteps > 1 ? Double(rt.index) / Double(def.selectorSteps - 1) : 0
            rt.position = rt.shaped
        case (.selector, .relative(let delta)):
            // NRPN/RPN increment and decrement move one step.
            rt.index = min(max(rt.index + (delta > 0 ? 1 : delta < 0 ? -1 : 0), 0), def.selectorSteps - 1)
            rt.shaped = def.selectorSteps > 1 ? Double(rt.index) / Double(def.selectorSteps - 1) : 0
            rt.position = rt.shaped
        case (.selector, .absolute(let p)):
            guard takeOver(def, &rt, p) else { runtimes[i] = rt; return }
            let steps = def.selectorSteps
            rt.index = min(max(Int(p * Double(steps)), 0), steps - 1)
            rt.shaped = steps > 1 ? Double(rt.index) / Double(steps - 1) : 0
            rt.position = p
        case (_, .relative(let delta)):
            rt.position = min(max(rt.position + delta, 0), 1)
            rt.pickedUp = true
            rt.shaped = def.shaping.apply(rt.position)
        case (_, .absolute(let p)):
            guard takeOver(def, &rt, p) else { runtimes[i] = rt; return }
            rt.position = p
            rt.shaped = def.shaping.apply(p)
        case (_, .press(let down, let velocity)):
            rt.position = down ? velocity : 0
            rt.shaped = def.shaping.apply(rt.position)
        case (_, .index(let n)):
            rt.position = Double(min(max(n, 0), 127)) / 127
            rt.shaped = def.shaping.apply(rt.position)
        }
        recompute(i, &rt)
        runtimes[i] = rt
        publish(from: i)
    }

    /// The nearest of `steps` evenly spaced steps for a shaped position (0 for NaN).
    private static func step(_ shaped: Double, of steps: Int) -> Int {
        let x = (shaped * Double(steps - 1)).rounded()
        return x.isFinite ? min(max(Int(x), 0), steps - 1) : 0
    }

    private static func isPressed(_ input: Input, current: Bool) -> Bool {
        switch input {
        case .press(let down, _): down
        case .absolute(let p): p >= 0.5
        case .relative(let d): d > 0 ? true : d < 0 ? false : current
        case .index(let n): n > 0
        }
    }

    /// Soft takeover: true when the hardware position `p` may move the control.
    private func takeOver(_ def: ControlDefinition, _ rt: inout Runtime, _ p: Double) -> Bool {
        defer { rt.lastHardware = p }
        guard def.softTakeover, !rt.pickedUp else { return true }
        let current = rt.position
        if abs(p - current) <= Self.pickupTolerance {
            rt.pickedUp = true
        } else if let last = rt.lastHardware, (last - current) * (p - current) <= 0 {
            rt.pickedUp = true  // crossed the current value since the last message
        }
        return rt.pickedUp
    }

    private func recompute(_ i: Int, _ rt: inout Runtime) {
        let def = definitions[i]
        if def.kind == .selector, let values = def.selectorValues, !values.isEmpty {
            rt.value = values[min(rt.index, values.count - 1)]
        } else {
            rt.value = resolved[i].range.scale(rt.shaped)
        }
    }

    // MARK: - Feedback to the controller

    /// Hardware input for control `i`: the controller now shows `raw` (nil: a
    /// relative step, which shows no position). Controls whose state is not
    /// simply what the hardware says (a toggle flips on a press, an encoder
    /// steps) are looked at again; absolute ones only when they change, so a
    /// fader awaiting pickup is not pushed around under the player's hand.
    private func heard(_ i: Int, raw: Int?, on channel: Channel) {
        runtimes[i].shown = raw
        runtimes[i].wireChannel = channel
        if [.toggle, .button, .encoder].contains(definitions[i].kind) { markForFeedback(i) }
    }

    private func markForFeedback(_ i: Int) {
        guard !isFeedbackPending[i] else { return }
        isFeedbackPending[i] = true
        feedbackPending.append(i)
    }

    /// The messages that bring the controller up to date: for each control
    /// changed since the last call, its state encoded as its source sends it
    /// (`feedbackRaw`, `ControlSource.messages`) — unless the controller
    /// already shows it (it sent that value itself: no echo), or the control
    /// says `feedback: false`. The latest state only: one value per control
    /// per call. On the control's channel, or the one its hardware last used
    /// (channel 1 before any). Call once per control tick.
    public func takeFeedback() -> [MIDIMessage] {
        guard !feedbackPending.isEmpty else { return [] }
        var out: [MIDIMessage] = []
        for i in feedbackPending {
            isFeedbackPending[i] = false
            let def = definitions[i]
            var rt = runtimes[i]
            guard def.feedback, let source = def.source,
                let raw = def.feedbackRaw(position: rt.position, shaped: rt.shaped, on: rt.on, index: rt.index), raw != rt.shown
            else { continue }
            if def.kind == .selector, let shown = rt.shown, selectorIndex(i, raw: shown) == rt.index { continue }
            rt.shown = raw
            runtimes[i] = rt
            out += source.messages(raw: raw, channel: source.channel ?? rt.wireChannel ?? Channel(0))
        }
        feedbackPending.removeAll(keepingCapacity: true)
        return out
    }

    /// The step a selector's hardware value stands for (as `apply` decodes it).
    private func selectorIndex(_ i: Int, raw: Int) -> Int {
        guard let source = definitions[i].source else { return 0 }
        if case .programChange = source.message { return raw }
        let steps = definitions[i].selectorSteps
        return min(max(Int(Double(raw) / Double(source.resolution) * Double(steps)), 0), steps - 1)
    }

    // MARK: - Block boundary

    /// A momentary control fired and waits for `tick` to fall back to 0.
    public var hasFiredMomentary: Bool { !momentaryPending.isEmpty }

    /// The render-block boundary: momentary controls that fired since the
    /// last call go back to 0 (publishing 0). Call once per rendered block,
    /// on the surface's thread (e.g. when the engine's block counter moves),
    /// not on the render thread itself.
    public func tick() {
        guard !momentaryPending.isEmpty else { return }
        let pending = momentaryPending
        momentaryPending.removeAll(keepingCapacity: true)
        for i in pending {
            runtimes[i].fired = false
            runtimes[i].on = false
            runtimes[i].shaped = 0
            recompute(i, &runtimes[i])
            publish(from: i)
        }
    }

    // MARK: - Output

    private func targetValue(_ i: Int, _ binding: TargetBinding) -> Double {
        let def = definitions[i]
        let info = registry.info(for: binding.address)
        let shaped = runtimes[i].shaped
        let raw: Double
        if let range = binding.range {
            raw = range.scale(shaped)
        } else if def.range != nil || def.selectorValues != nil {
            raw = runtimes[i].value
        } else {
            raw = info.range.lowerBound + shaped * (info.range.upperBound - info.range.lowerBound)
        }
        return info.clamp(raw)
    }

    private func publish(from i: Int) {
        var changed: [ParameterChange] = []
        for binding in definitions[i].targets {
            let v = targetValue(i, binding)
            let index = binding.address.index
            let stale = staleValues.firstIndex(of: index)
            guard values[index] != v || registry.info(for: binding.address).kind == .trigger || stale != nil else { continue }
            if let stale { staleValues.remove(at: stale) }
            values[index] = v
            changed.append(ParameterChange(binding.address, Float(v)))
        }
        notifyObservers(i)
        for change in changed {
            subscribers.send(change)
            follow(change.address, value: Double(change.value), except: i)
        }
    }

    private func notifyObservers(_ i: Int) {
        markForFeedback(i)
        guard !controlObservers.isEmpty else { return }
        controlObservers.send(state(at: i))
    }

    /// Controls whose first target is `address` follow a value set elsewhere,
    /// and wait for pickup if they use soft takeover; readouts show it.
    private func follow(_ address: ParameterAddress, value: Double, except: Int?) {
        for j in followers[address.index] ?? [] where j != except {
            let def = definitions[j]
            guard let binding = def.targets.first else { continue }
            let info = registry.info(for: address)
            let shaped: Double
            if let range = binding.range {
                shaped = range.unscale(value)
            } else if def.range != nil {
                shaped = resolved[j].range.unscale(value)
            } else {
                shaped = Shaping.unscale(value, from: info.range)
            }
            var rt = runtimes[j]
            if def.kind == .selector {
                if let values = def.selectorValues {
                    rt.index = values.firstIndex(where: { abs($0 - value) < 1e-9 }) ?? rt.index
                } else {
                    rt.index = Self.step(shaped, of: def.selectorSteps)
                }
                rt.shaped = def.selectorSteps > 1 ? Double(rt.index) / Double(def.selectorSteps - 1) : 0
                rt.position = rt.shaped
            } else {
                rt.shaped = shaped
                rt.position = def.shaping.inverse(shaped)
                rt.on = shaped >= 0.5
            }
            if def.softTakeover { rt.pickedUp = false }
            recompute(j, &rt)
            runtimes[j] = rt
            notifyObservers(j)
        }
        for j in readouts[address.index] ?? [] where j != except {
            runtimes[j].readoutValue = value
            runtimes[j].value = value
            notifyObservers(j)
        }
    }

    // MARK: - Feedback and queries

    /// A parameter changed outside the surface (the engine, a UI, a preset):
    /// controls that drive it follow it (soft takeover then waits for the
    /// hardware), readouts that show it update. Nothing is published.
    public func parameterDidChange(_ address: ParameterAddress, value: Double) {
        guard value.isFinite else { return }
        let v = registry.info(for: address).clamp(value)
        values[address.index] = v
        staleValues.removeAll { $0 == address.index }
        follow(address, value: v, except: nil)
    }

    /// The value held for `address` stands for nothing now (after a reload no
    /// scene is current, but `scene.select` still holds the old one): the next
    /// value a control gives it goes out even when it equals the held one.
    public func markStale(_ address: ParameterAddress) {
        if !staleValues.contains(address.index) { staleValues.append(address.index) }
    }

    /// Sets a readout by name (a meter level, a tempo), in its range and unit.
    /// Returns false when no readout has that name.
    @discardableResult
    public func setReadout(_ name: String, value: Double) -> Bool {
        guard let i = indexByName[name], definitions[i].kind == .readout, value.isFinite else { return false }
        runtimes[i].readoutValue = value
        runtimes[i].value = value
        notifyObservers(i)
        return true
    }

    /// Moves a control from a UI, as if the hardware had: publishes its
    /// targets; the hardware then has to pick the value up. `value` is in the
    /// control's range and unit. Returns false for an unknown name or a readout.
    @discardableResult
    public func setValue(_ value: Double, ofControl name: String) -> Bool {
        guard let i = indexByName[name], definitions[i].kind != .readout, value.isFinite else { return false }
        let def = definitions[i]
        var rt = runtimes[i]
        if def.kind == .selector {
            let steps = def.selectorSteps
            if let values = def.selectorValues {
                rt.index = values.enumerated().min(by: { abs($0.1 - value) < abs($1.1 - value) })?.0 ?? 0
            } else {
                rt.index = Self.step(resolved[i].range.unscale(value), of: steps)
            }
            rt.shaped = steps > 1 ? Double(rt.index) / Double(steps - 1) : 0
            rt.position = rt.shaped
        } else {
            rt.shaped = resolved[i].range.unscale(value)
            if resolved[i].binary { rt.shaped = rt.shaped >= 0.5 ? 1 : 0; rt.on = rt.shaped == 1 }
            rt.position = def.shaping.inverse(rt.shaped)
        }
        if def.softTakeover { rt.pickedUp = false }
        recompute(i, &rt)
        runtimes[i] = rt
        if def.kind == .momentary, rt.on, !rt.fired { runtimes[i].fired = true; momentaryPending.append(i) }
        publish(from: i)
        return true
    }

    /// Makes every soft-takeover control wait for its hardware again, as if
    /// its position were unknown (after loading a preset or reconnecting).
    public func resetPickup() {
        for i in runtimes.indices where definitions[i].softTakeover {
            runtimes[i].pickedUp = false
            runtimes[i].lastHardware = nil
        }
    }

    /// Publishes every control's current target values (to bring a new subscriber up to date).
    public func publishAll() {
        for i in definitions.indices where definitions[i].kind != .readout {
            for binding in definitions[i].targets {
                let v = targetValue(i, binding)
                values[binding.address.index] = v
                subscribers.send(ParameterChange(binding.address, Float(v)))
            }
        }
    }

    /// Lets go of every held control — a button or pad that is on, a momentary
    /// control that fired — as if its hardware had been released: each
    /// publishes its released value. Before the surface is replaced (a mapping
    /// reload), so nothing stays held through a control that goes away.
    public func releaseHeld() {
        tick()
        for i in definitions.indices where [.button, .pad].contains(definitions[i].kind) && runtimes[i].shaped > 0 {
            runtimes[i].on = false
            runtimes[i].position = 0
            runtimes[i].shaped = 0
            recompute(i, &runtimes[i])
            publish(from: i)
        }
    }

    /// Publishes the start value of every control whose mapping gives one
    /// (`default:`), so the engine takes what the control shows.
    public func publishMappingDefaults() {
        for i in definitions.indices where definitions[i].defaultValue != nil && definitions[i].kind != .readout {
            publish(from: i)
        }
    }

    /// Every parameter some control drives or shows, each once, in mapping order.
    public var addresses: [ParameterAddress] {
        var seen = Set<ParameterAddress>()
        return definitions.flatMap(\.drivenAddresses).filter { seen.insert($0).inserted }
    }

    /// The last value the surface knows for a parameter (its default until something moves it).
    public func value(of address: ParameterAddress) -> Double { values[address.index] }

    /// Every control's state, in mapping order.
    public var states: [ControlState] { definitions.indices.map(state(at:)) }

    public func state(named name: String) -> ControlState? { indexByName[name].map(state(at:)) }

    private func state(at i: Int) -> ControlState {
        let def = definitions[i], rt = runtimes[i], r = resolved[i]
        let display = switch def.kind {
        case .readout:
            rt.readoutValue.map { r.unit.format($0, integral: r.integral) } ?? "—"
        case .toggle, .button, .momentary:
            rt.on ? "on" : "off"
        default:
            r.binary ? (rt.shaped >= 0.5 ? "on" : "off") : r.unit.format(rt.value, integral: r.integral)
        }
        return ControlState(
            name: def.name, kind: def.kind, value: def.kind == .readout ? (rt.readoutValue ?? rt.value) : rt.value,
            position: rt.position, range: r.range, unit: r.unit, display: display,
            awaitingPickup: def.softTakeover && !rt.pickedUp, source: def.source,
            targets: def.targets.map(\.address))
    }
}
