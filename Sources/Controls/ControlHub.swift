import ControlDefinitions
import Foundation
import MIDI
import MappingFiles
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
///
/// Beside the values and their observers: MIDI learn (`ControlHub+Learn`,
/// with `LearnedBindingFile` writing the mapping file) and scenes
/// (`ControlHub+Scenes`).
public final class ControlHub: @unchecked Sendable {
    let lock = NSLock()
    var currentMapping: ControlMapping?
    /// The controls; they read and write `values` (one copy, the hub's).
    var surface: ControlSurface
    let values = ParameterValues()
    var subscribers = ObserverList<TimedParameterChange>()
    /// The sample-clock frame of the message `receive` is handling (nil outside it, or untimed).
    private var messageFrame: UInt64?
    /// The frame of the latest timed message that fired a momentary control (its release follows a block on).
    private var momentaryFrame: UInt64?
    var learnObservers = ObserverList<LearnEvent>()
    /// Feedback to controllers: who sends the messages `tick` collects.
    private var feedbackObservers = ObserverList<[MIDIMessage]>()
    /// Told the scene switched to and the mapping reloaded (`observeScenes`).
    var sceneObservers = ObserverList<SceneChange>()
    /// MIDI learn: what is armed, and the detector that finds the moving source.
    var learnTarget: LearnTarget?
    var learnDetector = LearnDetector()
    /// Scenes: the one switched to last, and one a control asked for (applied once the surface is done).
    var sceneIndex: Int?
    var pendingScene: Int?
    /// Mappings swapped in since the start (`replace`).
    private(set) var generation = 0
    /// What each channel plays (bank select and program change the hub sent, the engine's reports).
    var presets: ChannelPresets
    /// A watcher reloads the mapping file when it changes (`reloadsFromItsWatcher`).
    var fileWatched = false

    /// `startValues`: parameters set before anything runs (e.g. `--reverb-level`),
    /// in the parameters' own units; NaN and infinity are ignored.
    public init(mapping: ControlMapping?, startValues: [ParameterChange] = []) {
        currentMapping = mapping
        presets = ChannelPresets(mapping: mapping)
        surface = ControlSurface(controls: mapping?.controls ?? [], values: values)
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
    /// channel with its own font) is returned as lines to show. A channel's
    /// `lv2:` is the host's to change (it swaps plugins in while running).
    @discardableResult
    public func replace(mapping: ControlMapping) -> [String] {
        lock.withLock {
            surface.releaseHeld()
            let next = ControlSurface(controls: mapping.controls, values: values)
            _ = next.subscribe { [unowned self] change in self.didChange(change) }
            for address in next.addresses { next.parameterDidChange(address, value: values[address.index]) }
            surface = next
            let before = currentMapping?.channels ?? []
            currentMapping = mapping
            generation += 1
            sceneIndex = nil
            // No scene is current: a program change to the one that was selects it again.
            next.markStale(.sceneSelect)
            sceneObservers.send(SceneChange(mapping: mapping, scene: nil, mappingChanged: true))
            var notApplied: [String] = []
            for setup in mapping.channels {
                let old = before.first { $0.channel == setup.channel }
                let ch = "channel \(setup.channel.intValue + 1)"
                if setup.lv2 != nil || old?.lv2 != nil { continue }
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

    /// A watcher (the live session's `MappingWatcher`) reloads the mapping
    /// file whenever it changes, plugins and `midi-fx` chains with it: what the
    /// hub writes into the file (a learned binding, a saved scene) then comes
    /// in through that one reload, not through a `replace` of the hub's own as
    /// well. Set before anything writes.
    public func reloadsFromItsWatcher() { lock.withLock { fileWatched = true } }

    /// After the hub wrote `mapping` into its file: swapped in, unless the watcher's reload brings it.
    func takeWritten(_ mapping: ControlMapping) {
        if !lock.withLock({ fileWatched }) { replace(mapping: mapping) }
    }

    /// Surface thread (under the lock): the surface has set `values`; pass it on.
    private func didChange(_ change: ParameterChange) {
        subscribers.send(TimedParameterChange(change, frame: messageFrame))
        presets.follow(change.address, Double(change.value))
        if change.address == .sceneSelect { pendingScene = Int(change.value) }
    }

    /// Adds a consumer of parameter changes. It is first handed every
    /// parameter whose value differs from the table's default (triggers
    /// excepted), then each change as it happens.
    @discardableResult
    public func subscribe(_ handler: @escaping (ParameterChange) -> Void) -> SubscriptionToken {
        subscribeTimed { handler($0.change) }
    }

    /// As `subscribe`, each change with the sample-clock frame of the message
    /// that made it (`receive(_:at:)`), so the engine can apply it there; the
    /// start values and every change made otherwise come untimed.
    @discardableResult
    public func subscribeTimed(_ handler: @escaping (TimedParameterChange) -> Void) -> SubscriptionToken {
        lock.withLock {
            for (index, value) in values.all {
                guard let info = ParameterRegistry.standard.info(at: index), info.kind != .trigger, value != info.defaultValue else { continue }
                handler(TimedParameterChange(ParameterChange(info.address, Float(value)), frame: nil))
            }
            return subscribers.add(handler)
        }
    }

    public func unsubscribe(_ token: SubscriptionToken) {
        lock.withLock { subscribers.remove(token) }
    }

    /// A MIDI message for the controls. True when a control used it (the
    /// caller should not also pass it to the sampler). `frame`: the frame of
    /// the sample clock the message plays at (`--timing stamped`, JACK), which
    /// the changes it makes carry to `subscribeTimed` — a scene it switches to
    /// included.
    public func receive(_ message: MIDIMessage, at frame: UInt64? = nil) -> Bool {
        let (used, learned) = lock.withLock { () -> (Bool, LearnCandidate?) in
            messageFrame = frame
            defer { messageFrame = nil }
            switch learnDetector.observe(message, armed: learnTarget != nil) {
            case .ignored:
                let used = surface.receive(message)
                if let frame, surface.hasFiredMomentary { momentaryFrame = max(momentaryFrame ?? 0, frame) }
                applyPendingScene()
                return (used, nil)
            case .consumed: return (true, nil)
            case .bound(let source): return (true, takeLearnCandidate(source))
            }
        }
        if let learned { completeLearn(learned) }
        return used
    }

    /// A momentary control fired and waits for `tick` to fall back to 0.
    public var hasFiredMomentary: Bool { lock.withLock { surface.hasFiredMomentary } }

    /// Sets a parameter from outside the controls (a UI, a scene, a script),
    /// in its own unit: clamped, passed to the subscribers; the controls that
    /// drive it follow (and wait for pickup). False for NaN or infinity.
    @discardableResult
    public func set(_ address: ParameterAddress, to value: Double) -> Bool {
        guard let v = address.spec.clamp(value) else { return false }
        lock.withLock {
            publishLocked(address, v)
            if address == .sceneSelect { applyScene(Int(v)) }
        }
        return true
    }

    /// The engine's own state fed back (the transport's position and tempo):
    /// the hub records it and the controls follow; nothing is published.
    public func engineDidChange(_ address: ParameterAddress, to value: Double) {
        guard let v = address.spec.clamp(value) else { return }
        // The surface records it in the values it shares with the hub.
        lock.withLock { surface.parameterDidChange(address, value: v) }
    }

    /// The render-block boundary (the control thread's tick): momentary
    /// controls fall back to 0, and the feedback observers get what changed
    /// since the last tick (one latest value per control).
    ///
    /// `blockFrames`: the render's block now. A momentary fired by a timed
    /// message (`receive(_:at:)`) then falls back a block after that message's
    /// frame — the block after the one its press lands in — so the press is
    /// heard for one block wherever the tick falls; without it, at once.
    public func tick(blockFrames: UInt64? = nil) {
        let (learned, feedback, observers) = lock.withLock { () -> (LearnCandidate?, [MIDIMessage], [([MIDIMessage]) -> Void]) in
            if surface.hasFiredMomentary, let pressed = momentaryFrame, let blockFrames { messageFrame = pressed &+ blockFrames }
            surface.tick()
            messageFrame = nil
            momentaryFrame = nil
            let learned = learnTarget == nil ? nil : learnDetector.tick().flatMap(takeLearnCandidate)
            guard !feedbackObservers.isEmpty else { return (learned, [], []) }
            return (learned, surface.takeFeedback(), feedbackObservers.handlers)
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
        lock.withLock { feedbackObservers.add(handler) }
    }

    public func unobserveFeedback(_ token: SubscriptionToken) {
        lock.withLock { feedbackObservers.remove(token) }
    }

    /// The value the hub holds for a parameter, in its own unit.
    public func value(of address: ParameterAddress) -> Double { lock.withLock { values[address] } }

    /// Every control's state, in mapping order (for a view).
    public var controlStates: [ControlState] { lock.withLock { surface.states } }

    /// The set of controls as one consistent look: which mapping (its
    /// generation moves at every `replace`: a reload, a learned binding), its
    /// definitions and every control's state. A front end that keeps its own
    /// list of the controls (the web surface) rebuilds it when the generation moves.
    public struct ControlSet: Sendable {
        public var generation: Int
        public var definitions: [ControlDefinition]
        public var states: [ControlState]
        /// The mapping's `groups:` order.
        public var groupOrder: [String]

        /// The controls' groups for a page.
        public var groups: [ControlGroup] { ControlGroup.arrange(definitions, order: groupOrder) }
    }

    public var controlSet: ControlSet {
        lock.withLock {
            ControlSet(generation: generation, definitions: surface.definitions, states: surface.states,
                       groupOrder: currentMapping?.groups ?? [])
        }
    }

    /// Counts the mappings swapped in since the start (0: the first one).
    public var mappingGeneration: Int { lock.withLock { generation } }

    /// Moves a control by name, as if its hardware had (a UI's widget).
    @discardableResult
    public func setControl(_ name: String, to value: Double) -> Bool {
        lock.withLock {
            defer { applyPendingScene() }
            return surface.setValue(value, ofControl: name)
        }
    }

    /// Under the lock: a value set from outside the controls, clamped, published
    /// even when unchanged; the controls follow. NaN and infinity are dropped.
    func publishLocked(_ address: ParameterAddress, _ value: Double) {
        guard let v = address.spec.clamp(value) else { return }
        subscribers.send(TimedParameterChange(ParameterChange(address, Float(v)), frame: messageFrame))
        presets.follow(address, v)
        surface.parameterDidChange(address, value: v)  // records it in the shared values; the controls follow
    }
}

/// A parameter change and the sample-clock frame of the message that made it
/// (nil: apply at once — a UI, a script, a start value, `--timing asap`).
public struct TimedParameterChange: Sendable {
    public var change: ParameterChange
    public var frame: UInt64?
    /// The engine reported it (`ControlHub.engineDidSelectPreset`): it plays
    /// so already, and the engine's own subscriber must not send it again.
    public var fromEngine: Bool
    public init(_ change: ParameterChange, frame: UInt64?, fromEngine: Bool = false) {
        self.change = change
        self.frame = frame
        self.fromEngine = fromEngine
    }
}
