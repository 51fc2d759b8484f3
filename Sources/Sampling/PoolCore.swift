import Engine
import Parameters
import FluidSynth
import Synchronization
import Threads
import Glibc

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
    var routing: NotePlacement
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
        routing = NotePlacement(synthCount: members.count, deviceID: members[0].synth.deviceID)
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
