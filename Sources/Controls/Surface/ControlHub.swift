import Foundation
import MIDI
import Parameters

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
    // MIDI learn: what is armed, the detector, who hears about it.
    private var learnTarget: LearnTarget?
    private var learnDetector = LearnDetector()
    private var learnObservers: [(id: Int, handler: (LearnEvent) -> Void)] = []
    // Scenes: the one switched to last, and one a control asked for (applied once the surface is done).
    private var sceneIndex: Int?
    private var pendingScene: Int?
    // Feedback to controllers: who sends the messages `tick` collects.
    private var feedbackObservers: [(id: Int, handler: ([MIDIMessage]) -> Void)] = []

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
    ///
    /// A `channels:` preset (bank, program) the new file changed is selected
    /// as a scene selects it — bank select and program change, through the
    /// engine's queue, from the fonts already loaded. What only a restart can
    /// do (another SoundFont or instrument for a channel, a new preset on a
    /// channel with its own font) is returned as lines to show.
    @discardableResult
    public func replace(mapping: ControlMapping) -> [String] {
        lock.withLock {
            surface.releaseHeld()
            let next = ControlSurface(controls: mapping.controls)
            _ = next.subscribe { [unowned self] change in self.didChange(change) }
            for address in next.addresses { next.parameterDidChange(address, value: values[address.index]) }
            surface = next
            let before = currentMapping?.channels ?? []
            currentMapping = mapping
            sceneIndex = nil
            var notApplied: [String] = []
            for setup in mapping.channels {
                let old = before.first { $0.channel == setup.channel }
                let ch = "channel \(setup.channel.intValue + 1)"
                if setup.soundFont != old?.soundFont || setup.instrument != old?.instrument {
                    notApplied.append("\(ch): a new soundfont or instrument takes effect at the next start")
                } else if setup.bank != old?.bank || setup.program != old?.program {
                    if setup.soundFont != nil {
                        notApplied.append("\(ch): a new preset from its own soundfont takes effect at the next start")
                    } else if let bank = setup.bank, bank > 127, !(bank == 128 && setup.channel.intValue == 9) {
                        notApplied.append("\(ch): bank \(bank) (beyond bank select's 0…127) takes effect at the next start")
                    } else {
                        selectPresetLocked(setup)
                    }
                }
            }
            return notApplied
        }
    }

    /// Surface thread (under the lock): record and pass on.
    private func didChange(_ change: ParameterChange) {
        values[change.index] = Double(change.value)
        for s in subscribers { s.handler(change) }
        if change.address == .sceneSelect { pendingScene = Int(change.value) }
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
        let (used, learned) = lock.withLock { () -> (Bool, LearnCandidate?) in
            switch learnDetector.observe(message, armed: learnTarget != nil) {
            case .ignored:
                let used = surface.receive(message)
                applyPendingScene()
                return (used, nil)
            case .consumed: return (true, nil)
            case .bound(let source): return (true, takeLearnCandidate(source))
            }
        }
        if let learned { completeLearn(learned) }
        return used
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
            if address == .sceneSelect { applyScene(Int(v)) }
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

    /// The render-block boundary (the control thread's tick): momentary
    /// controls fall back to 0, and the feedback observers get what changed
    /// since the last tick (one latest value per control).
    public func tick() {
        let (learned, feedback, observers) = lock.withLock { () -> (LearnCandidate?, [MIDIMessage], [([MIDIMessage]) -> Void]) in
            surface.tick()
            let learned = learnTarget == nil ? nil : learnDetector.tick().flatMap(takeLearnCandidate)
            guard !feedbackObservers.isEmpty else { return (learned, [], []) }
            return (learned, surface.takeFeedback(), feedbackObservers.map(\.handler))
        }
        if !feedback.isEmpty { for o in observers { o(feedback) } }
        if let learned { completeLearn(learned) }
    }

    /// Calls `handler` at each `tick` with the messages that bring the
    /// controllers up to date (`ControlSurface.takeFeedback`): a control's
    /// new state after another control, `set`, a scene or a reload moved its
    /// parameter, a toggle's LED, an encoder's ring — never a value the
    /// controller sent itself. The first tick sends every control's state.
    /// On the ticking thread, outside the hub's lock.
    @discardableResult
    public func observeFeedback(_ handler: @escaping ([MIDIMessage]) -> Void) -> SubscriptionToken {
        lock.withLock {
            nextID += 1
            feedbackObservers.append((nextID, handler))
            return SubscriptionToken(id: nextID)
        }
    }

    public func unobserveFeedback(_ token: SubscriptionToken) {
        lock.withLock { feedbackObservers.removeAll { $0.id == token.id } }
    }

    /// The value the hub holds for a parameter, in its own unit.
    public func value(of address: ParameterAddress) -> Double { lock.withLock { values[address.index] } }

    /// Every control's state, in mapping order (for a view).
    public var controlStates: [ControlState] { lock.withLock { surface.states } }

    /// Moves a control by name, as if its hardware had (a UI's widget).
    @discardableResult
    public func setControl(_ name: String, to value: Double) -> Bool {
        lock.withLock {
            defer { applyPendingScene() }
            return surface.setValue(value, ofControl: name)
        }
    }

    // MARK: - MIDI learn

    /// Arms MIDI learn: the next CC, 14-bit CC, NRPN/RPN or note that moves
    /// (not a repeat of the value it last sent, not a note-off) binds to
    /// `target`; the message that binds is not played. The binding is
    /// written into the mapping file (its text patched, comments and layout
    /// kept, checked as `carillon mapping check` would, saved atomically) and
    /// the mapping with it swapped in; observers get `.bound`, or `.failed`
    /// with the checker's message, in which case nothing changed. Arming
    /// again replaces the target. Any thread.
    public func learn(_ target: LearnTarget) throws(LearnError) {
        lock.lock()
        do {
            defer { lock.unlock() }
            guard let mapping = currentMapping else { throw LearnError.noMapping }
            if case .control(let name) = target {
                guard let def = mapping.controls.first(where: { $0.name == name }) else { throw LearnError.unknownControl(name) }
                guard def.kind != .readout else { throw LearnError.readout(name) }
            }
            learnTarget = target
            learnDetector.reset()
        }
        notifyLearn(.armed(target))
    }

    /// Disarms learn, if armed. Any thread.
    public func cancelLearn() {
        let target = lock.withLock { () -> LearnTarget? in
            defer { learnTarget = nil; learnDetector.reset() }
            return learnTarget
        }
        if let target { notifyLearn(.cancelled(target)) }
    }

    /// What learn waits to bind, nil when not armed.
    public var learning: LearnTarget? { lock.withLock { learnTarget } }

    /// Calls `handler` with every learn event (armed, bound, failed,
    /// cancelled), on the thread that caused it, outside the hub's lock.
    @discardableResult
    public func observeLearn(_ handler: @escaping (LearnEvent) -> Void) -> SubscriptionToken {
        lock.withLock {
            nextID += 1
            learnObservers.append((nextID, handler))
            return SubscriptionToken(id: nextID)
        }
    }

    public func unobserveLearn(_ token: SubscriptionToken) {
        lock.withLock { learnObservers.removeAll { $0.id == token.id } }
    }

    private struct LearnCandidate {
        var target: LearnTarget
        var source: ControlSource
        var mapping: ControlMapping
    }

    /// Under the lock: disarm and take what is needed to finish outside it.
    private func takeLearnCandidate(_ source: ControlSource) -> LearnCandidate? {
        guard let target = learnTarget, let mapping = currentMapping else { return nil }
        learnTarget = nil
        learnDetector.reset()
        return LearnCandidate(target: target, source: source, mapping: mapping)
    }

    /// Outside the lock (file I/O): patch, check, save, swap in, report.
    private func completeLearn(_ c: LearnCandidate) {
        let path = c.mapping.file
        do throws(MappingPatch.Failure) {
            let text: String
            do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
                throw MappingPatch.Failure("cannot read \(path)")
            }
            let result = try Self.learnedText(c.target, source: c.source, mapping: c.mapping, fileText: text)
            try Self.writeAtomically(result.text, to: path)
            replace(mapping: result.mapping)
            notifyLearn(.bound(LearnedBinding(control: result.control, source: c.source, created: result.created, file: path)))
        } catch {
            notifyLearn(.failed(c.target, error.description))
        }
    }

    /// A temporary file beside the mapping, renamed over it: a reader (the
    /// hot-reload watcher, an editor) sees the old file or the new, never half.
    static func writeAtomically(_ text: String, to path: String) throws(MappingPatch.Failure) {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).learn-\(getpid()).tmp").path
        do {
            try text.write(toFile: temporary, atomically: false, encoding: .utf8)
            if let mode = try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] {
                try? FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: temporary)
            }
        } catch {
            unlink(temporary)
            throw MappingPatch.Failure("cannot write \(temporary)")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw MappingPatch.Failure("cannot replace \(path) (\(reason))")
        }
    }

    private func notifyLearn(_ event: LearnEvent) {
        let observers = lock.withLock { learnObservers }
        for o in observers { o.handler(event) }
    }

    // MARK: - Scenes

    /// The mapping's scene names, in file order.
    public var sceneNames: [String] { lock.withLock { currentMapping?.scenes.map(\.name) ?? [] } }

    /// The scene switched to last (nil before any, and after a reload).
    public var currentScene: String? {
        lock.withLock { sceneIndex.flatMap { i in currentMapping?.scenes[i].name } }
    }

    /// Switches to a scene by name: false when the mapping has none of that name.
    @discardableResult
    public func selectScene(named name: String) -> Bool {
        lock.withLock {
            guard let i = currentMapping?.scenes.firstIndex(where: { $0.name == name }) else { return false }
            applyScene(i)
            return true
        }
    }

    /// Under the lock: a scene a control asked for while the surface was busy.
    private func applyPendingScene() {
        guard let i = pendingScene else { return }
        pendingScene = nil
        applyScene(i)
    }

    /// Under the lock: every value of scene `i` goes out as a change, in order —
    /// each channel's bank select (CC 0) before its program change, then the
    /// parameters, then the controls (moved as a UI would; the hardware picks
    /// them up). Notes are not touched: held ones sound on with the preset
    /// they started with and their note-offs reach the sampler as always.
    private func applyScene(_ i: Int) {
        guard let scenes = currentMapping?.scenes, scenes.indices.contains(i) else { return }
        let scene = scenes[i]
        sceneIndex = i
        for setup in scene.channels { selectPresetLocked(setup) }
        for setting in scene.settings { publishLocked(setting.address, setting.value) }
        for control in scene.controls { surface.setValue(control.value, ofControl: control.name) }
        pendingScene = nil  // the scene's own controls do not switch again
        values[ParameterAddress.sceneSelect.index] = Double(i)
        surface.parameterDidChange(.sceneSelect, value: Double(i))
    }

    /// Under the lock: a channel's bank select (CC 0) then program change, as a keyboard selects a preset.
    private func selectPresetLocked(_ setup: ChannelSetup) {
        // Bank 128 on channel 10 is FluidSynth's percussion channel's own bank: no bank select.
        if let bank = setup.bank, bank <= 127 { publishLocked(.channelCC(setup.channel, 0), Double(bank)) }
        if let program = setup.program { publishLocked(.channelProgram(setup.channel), Double(program.value)) }
    }

    /// Under the lock: a value set from outside the controls, published even when unchanged.
    private func publishLocked(_ address: ParameterAddress, _ value: Double) {
        guard let v = address.spec.clamp(value) else { return }
        values[address.index] = v
        let change = ParameterChange(address, Float(v))
        for s in subscribers { s.handler(change) }
        surface.parameterDidChange(address, value: v)
    }
}
