import ALSA
import Controls
import Engine
import FluidSynth
import Synchronization
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
/// synth: a key that still sounds (held, or sustained by a pedal) takes its
/// repeats; a percussion channel (exclusive classes: hi-hat chokes) and a
/// channel in mono, legato or portamento mode play whole on one synth. Reverb
/// and chorus are linear and the same in every synth (same settings, same
/// start), so the sum of the N outputs is a one-synth render to rounding.
/// The outputs are summed in a fixed order: a render is the same, byte for
/// byte, run to run.
///
/// How a block runs: `receive` and `render` only record (the renderer calls
/// `render` once per piece between events); `finishBlock` wakes the N − 1
/// workers, each replays the block's record on its synth into its own buffers
/// while the calling thread does synth 0 straight into the renderer's, then
/// adds the workers' buffers in. Events reach each synth at the same frame as
/// in a one-synth render. One hand-over per block, none per piece.
///
/// Threads: build it and `reset` it off the render thread; `receive`,
/// `render`, `finishBlock` on the render thread, where nothing here (or in
/// the workers' loop) allocates, locks or throws.
public final class SamplerPool: Instrument, @unchecked Sendable {
    public let stripCount: Int
    public let effectsGroupCount: Int
    public let eventGranularity = 64
    /// The synths, synth 0 first (rendered on the render thread).
    public let members: [FluidSynthInstrument]
    /// Keeps the synths' SoundFonts loaded.
    private let owners: [AnyObject]
    private let core: PoolCore
    private var threads: [JoinableThread] = []

    /// Builds a pool over `members` (all alike: same rate, fonts, effects). With
    /// `startsWorkers`, one thread per member after the first serves it;
    /// otherwise the caller runs `serveWorker(_:)` on threads of its own.
    public init(members: [FluidSynthInstrument], keepingAlive owners: [AnyObject] = [],
                startsWorkers: Bool = true) throws(ALSAError) {
        precondition(!members.isEmpty)
        self.members = members
        self.owners = owners
        stripCount = members[0].stripCount
        effectsGroupCount = members[0].effectsGroupCount
        core = PoolCore(members: members)
        guard startsWorkers else { return }
        for w in 1..<members.count {
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

    /// Runs worker `index` (1..<members.count) on the calling thread until
    /// `stopWorkers`: for a pool built with `startsWorkers: false`.
    public func serveWorker(_ index: Int) {
        precondition(index >= 1 && index < members.count)
        core.serve(index)
    }

    /// Messages refused and failed renders, each counted once for the pool.
    public var refusedCount: Int { core.refusedTotal }

    /// Finishes anything recorded, resets every synth (as a new piece starts)
    /// and forgets which synth holds what. `percussionChannels` (bit c:
    /// channel c) play whole on one synth besides channel 10. Not on the render thread.
    public func reset(percussionChannels: UInt16 = 0) {
        core.flush()
        for m in members { _ = m.synth.systemReset() }
        core.routing.reset(percussion: percussionChannels | 1 << 9)
        core.refreshLoads()
    }

    public func prepare(sampleRate: Double, maxFrames: Int) {
        core.flush()
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

    public func finishBlock() { core.flush() }

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
    /// Per (channel × 128 + key): a voice of the key sounds (at the last
    /// hand-over, or started since) — held, sustained or still releasing: a
    /// new note-on on the key acts on it (FluidSynth releases it again), so
    /// the note goes where it sounds.
    let sounding: UnsafeMutablePointer<Bool>
    /// Per channel: the synth that plays it whole (−1: not chosen yet).
    private var channelOwner: UnsafeMutablePointer<Int8>
    /// Bit c: channel c plays whole on one synth / has its sustain or sostenuto pedal down.
    private var whole: UInt16 = 0
    private var pedalDown: UInt16 = 0
    /// Per synth: voices at the last hand-over, notes given since.
    let voices: UnsafeMutablePointer<Int>
    let given: UnsafeMutablePointer<Int>

    init(synthCount: Int) {
        self.synthCount = synthCount
        keyOwner = .allocate(capacity: 16 * 128); keyOwner.initialize(repeating: -1, count: 16 * 128)
        keyHeld = .allocate(capacity: 16 * 128); keyHeld.initialize(repeating: false, count: 16 * 128)
        sounding = .allocate(capacity: 16 * 128); sounding.initialize(repeating: false, count: 16 * 128)
        channelOwner = .allocate(capacity: 16); channelOwner.initialize(repeating: -1, count: 16)
        voices = .allocate(capacity: synthCount); voices.initialize(repeating: 0, count: synthCount)
        given = .allocate(capacity: synthCount); given.initialize(repeating: 0, count: synthCount)
    }

    func release() {
        keyOwner.deallocate(); keyHeld.deallocate(); sounding.deallocate(); channelOwner.deallocate()
        voices.deallocate(); given.deallocate()
    }

    mutating func reset(percussion: UInt16) {
        keyOwner.update(repeating: -1, count: 16 * 128)
        keyHeld.update(repeating: false, count: 16 * 128)
        channelOwner.update(repeating: -1, count: 16)
        whole = percussion
        pedalDown = 0
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
            if owner >= 0 && (sounding[slot] || keyHeld[slot] || pedalDown & bit != 0) {
                target = owner          // the same key still sounds there
            } else if whole & bit != 0 {
                if channelOwner[channel] < 0 { channelOwner[channel] = Int8(leastLoaded()) }
                target = Int(channelOwner[channel])
            } else {
                target = leastLoaded()
            }
            keyOwner[slot] = Int8(target)
            keyHeld[slot] = true
            sounding[slot] = true
            given[target] += 1
            return target
        case 0x80, 0x90:
            keyHeld[slot] = false
            return Int(keyOwner[slot])
        case 0xA0:
            return Int(keyOwner[slot])
        case 0xB0:
            let value = message.data2
            switch message.data1 {
            case 64, 66:
                // Either pedal down keeps released keys sounding: their repeats stay put.
                if value >= 64 { pedalDown |= bit } else { pedalDown &= ~bit }
            case 65, 68:
                if value >= 64 { makeWhole(channel) }      // portamento, legato footswitch
            case 84, 126:
                makeWhole(channel)                         // portamento control, mono mode
            case 121:
                pedalDown &= ~bit                          // reset all controllers
            case 120, 123, 124, 125, 127:
                releaseKeys(of: channel)                   // all sound / notes off, mode changes
            default: break
            }
            return -1
        default:
            return -1
        }
    }

    /// A channel whose notes interact stays whole from now on (until `reset`).
    @inline(__always)
    private mutating func makeWhole(_ channel: Int) { whole |= UInt16(1) << channel }

    @inline(__always)
    private func releaseKeys(of channel: Int) {
        (keyHeld + channel << 7).update(repeating: false, count: 128)
    }

    mutating func releaseAllKeys() {
        keyHeld.update(repeating: false, count: 16 * 128)
    }

    /// Voices at the last hand-over plus two per note given since (most
    /// General MIDI presets start two voices a note); the lowest index wins ties.
    /// Synth 0 counts one voice more: its thread also runs the sequencer, sums
    /// the workers' output and mixes (about 7% of a synth's work in
    /// callgrind on linns_basket), so ties go to a worker.
    @inline(__always)
    private func leastLoaded() -> Int {
        var best = 0, bestLoad = Int.max
        for s in 0..<synthCount {
            let load = voices[s] + 2 * given[s] + (s == 0 ? 1 : 0)
            if load < bestLoad { best = s; bestLoad = load }
        }
        return best
    }
}

/// What the pool's threads share. Main (render) thread: records, then flush
/// hands the record to the workers and waits; workers: replay on their synth.
/// The record is written only while every worker waits, and read only between
/// a hand-over and the workers' done count: the signals order the two.
final class PoolCore: @unchecked Sendable {
    let members: [FluidSynthInstrument]
    let count: Int
    /// Buffers a synth writes: dry (left, right per strip), then effects.
    let dryCount: Int
    let effectCount: Int
    /// Pointers recorded per piece: dry then the effects (4 per group), as the renderer passes them.
    let pieceStride: Int
    var routing: PoolRouting

    private let commandCapacity = 4096
    private let commands: UnsafeMutablePointer<PoolCommand>
    private var commandCount = 0
    private let sysExCapacity = 1 << 16
    private let sysExBytes: UnsafeMutablePointer<UInt8>
    private var sysExUsed = 0
    private let pieceCapacity = 256
    private let piecePointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    private var pieceCount = 0
    /// Frames recorded since the last hand-over (where worker buffers are filled to).
    private var localFrames = 0

    private var maxFrames = 0
    /// Per worker: `(dryCount + effectCount) × maxFrames` floats, and pointers into them for one piece.
    private var storage: [UnsafeMutablePointer<Float>]
    private let scratch: [UnsafeMutablePointer<UnsafeMutablePointer<Float>?>]
    /// Per synth: refusals counted by the thread that replays it.
    private let refused: UnsafeMutablePointer<Int>
    private let start: [WakeSignal]
    private let voiceList: UnsafeMutablePointer<OpaquePointer?>
    private let voiceListCapacity: Int
    private let done = WakeSignal()
    private var generation = 0
    private static let spins = 1 << 14

    init(members: [FluidSynthInstrument]) {
        self.members = members
        count = members.count
        dryCount = 2 * members[0].stripCount
        effectCount = members[0].effectBufferCount
        pieceStride = dryCount + effectCount
        routing = PoolRouting(synthCount: members.count)
        commands = .allocate(capacity: commandCapacity)
        sysExBytes = .allocate(capacity: sysExCapacity)
        piecePointers = .allocate(capacity: pieceCapacity * pieceStride)
        piecePointers.initialize(repeating: nil, count: pieceCapacity * pieceStride)
        storage = (0..<members.count).map { _ in .allocate(capacity: 0) }
        let stride = pieceStride
        scratch = (0..<members.count).map { _ in
            let p = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: stride)
            p.initialize(repeating: nil, count: stride)
            return p
        }
        refused = .allocate(capacity: members.count); refused.initialize(repeating: 0, count: members.count)
        start = (0..<members.count).map { _ in WakeSignal() }
        voiceListCapacity = members.map(\.synth.polyphony).max() ?? 256
        voiceList = .allocate(capacity: voiceListCapacity)
        voiceList.initialize(repeating: nil, count: voiceListCapacity)
        routing.reset(percussion: 1 << 9)
    }

    deinit {
        commands.deallocate(); sysExBytes.deallocate(); piecePointers.deallocate()
        for p in storage { p.deallocate() }
        for p in scratch { p.deallocate() }
        refused.deallocate(); voiceList.deallocate()
        routing.release()
    }

    /// Sizes the workers' buffers. While the workers wait.
    func prepare(maxFrames: Int) {
        guard maxFrames != self.maxFrames else { return }
        self.maxFrames = maxFrames
        let size = (dryCount + effectCount) * maxFrames
        for w in 0..<count {
            storage[w].deallocate()
            storage[w] = .allocate(capacity: size)
            storage[w].initialize(repeating: 0, count: size)
        }
    }

    var refusedTotal: Int {
        var total = 0
        for s in 0..<count { total += refused[s] }
        return total
    }

    // MARK: Recording (render thread)

    @inline(__always)
    private func append(_ command: PoolCommand) {
        if commandCount == commandCapacity { flush() }
        commands[commandCount] = command
        commandCount += 1
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
        if data.count > sysExCapacity {
            // Too long to keep: apply it now, every worker waiting.
            flush()
            if !members[0].synth.sysEx(data) { refused[0] += 1 }
            for s in 1..<count { _ = members[s].synth.sysEx(data) }
            return
        }
        if sysExUsed + data.count > sysExCapacity || commandCount == commandCapacity { flush() }
        (sysExBytes + sysExUsed).update(from: base, count: data.count)
        append(.sysEx(start: sysExUsed, count: data.count))
        sysExUsed += data.count
    }

    func recordRender(frames: Int,
                      dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                      effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {
        var offset = 0
        while offset < frames {
            let n = min(frames - offset, maxFrames)
            if pieceCount == pieceCapacity || localFrames + n > maxFrames || commandCount == commandCapacity {
                flush()
            }
            let p = piecePointers + pieceCount * pieceStride
            for j in 0..<dryCount { p[j] = dry[j].map { $0 + offset } }
            for j in 0..<effectCount { p[dryCount + j] = effects[j].map { $0 + offset } }
            commands[commandCount] = .render(piece: pieceCount, local: localFrames, frames: n)
            commandCount += 1
            pieceCount += 1
            localFrames += n
            offset += n
        }
    }

    // MARK: Hand-over

    /// Replays the record on every synth (the workers on theirs, this thread
    /// on synth 0), adds the workers' sound into the recorded buffers, and
    /// clears the record.
    func flush() {
        guard commandCount > 0 else { return }
        if count > 1 {
            done.value.store(0, ordering: .sequentiallyConsistent)
            generation += 1
            for w in 1..<count { start[w].publish(generation) }
        }
        replay(0)
        if count > 1 {
            let workers = count - 1
            _ = done.wait(spins: Self.spins) { $0 == workers }
            addWorkers()
        }
        refreshLoads()
        commandCount = 0; pieceCount = 0; localFrames = 0; sysExUsed = 0
    }

    /// Reads each synth's voice count and sounding keys for the next block's
    /// note placement. While the workers wait.
    func refreshLoads() {
        routing.sounding.update(repeating: false, count: 16 * 128)
        for s in 0..<count {
            let synth = members[s].synth
            routing.voices[s] = synth.activeVoiceCount
            routing.given[s] = 0
            synth.markSoundingKeys(routing.sounding, scratch: voiceList, capacity: voiceListCapacity)
        }
    }

    /// Sums worker 1, 2, … into synth 0's output, always in that order.
    private func addWorkers() {
        for c in 0..<commandCount {
            guard case .render(let piece, let local, let frames) = commands[c] else { continue }
            let p = piecePointers + piece * pieceStride
            for j in 0..<(dryCount + effectCount) {
                guard let out = p[j] else { continue }
                for w in 1..<count {
                    let from = storage[w] + j * maxFrames + local
                    for i in 0..<frames { out[i] += from[i] }
                }
            }
        }
    }

    /// Worker `w`'s loop: wait for a hand-over, replay it, count it done.
    func serve(_ w: Int) {
        var seen = 0
        let signal = start[w]
        while true {
            let g = signal.wait(spins: Self.spins) { $0 != seen }
            if g < 0 { return }
            seen = g
            replay(w)
            done.increment()
        }
    }

    /// Ends the workers' loops. Not on the render thread.
    func stop() {
        for w in 1..<count { start[w].publish(-1) }
    }

    /// Plays the record on synth `s`: its messages, every broadcast, every
    /// piece. Broadcast refusals are counted by synth 0 only.
    private func replay(_ s: Int) {
        let member = members[s]
        var refusals = 0
        for c in 0..<commandCount {
            switch commands[c] {
            case .message(let message, let target):
                if target < 0 || target == s {
                    if !member.send(message) && (target >= 0 || s == 0) { refusals += 1 }
                }
            case .sysEx(let start, let n):
                if !member.synth.sysEx(UnsafeBufferPointer(start: sysExBytes + start, count: n)) && s == 0 {
                    refusals += 1
                }
            case .effect(let effect, let value):
                if !member.apply(effect, value) && s == 0 { refusals += 1 }
            case .silence:
                _ = member.synth.allSoundsOff()
            case .render(let piece, let local, let frames):
                let ok: Bool
                if s == 0 {
                    let p = piecePointers + piece * pieceStride
                    ok = member.process(frames: frames, dry: p, effects: p + dryCount)
                } else {
                    let p = scratch[s], base = storage[s]
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
    }
}
