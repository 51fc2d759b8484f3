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

/// What both swappable slots keep: the plugin playing, the one fading in (its
/// block in `left`/`right`), the hand-over and how far the fade has come.
final class SwapState<Box: AnyObject> {
    private(set) var active: Box
    private(set) var incoming: Box?
    let handover = PluginHandover<Box>()
    let fadeFrames: Int
    /// The incoming plugin's block.
    let left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>
    private var faded = 0

    init(_ box: Box, maxFrames: Int, fadeFrames: Int) {
        active = box
        self.fadeFrames = max(1, fadeFrames)
        left = .allocate(capacity: 2 * maxFrames)
        right = left + maxFrames
    }

    deinit { left.deallocate() }

    /// Render thread: an offered plugin starts fading in (unless one already is).
    @inline(__always)
    func takeOffer() {
        if incoming == nil, let next = handover.take() { incoming = next; faded = 0 }
    }

    /// Render thread: crossfades `out` into the incoming plugin's block; once
    /// it has faded in, it is the active one and the old one is retired.
    @inline(__always)
    func blend(intoLeft outL: UnsafeMutablePointer<Float>, right outR: UnsafeMutablePointer<Float>, frames: Int) {
        PluginHandover<Box>.crossfade(outL, left, frames: frames, done: faded, length: fadeFrames)
        PluginHandover<Box>.crossfade(outR, right, frames: frames, done: faded, length: fadeFrames)
        faded += frames
        if faded >= fadeFrames, let next = incoming, handover.retire(active) {
            active = next
            incoming = nil
        }
    }
}

/// An insert slot whose effect can be replaced while it runs (`replace`), with a crossfade.
public final class SwappableInsert: AudioInsert, @unchecked Sendable {
    private let state: SwapState<InsertBox>

    /// `maxFrames`: the largest block; `fadeFrames`: the crossfade (e.g. 20 ms of frames).
    public init(_ insert: any AudioInsert, maxFrames: Int, fadeFrames: Int) {
        state = SwapState(InsertBox(insert), maxFrames: maxFrames, fadeFrames: fadeFrames)
    }

    /// The crossfade's length, in frames.
    public var fadeFrames: Int { state.fadeFrames }

    /// Off the render thread: `next` (built and activated for this slot's
    /// blocks) takes over from the next block, crossfaded in.
    public func replace(with next: any AudioInsert) { state.handover.offer(InsertBox(next)) }

    /// Off the render thread: frees what the render thread replaced.
    public func collectRetired() { state.handover.collectRetired() }

    /// An offered effect not yet taken, or a replaced one not yet freed.
    public var isSwapping: Bool { state.handover.isBusy }

    public var latency: Int { state.active.insert.latency }

    public func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int) {
        state.takeOffer()
        guard let next = state.incoming else {
            state.active.insert.process(left: left, right: right, frames: frames)
            return
        }
        // Both effects hear the same input.
        state.left.update(from: left, count: frames); state.right.update(from: right, count: frames)
        state.active.insert.process(left: left, right: right, frames: frames)
        next.insert.process(left: state.left, right: state.right, frames: frames)
        state.blend(intoLeft: left, right: right, frames: frames)
    }
}

/// A channel's instrument slot whose plugin can be replaced while it plays
/// (`replace`): from the swap on, the channel's messages reach both; the old
/// one's sound fades out as the new one's fades in. Notes held across the swap
/// end with the old plugin.
public final class SwappableChannelPlugin: ChannelPlugin, @unchecked Sendable {
    private let state: SwapState<ChannelPluginBox>

    public init(_ plugin: any ChannelPlugin, maxFrames: Int, fadeFrames: Int) {
        state = SwapState(ChannelPluginBox(plugin), maxFrames: maxFrames, fadeFrames: fadeFrames)
    }

    public var fadeFrames: Int { state.fadeFrames }
    public func replace(with next: any ChannelPlugin) { state.handover.offer(ChannelPluginBox(next)) }
    public func collectRetired() { state.handover.collectRetired() }
    public var isSwapping: Bool { state.handover.isBusy }
    public var latency: Int { state.active.plugin.latency }

    public func receive(_ message: ChannelMessage, at offset: Int) {
        // Taken here, before the block's messages, so the new plugin hears all of them.
        state.takeOffer()
        state.active.plugin.receive(message, at: offset)
        state.incoming?.plugin.receive(message, at: offset)
    }

    public func render(frames: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        state.takeOffer()
        state.active.plugin.render(frames: frames, left: left, right: right)
        guard let next = state.incoming else { return }
        next.plugin.render(frames: frames, left: state.left, right: state.right)
        state.blend(intoLeft: left, right: right, frames: frames)
    }

    public func silence() {
        state.active.plugin.silence()
        state.incoming?.plugin.silence()
    }
}

/// A MIDI effect slot (a zone's `midi-fx` chain, live) whose effect a mapping
/// reload can put in, or replace, while the render thread runs it. No
/// crossfade: the effect taken starts with the messages of the block it is
/// taken in, and the one it replaces is sent All Notes Off in that same block,
/// so every note it made ends, then is retired (freed off the render thread).
/// An empty slot takes no message and sends none.
public final class SwappableMIDIEffect: MIDIEffect, @unchecked Sendable {
    final class Box { let effect: any MIDIEffect; init(_ effect: any MIDIEffect) { self.effect = effect } }
    private var active: Box?
    /// The effect replaced, released this block and waiting to be retired.
    private var leaving: Box?
    private let handover = PluginHandover<Box>()

    public init(_ effect: (any MIDIEffect)? = nil) { active = effect.map(Box.init) }

    /// Off the render thread: `next` takes over from the next block.
    public func replace(with next: any MIDIEffect) { handover.offer(Box(next)) }

    /// Off the render thread: frees what the render thread replaced.
    public func collectRetired() { handover.collectRetired() }

    /// An offered effect not yet taken, or a replaced one not yet freed.
    public var isSwapping: Bool { handover.isBusy }

    /// Render thread: the offered effect, unless the last one replaced is still leaving.
    @inline(__always)
    private func takeOffer() {
        guard leaving == nil, let next = handover.take() else { return }
        leaving = active
        active = next
    }

    public func receive(_ message: ChannelMessage, at offset: Int) {
        // Taken before the block's first message, so the new effect hears all of them.
        takeOffer()
        active?.effect.receive(message, at: offset)
    }

    public func process(frames: Int, into output: UnsafeMutableBufferPointer<TimedMessage>) -> Int {
        takeOffer()
        var written = 0
        if let old = leaving {
            old.effect.receive(.controlChange(123, value: 0, channel: 0), at: 0)
            written = old.effect.process(frames: frames, into: output)
            // Not retired while the previous one waits to be freed: released again next block (nothing left to end).
            if handover.retire(old) { leaving = nil }
        }
        if let active, written < output.count, let base = output.baseAddress {
            written += active.effect.process(frames: frames, into: UnsafeMutableBufferPointer(start: base + written, count: output.count - written))
        }
        return written
    }
}
