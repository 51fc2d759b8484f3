import Engine
import Parameters

/// One recorded step of a block, replayed by every synth of the pool.
enum PoolCommand {
    /// A channel message for one synth (`target` ≥ 0) or all (−1).
    case message(ChannelMessage, target: Int)
    /// SysEx bytes in the pool's byte store.
    case sysEx(start: Int, count: Int)
    case effect(SynthEffect, Float)
    case silence
    /// A piece of `frames` frames: synth 0 renders into the buffers recorded
    /// as piece `piece`, worker w into its own at `local` frames in.
    case render(piece: Int, local: Int, frames: Int)
}
