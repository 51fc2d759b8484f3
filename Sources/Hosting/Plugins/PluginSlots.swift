import Engine
import LV2

/// A live renderer's plugins, each in a slot that takes a replacement while it
/// plays (`SwappableChannelPlugin`, `SwappableInsert`): a mapping reload that
/// gives a channel another instrument or a strip another effect builds the new
/// plugin here, off the render thread, and the slot crossfades to it. The
/// zones' `midi-fx` chains have slots of their own (`ZoneRouter.maxEffects`),
/// which a reload fills or refills (`KeyboardRouting.placeEffects`).
public final class PluginSlots {
    /// The crossfade, in seconds.
    public static let fadeSeconds = 0.02
    private var instruments: [Int: SwappableChannelPlugin] = [:]
    /// By place in the `PluginHost`'s `inserts`.
    private var inserts: [SwappableInsert] = []
    /// The zones' MIDI effect chains, by number (the number `KeyboardRouting` routes to).
    private var midiEffects: [SwappableMIDIEffect] = []
    private var sampleRate = 0, maxFrames = 0
    private var parameters: ParameterStore?

    public init() {}

    private var fadeFrames: Int { max(1, Int(Double(sampleRate) * Self.fadeSeconds)) }

    func prepare(sampleRate: Int, maxFrames: Int, parameters: ParameterStore) {
        self.sampleRate = sampleRate; self.maxFrames = maxFrames; self.parameters = parameters
    }

    /// The next insert (in the host's `inserts` order), in a slot.
    func hold(_ insert: any AudioInsert) -> any AudioInsert {
        let slot = SwappableInsert(insert, maxFrames: maxFrames, fadeFrames: fadeFrames)
        inserts.append(slot)
        return slot
    }

    /// Channel `channel`'s instrument, in a slot.
    func hold(_ plugin: any ChannelPlugin, channel: Int) -> any ChannelPlugin {
        let slot = SwappableChannelPlugin(plugin, maxFrames: maxFrames, fadeFrames: fadeFrames)
        instruments[channel] = slot
        return slot
    }

    /// MIDI effect slot `midiEffects.count`, holding `effect` (nil: empty until a reload fills it).
    func holdMIDIEffect(_ effect: (any MIDIEffect)?) -> any MIDIEffect {
        let slot = SwappableMIDIEffect(effect)
        midiEffects.append(slot)
        return slot
    }

    /// How many MIDI effect slots the renderer runs.
    public var midiEffectSlots: Int { midiEffects.count }

    /// Makes a chain for each of `placed` (specs `plugins` has registered) and
    /// offers it to its slot: from the render thread's next block it takes the
    /// slot's messages, and the chain it replaces is sent All Notes Off. Off
    /// the render thread. Stops at the first chain that cannot be made: the
    /// ones before it are offered (returned), the rest not.
    public func swapMIDIEffects(_ placed: [(slot: Int, spec: MIDIEffectSpec)], from plugins: PluginHost)
        -> (offered: [(slot: Int, spec: MIDIEffectSpec)], error: LV2Error?) {
        guard let parameters else { return ([], nil) }
        var offered: [(slot: Int, spec: MIDIEffectSpec)] = []
        for (slot, spec) in placed where slot < midiEffects.count {
            do {
                midiEffects[slot].replace(with: try plugins.makeMIDIEffect(spec, sampleRate: sampleRate, maxFrames: maxFrames,
                                                                          offline: false, parameters: parameters))
            } catch { return (offered, error) }
            offered.append((slot, spec))
        }
        return (offered, nil)
    }

    /// Makes the plugins `changes` lists (committed to `plugins`) and
    /// offers each to its slot: from the render thread's next block, it
    /// crossfades in. Off the render thread.
    public func swap(_ changes: PluginHost.Changes, from plugins: PluginHost) throws(LV2Error) {
        guard let parameters else { return }
        for spec in changes.instruments {
            guard let slot = instruments[spec.channel] else { continue }
            slot.replace(with: try plugins.makeInstrument(spec, sampleRate: sampleRate, maxFrames: maxFrames, offline: false,
                                                         parameters: parameters))
        }
        for (k, _) in changes.inserts where k < inserts.count {
            inserts[k].replace(with: try plugins.makeInsert(k, sampleRate: sampleRate, maxFrames: maxFrames, offline: false,
                                                            parameters: parameters))
        }
    }

    /// True while a replacement waits to be taken or a replaced plugin to be freed.
    public var isSwapping: Bool {
        instruments.values.contains { $0.isSwapping } || inserts.contains { $0.isSwapping } || midiEffects.contains { $0.isSwapping }
    }

    /// Frees the plugins the render thread has replaced. Off the render thread.
    public func collectRetired() {
        for slot in instruments.values { slot.collectRetired() }
        for slot in inserts { slot.collectRetired() }
        for slot in midiEffects { slot.collectRetired() }
    }
}
