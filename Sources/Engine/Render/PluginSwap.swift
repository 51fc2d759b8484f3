import Synchronization

/// A plugin replaced while the render thread runs it (a mapping reload that
/// gives a channel another instrument or a strip another effect), without a
/// click: the replacement is built off the render thread and offered here;
/// the render thread takes it at a block's start, runs both for `fadeFrames`
/// while it crossfades from the old one's output to the new one's, then hands
/// the old one back to be freed off the render thread (`collectRetired`).
///
/// Hand-over in both directions is one atomic word holding a retained
/// reference; the render thread never frees a plugin, allocates or locks.
final class PluginHandover<Plugin: AnyObject>: @unchecked Sendable {
    /// The one being offered, not yet taken (a retained `Plugin`, 0 for none).
    private let offered = Atomic<UInt>(0)
    /// The one replaced, waiting to be freed off the render thread.
    private let retired = Atomic<UInt>(0)

    /// Any thread but the render thread: `next` replaces whatever was offered
    /// and not yet taken (that one is freed here).
    func offer(_ next: Plugin) {
        collectRetired()
        let old = offered.exchange(UInt(bitPattern: Unmanaged.passRetained(next).toOpaque()), ordering: .acquiringAndReleasing)
        release(old)
    }

    /// Render thread: the plugin offered, if any (now the caller's).
    @inline(__always)
    func take() -> Plugin? {
        guard offered.load(ordering: .relaxed) != 0 else { return nil }
        let bits = offered.exchange(0, ordering: .acquiringAndReleasing)
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
        return Unmanaged<Plugin>.fromOpaque(pointer).takeRetainedValue()
    }

    /// Render thread: keeps `old` alive until `collectRetired` frees it; false
    /// when the previous one has not been collected yet (try again next block).
    @inline(__always)
    func retire(_ old: Plugin) -> Bool {
        // Only the render thread makes it non-zero: once seen empty, it stays so until stored.
        guard retired.load(ordering: .acquiring) == 0 else { return false }
        retired.store(UInt(bitPattern: Unmanaged.passRetained(old).toOpaque()), ordering: .releasing)
        return true
    }

    /// Any thread but the render thread: frees the plugin the render thread retired.
    func collectRetired() {
        release(retired.exchange(0, ordering: .acquiringAndReleasing))
    }

    /// An offered plugin waits to be taken, or a replaced one to be freed.
    var isBusy: Bool { offered.load(ordering: .acquiring) != 0 || retired.load(ordering: .acquiring) != 0 }

    private func release(_ bits: UInt) {
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return }
        Unmanaged<Plugin>.fromOpaque(pointer).release()
    }

    deinit {
        release(offered.exchange(0, ordering: .relaxed))
        release(retired.exchange(0, ordering: .relaxed))
    }

    /// Render thread: `out = out·(1 − g) + other·g`, g rising from `done` to
    /// `done + frames` over `length` frames (a straight crossfade: both plugins
    /// hear the same input, so their outputs are alike and their gains sum to one).
    @inline(__always)
    static func crossfade(_ out: UnsafeMutablePointer<Float>, _ other: UnsafePointer<Float>, frames: Int, done: Int, length: Int) {
        let step = 1 / Float(length)
        for i in 0..<frames {
            let g = min(1, Float(done + i + 1) * step)
            out[i] += (other[i] - out[i]) * g
        }
    }
}

/// Box for an existential, so the hand-over moves one class reference and the
/// render thread never casts.
final class InsertBox { let insert: any AudioInsert; init(_ insert: any AudioInsert) { self.insert = insert } }
final class ChannelPluginBox { let plugin: any ChannelPlugin; init(_ plugin: any ChannelPlugin) { self.plugin = plugin } }

/// An insert slot whose effect can be replaced while it runs (`replace`), with a crossfade.
public final class SwappableInsert: AudioInsert, @unchecked Sendable {
    private var active: InsertBox
    private var incoming: InsertBox?
    private var faded = 0
    private let handover = PluginHandover<InsertBox>()
    private let scratch: UnsafeMutablePointer<Float>
    private let maxFrames: Int
    /// The crossfade's length, in frames.
    public let fadeFrames: Int

    /// `maxFrames`: the largest block; `fadeFrames`: the crossfade (e.g. 20 ms of frames).
    public init(_ insert: any AudioInsert, maxFrames: Int, fadeFrames: Int) {
        active = InsertBox(insert)
        self.maxFrames = maxFrames
        self.fadeFrames = max(1, fadeFrames)
        scratch = .allocate(capacity: 2 * maxFrames)
    }

    deinit { scratch.deallocate() }

    /// Off the render thread: `next` (built and activated for this slot's
    /// blocks) takes over from the next block, crossfaded in.
    public func replace(with next: any AudioInsert) { handover.offer(InsertBox(next)) }

    /// Off the render thread: frees what the render thread replaced.
    public func collectRetired() { handover.collectRetired() }

    /// An offered effect not yet taken, or a replaced one not yet freed.
    public var isSwapping: Bool { handover.isBusy }

    public var latency: Int { active.insert.latency }

    public func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int) {
        if incoming == nil, let next = handover.take() { incoming = next; faded = 0 }
        guard let next = incoming else {
            active.insert.process(left: left, right: right, frames: frames)
            return
        }
        let l = scratch, r = scratch + maxFrames
        l.update(from: left, count: frames); r.update(from: right, count: frames)
        active.insert.process(left: left, right: right, frames: frames)
        next.insert.process(left: l, right: r, frames: frames)
        PluginHandover<InsertBox>.crossfade(left, l, frames: frames, done: faded, length: fadeFrames)
        PluginHandover<InsertBox>.crossfade(right, r, frames: frames, done: faded, length: fadeFrames)
        faded += frames
        if faded >= fadeFrames, handover.retire(active) {
            active = next
            incoming = nil
        }
    }
}

/// A channel's instrument slot whose plugin can be replaced while it plays
/// (`replace`): from the swap on, the channel's messages reach both; the old
/// one's sound fades out as the new one's fades in. Notes held across the swap
/// end with the old plugin.
public final class SwappableChannelPlugin: ChannelPlugin, @unchecked Sendable {
    private var active: ChannelPluginBox
    private var incoming: ChannelPluginBox?
    private var faded = 0
    private let handover = PluginHandover<ChannelPluginBox>()
    private let scratch: UnsafeMutablePointer<Float>
    private let maxFrames: Int
    public let fadeFrames: Int

    public init(_ plugin: any ChannelPlugin, maxFrames: Int, fadeFrames: Int) {
        active = ChannelPluginBox(plugin)
        self.maxFrames = maxFrames
        self.fadeFrames = max(1, fadeFrames)
        scratch = .allocate(capacity: 2 * maxFrames)
    }

    deinit { scratch.deallocate() }

    public func replace(with next: any ChannelPlugin) { handover.offer(ChannelPluginBox(next)) }
    public func collectRetired() { handover.collectRetired() }
    public var isSwapping: Bool { handover.isBusy }

    public func receive(_ message: ChannelMessage, at offset: Int) {
        // Taken here, before the block's messages, so the new plugin hears all of them.
        if incoming == nil, let next = handover.take() { incoming = next; faded = 0 }
        active.plugin.receive(message, at: offset)
        incoming?.plugin.receive(message, at: offset)
    }

    public func render(frames: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        if incoming == nil, let next = handover.take() { incoming = next; faded = 0 }
        active.plugin.render(frames: frames, left: left, right: right)
        guard let next = incoming else { return }
        let l = scratch, r = scratch + maxFrames
        next.plugin.render(frames: frames, left: l, right: r)
        PluginHandover<ChannelPluginBox>.crossfade(left, l, frames: frames, done: faded, length: fadeFrames)
        PluginHandover<ChannelPluginBox>.crossfade(right, r, frames: frames, done: faded, length: fadeFrames)
        faded += frames
        if faded >= fadeFrames, handover.retire(active) {
            active = next
            incoming = nil
        }
    }

    public var latency: Int { active.plugin.latency }

    public func silence() {
        active.plugin.silence()
        incoming?.plugin.silence()
    }
}
