import Engine
import LV2

/// A live renderer's plugins, each in a slot that takes a replacement while it
/// plays (`SwappableChannelPlugin`, `SwappableInsert`): a mapping reload that
/// gives a channel another instrument or a strip another effect builds the new
/// plugin here, off the render thread, and the slot crossfades to it.
public final class PluginSlots {
    /// The crossfade, in seconds.
    public static let fadeSeconds = 0.02
    private var instruments: [Int: SwappableChannelPlugin] = [:]
    /// By place in the `PluginHost`'s `inserts`.
    private var inserts: [SwappableInsert] = []
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
    public var isSwapping: Bool { instruments.values.contains { $0.isSwapping } || inserts.contains { $0.isSwapping } }

    /// Frees the plugins the render thread has replaced. Off the render thread.
    public func collectRetired() {
        for slot in instruments.values { slot.collectRetired() }
        for slot in inserts { slot.collectRetired() }
    }
}
