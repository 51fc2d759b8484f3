import Engine
import FluidSynth
import Parameters
import Synchronization
import Threads
#if canImport(Glibc)
import Glibc
#endif

/// N FluidSynth synths played as one instrument, each rendered on its own
/// thread: the parallel render of one piece.
///
/// Every synth renders every frame. Messages that set channel state (control
/// and program changes, bend, channel pressure, SysEx, effects, all sound off)
/// go to all of them; a note-on goes to one, chosen by voice load, and the
/// note's off and key pressure follow it. Notes that interact stay on one
/// synth: a key still held, or sustained by a pedal, takes its repeats (a
/// new note-on releases the old voice); a percussion channel, a channel
/// that plays a preset with exclusive classes (hi-hat chokes: FluidSynth's
/// choke acts within a channel) and a channel in mono, legato or portamento
/// mode play whole on one synth (those `reset` is given, from the piece's
/// start, and any the routing sees come to interact: mono modes as
/// FluidSynth's basic-channel groups set them, see `ChannelModes`). Every
/// synth has the full polyphony: where one synth would steal a voice, the
/// pool does not — `voiceBudgetExceeded` says when that could have happened. A key whose voice only rings out in its release
/// may go elsewhere: FluidSynth's release of it again keeps its course (the
/// envelope goes on from where it is), and keeping such keys in place tied
/// most notes of a piece to where their key first went — two synths' CPU
/// 4.2 against 5.7 s on linns_basket, against within 3% without. Reverb
/// and chorus are linear and the same in every synth (same settings, same
/// start), so the sum of the N outputs is a one-synth render to rounding.
/// The outputs are summed in a fixed order: a render is the same, byte for
/// byte, run to run.
///
/// How a block runs: `receive` and `render` only record (the renderer calls
/// `render` once per piece between events); `finishBlock` hands the record
/// to the N workers, one thread per synth: synth 0 replays it straight into
/// the renderer's buffers, the others each into buffers of their own;
/// `collectBlock` waits for them and adds the others' buffers in. Events
/// reach each synth at the same frame as in a one-synth render. One
/// hand-over per block, none per piece. The render thread itself only
/// records, sums and mixes: every synth has a thread to itself, so the
/// synths are placed alike and none carries the mix.
///
/// Blocks in flight (`blocksInFlight`, for a render): the renderer may
/// dispatch that many blocks beyond the one it collects, so a worker slower
/// in one block catches up in the next instead of holding the render thread
/// at every block's end (in lockstep, linns_basket's two synths each waited
/// 0.6 s of a 5 s render for the other). Notes are then placed from the
/// synths' state at the end of the block last collected, plus the notes
/// given since: the same input still gives the same placement.
///
/// Threads: build it and `reset` it off the render thread; `receive`,
/// `render`, `finishBlock`, `collectBlock` on the render thread (messages
/// only while the renderer dispatches a block, or none is pending), where
/// nothing here (or in the workers' loop) allocates, locks or throws.
public final class SamplerPool: Instrument, @unchecked Sendable {
    public let stripCount: Int
    public let effectsGroupCount: Int
    public let eventGranularity = 64
    public let blocksInFlight: Int
    /// The synths, synth 0 first (it renders into the renderer's own buffers).
    public let members: [FluidSynthInstrument]
    /// Keeps the synths' SoundFonts loaded.
    private let owners: [AnyObject]
    private let core: PoolCore
    private var threads: [JoinableThread] = []

    /// Builds a pool over `members` (all alike: same rate, fonts, effects),
    /// letting the renderer dispatch `blocksInFlight` blocks ahead. With
    /// `startsWorkers`, one thread per member serves it; otherwise the caller
    /// runs `serveWorker(_:)` for each member on threads of its own.
    /// `wholeChannels` as for `reset`: a pool built for one piece needs no reset.
    public init(members: [FluidSynthInstrument], keepingAlive owners: [AnyObject] = [],
                blocksInFlight: Int = 0, wholeChannels: UInt16 = 0, startsWorkers: Bool = true) throws(ThreadError) {
        precondition(!members.isEmpty && blocksInFlight >= 0)
        self.members = members
        self.owners = owners
        self.blocksInFlight = blocksInFlight
        stripCount = members[0].stripCount
        effectsGroupCount = members[0].effectsGroupCount
        core = PoolCore(members: members, blocksInFlight: blocksInFlight)
        core.routing.reset(whole: wholeChannels | 1 << 9)
        guard startsWorkers else { return }
        for w in 0..<members.count {
            let core = self.core
            threads.append(try JoinableThread(name: "carillon-synth-\(w)") { core.serve(w) })
        }
    }

    deinit { stopWorkers() }

    /// Ends the workers' loops and waits for the pool's own threads (also at
    /// release). Not on the render thread; nothing renders afterwards.
    public func stopWorkers() {
        core.stop()
        for t in threads { t.join() }
    }

    /// Runs worker `index` (0..<members.count) on the calling thread until
    /// `stopWorkers`: for a pool built with `startsWorkers: false`.
    public func serveWorker(_ index: Int) {
        precondition(index >= 0 && index < members.count)
        core.serve(index)
    }

    /// Messages refused and failed renders, each counted once for the pool.
    public var refusedCount: Int { core.refusedTotal }

    /// Whether one synth rendering this piece could have had to steal a
    /// voice (sticky until `reset`): then the split render may differ from
    /// the one-synth render, and the piece should be rendered on one synth.
    ///
    /// How it is found: each worker keeps, per block, the most voices its
    /// synth counted at once (`fluid_synth_get_active_voice_count` at the
    /// block's start and after every message it plays); `collectBlock` adds
    /// the synths' maxima, and a sum above `polyphony` sets the flag.
    ///
    /// Why that suffices (FluidSynth 2.3.1): a note-on steals only when
    /// `fluid_synth_alloc_voice_LOCAL` finds none of the `synth.polyphony`
    /// voice slots `_AVAILABLE` (rvoice unlocked and status clean or off);
    /// `synth.overflow.*` only choose the victim (`fluid_synth_free_voice_by_kill_LOCAL`),
    /// or leave the note without a voice — either way a departure that needs
    /// every slot taken. A slot is taken from `fluid_synth_start_voice`
    /// (rvoice locked, `fluid_voice_start` counts it: the count includes a
    /// voice the moment its note-on returns) until `fluid_synth_check_finished_voices`
    /// hands the finished rvoice back (`fluid_voice_stop` uncounts it), which
    /// `fluid_synth_api_enter` runs at every public call before anything else
    /// — voices that are finished but not yet freed are counted, as they
    /// hold their slots. Without a steal the count equals the slots taken
    /// (it exceeds them only by overflow rvoices, which exist only after a
    /// steal), the rvoice mixer's own limit is never the tighter one, and
    /// every voice lives the same frames in one synth as in the pool (same
    /// events, same renders). So while no steal has happened, one synth's
    /// count at any point of the piece is the sum of the pool's counts
    /// there; each synth's count only rises at a message it plays and only
    /// falls in a render, so its block maximum is at least its count at any
    /// point of the block, and a sum of maxima within the polyphony means no
    /// note-on of the block found every slot taken — in one synth or any of the pool's.
    /// On the render thread, or after the render.
    public var voiceBudgetExceeded: Bool { core.voiceBudgetExceeded }

    /// The largest sum of the synths' per-block voice maxima since `reset`
    /// (compared with `polyphony` for `voiceBudgetExceeded`). On the render thread, or after the render.
    public var voicePeak: Int { core.voicePeak }

    /// One synth's voices (`synth.polyphony` as the synths have it; the smallest if they differ).
    public var polyphony: Int { core.polyphony }

    /// Finishes anything recorded, resets every synth (as a new piece starts)
    /// and forgets which synth holds what and the voice budget's flag.
    /// `wholeChannels` (bit c: channel c) play whole on one synth, besides
    /// channel 10: every channel whose notes interact (percussion, exclusive
    /// classes, mono, legato, portamento: see `SampleSelection.wholeChannels`).
    /// Not on the render thread, with no block pending.
    public func reset(wholeChannels: UInt16 = 0) {
        core.settle()
        for m in members { _ = m.synth.systemReset() }
        core.routing.reset(whole: wholeChannels | 1 << 9)
        core.refreshLoads()
        core.resetVoiceBudget()
    }

    /// Channels that play whole now (bit c: channel c): those given to
    /// `reset` and those whose notes have come to interact since. Render thread.
    public var wholeChannels: UInt16 { core.routing.whole }

    public func prepare(sampleRate: Double, maxFrames: Int) {
        core.settle()
        for m in members { m.prepare(sampleRate: sampleRate, maxFrames: maxFrames) }
        core.prepare(maxFrames: maxFrames)
    }

    public func receive(_ message: ChannelMessage) {
        core.record(message)
    }

    public func render(frames: Int,
                       dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                       effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {
        core.recordRender(frames: frames, dry: dry, effects: effects)
    }

    public func finishBlock() { core.submitBlock() }

    public func collectBlock() { core.collectBlock() }

    public func silence() { core.recordSilence() }

    public func receiveSysEx(_ data: UnsafeBufferPointer<UInt8>) { core.recordSysEx(data) }

    public func setEffect(_ effect: SynthEffect, to value: Float) { core.recordEffect(effect, value) }
}
