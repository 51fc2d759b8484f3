import Foundation
import MIDI
import MappingFiles
import Parameters

/// Scenes, beside the hub's values: a mapping's named sets of presets,
/// parameter values and control values, switched to by name or by a control
/// targeting `scene.select`.
extension ControlHub {
    /// The mapping's scene names, in file order.
    public var sceneNames: [String] { lock.withLock { currentMapping?.scenes.map(\.name) ?? [] } }

    /// The scene switched to last (nil before any, and after a reload).
    public var currentScene: String? {
        lock.withLock { sceneIndex.flatMap { i in currentMapping?.scenes[i].name } }
    }

    /// Which rig a view shows: the mapping's generation and the current
    /// scene. Cheap (no copy): a view that polls compares it and asks for
    /// `rigView` only when it moved.
    public var rigState: RigState { lock.withLock { RigState(generation: generation, scene: sceneIndex) } }

    /// The current scene and the zones in force, as a view shows them
    /// (`ControlMapping.zones(inScene:)` in short). One consistent look.
    public var rigView: RigView {
        lock.withLock { RigView(mapping: currentMapping, state: RigState(generation: generation, scene: sceneIndex)) }
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
    func applyPendingScene() {
        guard let i = pendingScene else { return }
        pendingScene = nil
        applyScene(i)
    }

    /// Under the lock: every value of scene `i` goes out as a change, in order —
    /// each channel's bank select (CC 0) before its program change, then the
    /// parameters, then the controls (moved as a UI would; the hardware picks
    /// them up). Notes are not touched: held ones sound on with the preset
    /// they started with and their note-offs reach the sampler as always.
    func applyScene(_ i: Int) {
        guard let scenes = currentMapping?.scenes, scenes.indices.contains(i) else { return }
        let scene = scenes[i]
        sceneIndex = i
        for setup in scene.channels { selectPresetLocked(setup) }
        for setting in scene.settings { publishLocked(setting.address, setting.value) }
        for control in scene.controls { surface.setValue(control.value, ofControl: control.name) }
        pendingScene = nil  // the scene's own controls do not switch again
        values[ParameterAddress.sceneSelect.index] = Double(i)
        surface.parameterDidChange(.sceneSelect, value: Double(i))
        sceneObservers.send(SceneChange(mapping: currentMapping, scene: i, mappingChanged: false))
    }

    /// Calls `handler` with the mapping and the scene switched to (its place
    /// in the mapping's `scenes:`; nil when none is current, as after a
    /// reload): now, then at each switch and each reload (`mappingChanged`),
    /// before the switch returns — so what a scene changes besides values (its
    /// zones) is in place for the next message. Under the hub's lock: the
    /// handler must not call the hub.
    @discardableResult
    public func observeScenes(_ handler: @escaping (SceneChange) -> Void) -> SubscriptionToken {
        lock.withLock {
            handler(SceneChange(mapping: currentMapping, scene: sceneIndex, mappingChanged: true))
            return sceneObservers.add(handler)
        }
    }

    public func unobserveScenes(_ token: SubscriptionToken) {
        lock.withLock { sceneObservers.remove(token) }
    }

    /// Selects a preset on `channel` as a keyboard would: bank select (CC 0;
    /// none for 128, channel 10's own bank) then program change, through the
    /// same path as a scene's, so held notes sound on. Any thread.
    public func selectPreset(onChannel channel: Channel, bank: Int, program: UInt7) {
        lock.withLock { selectPresetLocked(ChannelSetup(channel: channel, bank: bank, program: program)) }
    }

    /// Under the lock: a channel's bank select (CC 0) then program change, as a keyboard selects a preset.
    func selectPresetLocked(_ setup: ChannelSetup) {
        // Bank 128 on channel 10 is FluidSynth's percussion channel's own bank: no bank select.
        if let bank = setup.bank, bank <= 127 { publishLocked(.channelCC(setup.channel, 0), Double(bank)) }
        if let program = setup.program { publishLocked(.channelProgram(setup.channel), Double(program.value)) }
    }
}

/// What `ControlHub.observeScenes` hands its observers.
public struct SceneChange: Sendable {
    public var mapping: ControlMapping?
    /// The scene's place in `mapping.scenes` (nil: none is current).
    public var scene: Int?
    /// The mapping is new (the first call, a reload): what was built from the last one is stale.
    public var mappingChanged: Bool
}

/// What `ControlHub.rigState` compares: a reload moves `generation`, a switch `scene`.
public struct RigState: Hashable, Sendable {
    public var generation: Int
    /// The current scene's place in the mapping's `scenes:` (nil: none is current).
    public var scene: Int?
    public init(generation: Int, scene: Int?) { self.generation = generation; self.scene = scene }
}

/// The rig as the web page and `live`'s view show it: the mapping's scenes,
/// the current one, and the zones in force (the current scene's own, else the
/// top level's), each in short.
public struct RigView: Hashable, Sendable {
    public var state: RigState
    /// The mapping's scene names, in file order.
    public var sceneNames: [String]
    public var zones: [ZoneSummary]

    /// The current scene's name (nil: none is current, or the mapping has no scenes).
    public var sceneName: String? { state.scene.flatMap { sceneNames.indices.contains($0) ? sceneNames[$0] : nil } }

    /// Whether there is anything to show: zones, or scenes to switch between.
    public var isEmpty: Bool { zones.isEmpty && sceneNames.isEmpty }

    public init(mapping: ControlMapping?, state: RigState) {
        self.state = state
        sceneNames = mapping?.scenes.map(\.name) ?? []
        zones = ZoneSummary.list(mapping?.zones(inScene: state.scene) ?? [])
    }
}
