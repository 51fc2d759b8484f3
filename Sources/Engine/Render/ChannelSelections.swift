import Synchronization

/// The preset each sampler channel plays, as the render thread applied it:
/// every bank select (CC 0) and program change the sampler received, from
/// whatever sent it — the keyboard straight through, a zone, a control, a
/// scene, the page, OSC, a piece, a zone's MIDI effect. Written by the render
/// thread (relaxed atomic stores, no lock, no allocation), read by any other
/// (the control loop, which tells the hub: `ChannelSelectionsFollower`).
///
/// A bank select only takes effect at the channel's next program change (as
/// FluidSynth selects a preset), so a channel's entry moves at program
/// changes. FluidSynth's default `gs` style: channel 10 plays the percussion
/// bank (128) and ignores bank select; the others take CC 0 as the bank.
/// Not followed: a GM/GS/XG reset SysEx (FluidSynth's own reset of programs).
public final class ChannelSelections: @unchecked Sendable {
    /// Per channel: 0 before any program change, else `1 << 16 | bank << 8 | program`.
    private let entries: UnsafeMutablePointer<Atomic<UInt32>>
    /// Moves at every program change applied (a reader compares it before reading the entries).
    private let changes = Atomic<Int>(0)
    /// The render thread's own: each channel's bank select waiting for a program change.
    private let pendingBank: UnsafeMutablePointer<UInt8>

    public init() {
        entries = .allocate(capacity: 16)
        for c in 0..<16 { (entries + c).initialize(to: Atomic(0)) }
        pendingBank = .allocate(capacity: 16)
        pendingBank.initialize(repeating: 0, count: 16)
    }

    deinit {
        entries.deinitialize(count: 16)
        entries.deallocate()
        pendingBank.deallocate()
    }

    /// One message the sampler received. Render thread.
    @inline(__always)
    public func note(_ message: ChannelMessage) {
        let kind = message.kind
        if kind == 0xB0 && message.data1 == 0 {
            pendingBank[message.channel] = message.data2
        } else if kind == 0xC0 {
            let c = message.channel
            let bank: UInt32 = c == 9 ? 128 : UInt32(pendingBank[c])
            entries[c].store(1 << 16 | bank << 8 | UInt32(message.data1), ordering: .relaxed)
            changes.wrappingAdd(1, ordering: .releasing)
        }
    }

    /// Counts the program changes applied so far. Any thread.
    public var changeCount: Int { changes.load(ordering: .acquiring) }

    /// Channel `channel` (0…15)'s bank and program as last selected; nil before
    /// any program change reached it. Any thread.
    public func selection(ofChannel channel: Int) -> (bank: Int, program: Int)? {
        let e = entries[channel].load(ordering: .relaxed)
        guard e >> 16 != 0 else { return nil }
        return (Int(e >> 8 & 0xFF), Int(e & 0x7F))
    }
}
