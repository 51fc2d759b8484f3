import Controls
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

/// Which synth plays what. Render thread only (or while it is idle).
struct PoolRouting {
    let synthCount: Int
    /// Per (channel × 128 + key): the synth the key's last note went to (−1: none) and whether it is held.
    private var keyOwner: UnsafeMutablePointer<Int8>
    private var keyHeld: UnsafeMutablePointer<Bool>
    /// Per channel: the synth that plays it whole (−1: not chosen yet).
    private var channelOwner: UnsafeMutablePointer<Int8>
    /// Bit c: channel c plays whole on one synth / has its sustain or sostenuto pedal down.
    private(set) var whole: UInt16 = 0
    private var pedalDown: UInt16 = 0
    /// FluidSynth's basic channels and modes, as the synths have them.
    private(set) var modes: ChannelModes
    /// Per synth: voices at the end of the last block collected, notes given since.
    let voices: UnsafeMutablePointer<Int>
    let given: UnsafeMutablePointer<Int>

    init(synthCount: Int, deviceID: Int) {
        self.synthCount = synthCount
        modes = ChannelModes(deviceID: deviceID)
        keyOwner = .allocate(capacity: 16 * 128); keyOwner.initialize(repeating: -1, count: 16 * 128)
        keyHeld = .allocate(capacity: 16 * 128); keyHeld.initialize(repeating: false, count: 16 * 128)
        channelOwner = .allocate(capacity: 16); channelOwner.initialize(repeating: -1, count: 16)
        voices = .allocate(capacity: synthCount); voices.initialize(repeating: 0, count: synthCount)
        given = .allocate(capacity: synthCount); given.initialize(repeating: 0, count: synthCount)
    }

    func release() {
        keyOwner.deallocate(); keyHeld.deallocate(); channelOwner.deallocate()
        voices.deallocate(); given.deallocate()
    }

    /// A new piece: the synths just reset; `whole` (bit c: channel c) plays whole from the start.
    mutating func reset(whole: UInt16) {
        keyOwner.update(repeating: -1, count: 16 * 128)
        keyHeld.update(repeating: false, count: 16 * 128)
        channelOwner.update(repeating: -1, count: 16)
        self.whole = whole
        pedalDown = 0
        modes.reset()
    }

    /// The synth a message goes to, −1 for all of them.
    @inline(__always)
    mutating func target(of message: ChannelMessage) -> Int {
        let channel = message.channel, bit = UInt16(1) << channel
        let slot = channel << 7 | Int(message.data1 & 0x7F)
        switch message.kind {
        case 0x90 where message.data2 > 0:
            let owner = Int(keyOwner[slot])
            let target: Int
            if whole & bit != 0 {
                // Every note of the channel on one synth, repeats of a held key included.
                if channelOwner[channel] < 0 { channelOwner[channel] = Int8(owner >= 0 ? owner : leastLoaded()) }
                target = Int(channelOwner[channel])
            } else if owner >= 0 && (keyHeld[slot] || pedalDown & bit != 0) {
                target = owner          // the same key is held or sustained there
            } else {
                target = leastLoaded()
            }
            keyOwner[slot] = Int8(target)
            keyHeld[slot] = true
            given[target] += 1
            return target
        case 0x80, 0x90:
            keyHeld[slot] = false
            return Int(keyOwner[slot])
        case 0xA0:
            return Int(keyOwner[slot])
        case 0xB0:
            control(message.data1, value: message.data2, reaching: modes.reach(ofControlOn: channel))
            return -1
        default:
            return -1
        }
    }

    /// A control change as FluidSynth applies it (fluid_synth_cc): on the
    /// channels `reach` holds (its own, or a global controller's group), in order.
    @inline(__always)
    private mutating func control(_ controller: UInt8, value: UInt8, reaching reach: UInt16) {
        guard reach != 0 else { return }
        switch controller {
        case 64, 66:
            // Either pedal down keeps released keys sounding: their repeats stay put.
            if value >= 64 { pedalDown |= reach } else { pedalDown &= ~reach }
        case 65, 68:
            if value >= 64 { whole |= reach }              // portamento, legato footswitch
        case 84:
            whole |= reach                                 // portamento control
        case 121:
            pedalDown &= ~reach                            // reset all controllers
        case 120, 123:
            releaseKeys(reach)                             // all sound / notes off
        case 124...127:
            for c in 0..<16 where reach & 1 << c != 0 {
                // Only a basic channel changes mode; its new group gets all notes off.
                let changed = modes.changeMode(onChannel: c, controller: Int(controller), value: Int(value))
                releaseKeys(changed)
                whole |= modes.monoChannels
            }
        default: break
        }
    }

    /// A SysEx message every synth is given: a GM, GS or XG reset resets the
    /// channels as a system reset does (every voice off, basic channels back).
    mutating func sysEx(_ data: UnsafeBufferPointer<UInt8>) {
        guard modes.resets(data) else { return }
        modes.reset()
        releaseAllKeys()
        pedalDown = 0
    }

    @inline(__always)
    private func releaseKeys(_ channels: UInt16) {
        guard channels != 0 else { return }
        for c in 0..<16 where channels & 1 << c != 0 {
            (keyHeld + c << 7).update(repeating: false, count: 128)
        }
    }

    mutating func releaseAllKeys() {
        keyHeld.update(repeating: false, count: 16 * 128)
    }

    /// Voices at the last block collected plus two per note given since (most
    /// General MIDI presets start two voices a note); the lowest index wins ties.
    @inline(__always)
    private func leastLoaded() -> Int {
        var best = 0, bestLoad = Int.max
        for s in 0..<synthCount {
            let load = voices[s] + 2 * given[s]
            if load < bestLoad { best = s; bestLoad = load }
        }
        return best
    }
}

/// FluidSynth 2.3.1's basic-channel table, changed as its MIDI handling
/// changes it, so the pool knows which channels play mono without asking a
/// synth. What FluidSynth does (fluid_synth.c):
///
/// - A system reset (`fluid_synth_system_reset_LOCAL`, also run by a GM or
///   GM2 System On, a GS mode set to 0x40007F and an XG reset to 0x00007E or
///   0x00007F) clears every channel's mode (`fluid_channel_init`) and makes
///   channel 0 the one basic channel, omni on poly, its group all 16 channels.
/// - CC 124/125/126/127 (omni off/on, mono, poly: `fluid_synth_cc_LOCAL`) act
///   only on a basic channel (`FLUID_CHANNEL_BASIC`); elsewhere they do
///   nothing. The new mode is the basic channel's with one bit changed, and
///   the CC's value is the group's size, as `fluid_synth_check_next_basic_channel`
///   reads it: omni-off poly is always one channel; 0 is up to the next basic
///   channel or the last channel; otherwise that many channels, refused if
///   they pass channel 16 or reach the next basic channel. Then the old group
///   is cleared (`fluid_synth_reset_basic_channel_LOCAL`: its channels
///   disabled) and the new one set (`fluid_synth_set_basic_channel_LOCAL`:
///   all notes off on each, the mode on each, enabled). So CC 126 value 0 on
///   channel 1 puts all 16 channels in mono, and CC 126 value 4 puts channels
///   1–4 in mono and disables 5–16, which then refuse notes.
/// - A CC on a disabled channel (`fluid_synth_cc`) reaches every channel of
///   the next channel's group (channel 16 wraps to 1) when that channel is a
///   basic channel in omni-off mono: MIDI's global controller.
///
/// No allocation: a value with its tables inline.
struct ChannelModes {
    static let polyOff: UInt8 = 0x01, omniOff: UInt8 = 0x02, basic: UInt8 = 0x04, enabled: UInt8 = 0x08
    /// FLUID_CHANNEL_MODE_MASK | BASIC | ENABLED: the bits a basic-channel change sets.
    private static let basicInfo: UInt8 = 0x0F
    /// Per channel: FluidSynth's mode bits and, on a basic channel, its group's size (`mode_val`).
    private var bits = InlineArray<16, UInt8>(repeating: 0)
    private var groupSize = InlineArray<16, UInt8>(repeating: 0)
    /// The SysEx device ID the synths answer besides 0x7F (`synth.device-id`).
    let deviceID: Int

    init(deviceID: Int) {
        self.deviceID = deviceID
        reset()
    }

    /// As `fluid_synth_system_reset_LOCAL` leaves the table.
    mutating func reset() {
        for c in 0..<16 { bits[c] = Self.enabled; groupSize[c] = 0 }
        bits[0] |= Self.basic
        groupSize[0] = 16
    }

    func bits(ofChannel c: Int) -> UInt8 { bits[c] }
    func groupSize(ofChannel c: Int) -> Int { Int(groupSize[c]) }

    /// Bit c: channel c is in a mono mode (poly off) now.
    var monoChannels: UInt16 {
        var mask: UInt16 = 0
        for c in 0..<16 where bits[c] & Self.polyOff != 0 { mask |= 1 << c }
        return mask
    }

    /// The channels a control change on `channel` reaches (bit c: channel c):
    /// the channel itself if enabled; if not, the group of the next channel
    /// when that is a basic channel in omni-off mono; otherwise none.
    func reach(ofControlOn channel: Int) -> UInt16 {
        if bits[channel] & Self.enabled != 0 { return 1 << channel }
        let next = channel < 15 ? channel + 1 : 0
        guard bits[next] & Self.basic != 0, bits[next] & 0x03 == Self.polyOff | Self.omniOff else { return 0 }
        var mask: UInt16 = 0
        for c in next..<min(16, next + Int(groupSize[next])) { mask |= 1 << c }
        return mask
    }

    /// CC `controller` (124...127) with `value`, reaching `channel`. Returns
    /// the channels that got all notes off (the new group; none if the channel
    /// is not basic or FluidSynth refuses the group).
    mutating func changeMode(onChannel channel: Int, controller: Int, value: Int) -> UInt16 {
        guard bits[channel] & Self.basic != 0 else { return 0 }
        var mode = bits[channel] & 0x03
        switch controller {
        case 124: mode |= Self.omniOff
        case 125: mode &= ~Self.omniOff
        case 126: mode |= Self.polyOff
        case 127: mode &= ~Self.polyOff
        default: return 0
        }
        // fluid_synth_check_next_basic_channel
        var size: Int
        if mode == Self.omniOff {
            size = 1
        } else if value == 0 {
            size = 16 - channel
        } else if channel + value > 16 {
            return 0
        } else {
            size = value
        }
        for c in (channel + 1)..<(channel + size) where bits[c] & Self.basic != 0 {
            guard value == 0 else { return 0 }
            size = c - channel
            break
        }
        // fluid_synth_reset_basic_channel_LOCAL, then fluid_synth_set_basic_channel_LOCAL
        for c in channel..<min(16, channel + Int(groupSize[channel])) {
            bits[c] &= ~Self.basicInfo
            groupSize[c] = 0
        }
        var changed: UInt16 = 0
        for c in channel..<(channel + size) {
            bits[c] = bits[c] & ~Self.basicInfo | mode | Self.enabled | (c == channel ? Self.basic : 0)
            groupSize[c] = c == channel ? UInt8(size) : 0
            changed |= 1 << c
        }
        return changed
    }

    /// Whether FluidSynth runs a system reset for this SysEx message (the
    /// bytes between F0 and F7), as `fluid_synth_sysex` and its GS and XG
    /// handlers test it (bytes read as C `char`s).
    func resets(_ data: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = data.count
        guard n >= 4 else { return false }
        @inline(__always) func at(_ i: Int) -> Int { Int(Int8(bitPattern: data[i])) }
        guard at(1) == deviceID || at(1) == 0x7F else { return false }
        switch (at(0), at(2)) {
        case (0x7E, 0x09):                                     // GM / GM2 System On
            return at(3) == 0x01 || at(3) == 0x03
        case (0x41, 0x42):                                     // GS DT1 mode set
            guard at(3) == 0x12, n == 9, at(4) << 16 | at(5) << 8 | at(6) == 0x40007F,
                  at(7) == 0 || at(7) == 0x7F else { return false }
            var sum = 0
            for i in 4..<(n - 1) { sum += at(i) }
            return 0x80 - (sum & 0x7F) == at(n - 1)
        case (0x43, 0x4C):                                     // XG system reset
            guard n == 7 else { return false }
            let address = at(3) << 16 | at(4) << 8 | at(5)
            return (address == 0x7E || address == 0x7F) && at(6) == 0
        default:
            return false
        }
    }
}

/// What the pool's threads share: a ring of `slots` (`blocksInFlight + 1`),
/// each holding one block's record and the workers' output for it.
///
/// The render thread records a block into a free slot; `submitBlock` hands it
/// to the workers (each replays it on its synth: synth 0 straight into the
/// renderer's buffers, the others into their own buffers of the slot);
/// `collectBlock` waits until every worker has done the oldest block, adds
/// the others' sound in (synth 1, 2, … in that order) and takes the
/// synths' voice counts at that block's end for the next notes' placement.
/// A slot's record is written only while no worker reads it (its last block
/// collected, or every worker idle); the atomics order the two.
final class PoolCore: @unchecked Sendable {
    let members: [FluidSynthInstrument]
    let count: Int
    /// Buffers a synth writes: dry (left, right per strip), then effects.
    let dryCount: Int
    let effectCount: Int
    /// Pointers recorded per piece: dry then the effects (4 per group), as the renderer passes them.
    let pieceStride: Int
    var routing: PoolRouting
    let slotCount: Int

    private let commandCapacity = 4096
    private let sysExCapacity = 1 << 16
    private let pieceCapacity = 256
    /// Per slot: its commands, SysEx bytes and piece pointers, and how much of each is used.
    private let commands: UnsafeMutablePointer<PoolCommand>
    private let sysExBytes: UnsafeMutablePointer<UInt8>
    private let piecePointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    private let commandCounts: UnsafeMutablePointer<Int>
    private let sysExUsed: UnsafeMutablePointer<Int>
    private let pieceCounts: UnsafeMutablePointer<Int>
    /// Per slot: the block's frames so far (where worker buffers are filled to),
    /// and the renderer's buffers for the block (its first piece's pointers).
    private let slotFrames: UnsafeMutablePointer<Int>
    private let blockPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>

    /// Blocks submitted and collected; the slot being recorded and whether it was begun.
    private var submittedBlocks = 0
    private var collectedBlocks = 0
    private var recordingBegun = false
    private var recordingSlot: Int { submittedBlocks % slotCount }

    /// Hand-overs to the workers, in order: the slot and whether it ends a
    /// block (a record that fills up mid-block is handed over early, as a part).
    private let submissionCapacity: Int
    private let submissionSlots: UnsafeMutablePointer<Int>
    private let submissionEndsBlock: UnsafeMutablePointer<Bool>
    private var submissions = 0

    private var maxFrames = 0
    /// Per worker and slot: `(dryCount + effectCount) × maxFrames` floats (worker w, slot s at `storage[w * slotCount + s]`).
    private var storage: [UnsafeMutablePointer<Float>]
    private let scratch: [UnsafeMutablePointer<UnsafeMutablePointer<Float>?>]
    /// Per synth: refusals counted by the thread that replays it.
    private let refused: UnsafeMutablePointer<Int>
    /// Per synth and slot: voices at the end of the slot's block.
    private let snapshotVoices: UnsafeMutablePointer<Int>
    /// One synth's voices (the voice budget).
    let polyphony: Int
    /// Per worker: the most voices its synth counted in the block it is in (−1: none begun).
    private let runningPeak: UnsafeMutablePointer<Int>
    /// Per synth and slot: the most voices the synth counted in the slot's block.
    private let blockPeaks: UnsafeMutablePointer<Int>
    /// Sticky until `resetVoiceBudget`: a sum of block maxima above `polyphony`. Render thread.
    private(set) var voiceBudgetExceeded = false
    private(set) var voicePeak = 0
    /// Per worker: hand-overs it has replayed and blocks it has finished.
    private let replayed: [SharedCount]
    private let finishedBlocks: [SharedCount]
    private let start: [WakeSignal]
    private let done = WakeSignal()
    /// A worker spins this long for the next hand-over before it sleeps. The
    /// render thread never spins: with a thread per synth, every core has a
    /// synth to run, and a spinning render thread would take one's time.
    private static let spins = 1 << 12

    init(members: [FluidSynthInstrument], blocksInFlight: Int) {
        self.members = members
        count = members.count
        slotCount = max(0, blocksInFlight) + 1
        dryCount = 2 * members[0].stripCount
        effectCount = members[0].effectBufferCount
        pieceStride = dryCount + effectCount
        routing = PoolRouting(synthCount: members.count, deviceID: members[0].synth.deviceID)
        polyphony = members.map(\.synth.polyphony).min() ?? 0
        runningPeak = .allocate(capacity: members.count); runningPeak.initialize(repeating: -1, count: members.count)
        blockPeaks = .allocate(capacity: slotCount * members.count)
        blockPeaks.initialize(repeating: 0, count: slotCount * members.count)
        commands = .allocate(capacity: slotCount * commandCapacity)
        sysExBytes = .allocate(capacity: slotCount * sysExCapacity)
        piecePointers = .allocate(capacity: slotCount * pieceCapacity * pieceStride)
        piecePointers.initialize(repeating: nil, count: slotCount * pieceCapacity * pieceStride)
        commandCounts = .allocate(capacity: slotCount); commandCounts.initialize(repeating: 0, count: slotCount)
        sysExUsed = .allocate(capacity: slotCount); sysExUsed.initialize(repeating: 0, count: slotCount)
        pieceCounts = .allocate(capacity: slotCount); pieceCounts.initialize(repeating: 0, count: slotCount)
        slotFrames = .allocate(capacity: slotCount); slotFrames.initialize(repeating: 0, count: slotCount)
        blockPointers = .allocate(capacity: slotCount * pieceStride)
        blockPointers.initialize(repeating: nil, count: slotCount * pieceStride)
        submissionCapacity = 2 * slotCount + 2
        submissionSlots = .allocate(capacity: submissionCapacity)
        submissionSlots.initialize(repeating: 0, count: submissionCapacity)
        submissionEndsBlock = .allocate(capacity: submissionCapacity)
        submissionEndsBlock.initialize(repeating: false, count: submissionCapacity)
        storage = (0..<(members.count * slotCount)).map { _ in .allocate(capacity: 0) }
        let stride = pieceStride
        scratch = (0..<members.count).map { _ in
            let p = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: stride)
            p.initialize(repeating: nil, count: stride)
            return p
        }
        refused = .allocate(capacity: members.count); refused.initialize(repeating: 0, count: members.count)
        snapshotVoices = .allocate(capacity: slotCount * members.count)
        snapshotVoices.initialize(repeating: 0, count: slotCount * members.count)
        replayed = (0..<members.count).map { _ in SharedCount() }
        finishedBlocks = (0..<members.count).map { _ in SharedCount() }
        start = (0..<members.count).map { _ in WakeSignal() }
        routing.reset(whole: 1 << 9)
    }

    deinit {
        commands.deallocate(); sysExBytes.deallocate(); piecePointers.deallocate()
        commandCounts.deallocate(); sysExUsed.deallocate(); pieceCounts.deallocate(); slotFrames.deallocate()
        blockPointers.deallocate()
        submissionSlots.deallocate(); submissionEndsBlock.deallocate()
        for p in storage { p.deallocate() }
        for p in scratch { p.deallocate() }
        refused.deallocate(); snapshotVoices.deallocate()
        runningPeak.deallocate(); blockPeaks.deallocate()
        routing.release()
    }

    /// Sizes the workers' buffers. While the workers are idle.
    func prepare(maxFrames: Int) {
        guard maxFrames != self.maxFrames else { return }
        self.maxFrames = maxFrames
        let size = (dryCount + effectCount) * maxFrames
        for i in 0..<storage.count {
            storage[i].deallocate()
            // Synth 0 renders into the renderer's buffers: its slots need none.
            let n = i < slotCount ? 0 : size
            storage[i] = .allocate(capacity: n)
            storage[i].initialize(repeating: 0, count: n)
        }
    }

    var refusedTotal: Int {
        var total = 0
        for s in 0..<count { total += refused[s] }
        return total
    }

    /// Blocks submitted and not yet collected.
    var pendingBlocks: Int { submittedBlocks - collectedBlocks }

    // MARK: Recording (render thread)

    /// The slot being recorded, emptied on first use. Its last block has been
    /// collected (the renderer keeps at most `slotCount` blocks pending).
    @inline(__always)
    private func recording() -> Int {
        let slot = recordingSlot
        if !recordingBegun {
            precondition(pendingBlocks < slotCount, "the pool takes messages only while a block is dispatched, or none is pending")
            commandCounts[slot] = 0; sysExUsed[slot] = 0; pieceCounts[slot] = 0; slotFrames[slot] = 0
            recordingBegun = true
        }
        return slot
    }

    @inline(__always)
    private func append(_ command: PoolCommand) {
        var slot = recording()
        if commandCounts[slot] == commandCapacity { submitPart(); slot = recording() }
        commands[slot * commandCapacity + commandCounts[slot]] = command
        commandCounts[slot] += 1
    }

    @inline(__always)
    func record(_ message: ChannelMessage) {
        let target = routing.target(of: message)
        append(.message(message, target: target))
    }

    func recordSilence() {
        routing.releaseAllKeys()
        append(.silence)
    }

    func recordEffect(_ effect: SynthEffect, _ value: Float) { append(.effect(effect, value)) }

    func recordSysEx(_ data: UnsafeBufferPointer<UInt8>) {
        guard let base = data.baseAddress, !data.isEmpty else { return }
        routing.sysEx(data)
        if data.count > sysExCapacity {
            // Too long to keep: apply it now, every worker idle.
            submitPart()
            waitForWorkers()
            if !members[0].synth.sysEx(data) { refused[0] += 1 }
            for s in 1..<count { _ = members[s].synth.sysEx(data) }
            return
        }
        var slot = recording()
        if sysExUsed[slot] + data.count > sysExCapacity || commandCounts[slot] == commandCapacity {
            submitPart(); slot = recording()
        }
        let at = sysExUsed[slot]
        (sysExBytes + slot * sysExCapacity + at).update(from: base, count: data.count)
        append(.sysEx(start: at, count: data.count))
        sysExUsed[slot] += data.count
    }

    func recordRender(frames: Int,
                      dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                      effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {
        var offset = 0
        while offset < frames {
            var slot = recording()
            let n = min(frames - offset, maxFrames - slotFrames[slot])
            precondition(n > 0, "a block is at most maxFrames frames")
            if pieceCounts[slot] == pieceCapacity || commandCounts[slot] == commandCapacity {
                submitPart(); slot = recording()
            }
            let p = piecePointers + (slot * pieceCapacity + pieceCounts[slot]) * pieceStride
            for j in 0..<dryCount { p[j] = dry[j].map { $0 + offset } }
            for j in 0..<effectCount { p[dryCount + j] = effects[j].map { $0 + offset } }
            if slotFrames[slot] == 0 { (blockPointers + slot * pieceStride).update(from: p, count: pieceStride) }
            append(.render(piece: pieceCounts[slot], local: slotFrames[slot], frames: n))   // room checked above
            pieceCounts[slot] += 1
            slotFrames[slot] += n
            offset += n
        }
    }

    // MARK: Hand-over

    /// Hands the recorded block to the workers.
    func submitBlock() {
        let slot = recording()
        submit(slot, endsBlock: true)
        submittedBlocks += 1
        recordingBegun = false
    }

    /// A record full before its block ends: replayed now (the part so far),
    /// every worker done with it before the slot is written again.
    private func submitPart() {
        let slot = recording()
        guard commandCounts[slot] > 0 else { return }
        submit(slot, endsBlock: false)
        waitForWorkers()
        commandCounts[slot] = 0; sysExUsed[slot] = 0; pieceCounts[slot] = 0
    }

    private func submit(_ slot: Int, endsBlock: Bool) {
        let i = submissions % submissionCapacity
        submissionSlots[i] = slot
        submissionEndsBlock[i] = endsBlock
        submissions += 1
        for w in 0..<count { start[w].publish(submissions) }
    }

    /// Waits until every worker has finished the oldest pending block, adds
    /// the workers' sound of it into the renderer's buffers (1, 2, … in that
    /// order) and takes the synths' state at its end for the next notes' placement.
    func collectBlock() {
        precondition(pendingBlocks > 0)
        let block = collectedBlocks, slot = block % slotCount
        _ = done.wait(spins: 0) { _ in
            for w in 0..<count where finishedBlocks[w].value.load(ordering: .acquiring) <= block { return false }
            return true
        }
        addWorkers(slot: slot)
        collectedBlocks += 1
        adoptSnapshot(slot: slot)
        var voices = 0
        for w in 0..<count { voices += blockPeaks[slot * count + w] }
        if voices > voicePeak { voicePeak = voices }
        if voices > polyphony { voiceBudgetExceeded = true }
    }

    /// Clears the voice budget's flag and the workers' running maxima. With every worker idle.
    func resetVoiceBudget() {
        voiceBudgetExceeded = false
        voicePeak = 0
        runningPeak.update(repeating: -1, count: count)
    }

    /// Waits until every worker has replayed everything handed over.
    private func waitForWorkers() {
        let target = submissions
        _ = done.wait(spins: 0) { _ in
            for w in 0..<count where replayed[w].value.load(ordering: .acquiring) < target { return false }
            return true
        }
    }

    /// Replays whatever was recorded outside a block and waits for the
    /// workers: afterwards every synth may be used directly. With no block pending.
    func settle() {
        precondition(pendingBlocks == 0, "collect every block first")
        if recordingBegun {
            submitPart()
            recordingBegun = false
        }
        waitForWorkers()
    }

    /// Sums the workers' output of the slot's block into the renderer's buffers for it.
    private func addWorkers(slot: Int) {
        let frames = slotFrames[slot]
        guard frames > 0 else { return }
        let p = blockPointers + slot * pieceStride
        for j in 0..<(dryCount + effectCount) {
            guard let out = p[j] else { continue }
            for w in 1..<count {
                let from = storage[w * slotCount + slot] + j * maxFrames
                for i in 0..<frames { out[i] += from[i] }
            }
        }
    }

    /// Synth `s`'s voice count at the end of the slot's block.
    private func snapshot(_ s: Int, slot: Int) {
        snapshotVoices[slot * count + s] = members[s].synth.activeVoiceCount
    }

    /// The placement state after the slot's block (just collected): each
    /// synth's voices then, plus the notes given in the blocks dispatched since.
    private func adoptSnapshot(slot: Int) {
        for s in 0..<count {
            routing.voices[s] = snapshotVoices[slot * count + s]
            routing.given[s] = 0
        }
        for block in collectedBlocks..<submittedBlocks {
            let later = block % slotCount
            for c in 0..<commandCounts[later] {
                guard case .message(let message, let target) = commands[later * commandCapacity + c],
                      target >= 0, message.kind == 0x90, message.data2 > 0 else { continue }
                routing.given[target] += 1
            }
        }
    }

    /// Reads each synth's voice count directly. With every worker idle.
    func refreshLoads() {
        for s in 0..<count {
            routing.voices[s] = members[s].synth.activeVoiceCount
            routing.given[s] = 0
        }
    }

    /// Worker `w`'s loop: wait for hand-overs, replay each in order, count it done.
    func serve(_ w: Int) {
        var seen = 0
        let signal = start[w]
        while true {
            let g = signal.wait(spins: Self.spins) { $0 > seen || $0 < 0 }
            if g < 0 { return }
            while seen < g {
                let i = seen % submissionCapacity
                let slot = submissionSlots[i]
                if runningPeak[w] < 0 { runningPeak[w] = members[w].synth.activeVoiceCount }
                replay(w, slot: slot)
                if submissionEndsBlock[i] {
                    blockPeaks[slot * count + w] = runningPeak[w]
                    runningPeak[w] = -1
                    snapshot(w, slot: slot)
                    finishedBlocks[w].value.add(1, ordering: .releasing)
                }
                seen += 1
                replayed[w].value.store(seen, ordering: .releasing)
                done.increment()
            }
        }
    }

    /// Ends the workers' loops. Not on the render thread.
    func stop() {
        for w in 0..<count { start[w].publish(-1) }
    }

    /// Plays the slot's record on synth `s`: its messages, every broadcast,
    /// every piece. Broadcast refusals are counted by synth 0 only.
    private func replay(_ s: Int, slot: Int) {
        let member = members[s]
        var refusals = 0
        let record = commands + slot * commandCapacity
        let bytes = sysExBytes + slot * sysExCapacity
        // The voice budget: a synth's count rises only at a message it plays (a
        // note-on, or a mono note-off returning to a held note), so it is read after each.
        var peak = runningPeak[s]
        for c in 0..<commandCounts[slot] {
            switch record[c] {
            case .message(let message, let target):
                if target < 0 || target == s {
                    if !member.send(message) && (target >= 0 || s == 0) { refusals += 1 }
                    peak = max(peak, member.synth.activeVoiceCount)
                }
            case .sysEx(let start, let n):
                if !member.synth.sysEx(UnsafeBufferPointer(start: bytes + start, count: n)) && s == 0 {
                    refusals += 1
                }
                peak = max(peak, member.synth.activeVoiceCount)
            case .effect(let effect, let value):
                if !member.apply(effect, value) && s == 0 { refusals += 1 }
            case .silence:
                _ = member.synth.allSoundsOff()
            case .render(let piece, let local, let frames):
                let ok: Bool
                if s == 0 {
                    let p = piecePointers + (slot * pieceCapacity + piece) * pieceStride
                    ok = member.process(frames: frames, dry: p, effects: p + dryCount)
                } else {
                    let p = scratch[s], base = storage[s * slotCount + slot]
                    for j in 0..<(dryCount + effectCount) {
                        let b = base + j * maxFrames + local
                        b.update(repeating: 0, count: frames)
                        p[j] = b
                    }
                    ok = member.process(frames: frames, dry: p, effects: p + dryCount)
                }
                if !ok { refusals += 1 }
            }
        }
        refused[s] += refusals
        runningPeak[s] = peak
    }
}

/// A count one worker writes and the render thread reads.
final class SharedCount: Sendable {
    let value = Atomic<Int>(0)
}
