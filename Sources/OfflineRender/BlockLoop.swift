import Engine
import Hosting
import Parameters
import Sampling
import Threads

/// Plays one piece on its `PieceRig`, block by block, into a sink (an audio
/// file, memory, a scratch file measured for the loudness pass) and the
/// stems: the render's one block loop. It decides where the render ends —
/// the tail's silence, dead air, `--max-duration` — and drops the mix's
/// latency from the start. The render thread is the caller's.
struct BlockLoop {
    let rig: PieceRig
    let options: RenderJob.Options
    /// The score the rig plays (its duration the piece's, the tracks' included).
    let score: Score
    /// With `--take`: the parameters the controls moved, by time (`TakeRouting`).
    var changes: [(seconds: Double, change: ParameterChange)] = []
    /// Dead air (see `Options.keepsEndOfTrack`): from the first block at or
    /// after this second until the score's end, the render ends as soon as the
    /// sound has died away (the tail's silence, with no time limit).
    var deadAirFrom: Double? = nil

    /// What the loop measured of what it wrote.
    struct Played {
        var frames: UInt64
        var peak: Float
        var clippedSamples: Int
        var droppedMessages: Int
        var refusedSynthCalls: Int
        /// Stopped at `Options.maxDuration` before the piece and its tail ended.
        var truncated: Bool
        /// Ended where the sound died away in dead air.
        var endedInDeadAir: Bool
    }

    /// Plays the score into `sink` and `stems`, both finished on success; nil
    /// as soon as the rig's pool has held more voices than one synth may (the
    /// output is then incomplete: the caller discards it). `output` names the
    /// sink in an interruption.
    func run(
        into sink: any RenderSink, stems: StemWriter?, output: String,
        cancel: CancellationFlag?, progress: ((RenderJob.Progress) -> Void)?,
        clock: ContinuousClock, start: ContinuousClock.Instant
    ) throws(RenderJob.Failure) -> Played? {
        let rate = Double(options.sampleRate)
        let renderer = rig.renderer
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * rig.blockFrames)
        buffer.initialize(repeating: 0)
        defer { buffer.deallocate() }
        renderer.schedule(score, startingAt: 0)
        // A take's parameter moves (`TakeRouting.changes`), each applied as the
        // block it falls in is dispatched, the way live applies a control's.
        let takeRouting = changes.isEmpty ? nil : ParameterRouting(parameters: renderer.parameters, events: EventQueueProducer(renderer.events),
                                                                   transport: renderer.transport)
        var nextChange = 0
        // Blocks go out (`dispatch`) up to `blocksInFlight` ahead of the one
        // written (`collect`); with one synth, one at a time. Everything that
        // decides what is dispatched is known on the dispatch side, so the
        // blocks and their sizes are the same at any depth.
        defer { renderer.discardPending() }
        let depth = renderer.blocksInFlight
        var tail = TailTracker(policy: options.tail, sampleRate: rate)
        /// Tail frames dispatched (the tail tracker counts those written).
        var tailDispatched = 0
        let tailLimit = tail.remainingFrames
        let deadAirFrame = deadAirFrom.map { seconds -> UInt64 in
            let f = (seconds * rate).rounded()
            return f < 0x1p62 ? UInt64(max(0, f)) : 1 << 62   // damaged times run past UInt64: saturate
        }
        var deadAir = TailTracker(policy: TailPolicy(silenceThreshold: options.tail.silenceThreshold,
                                                     silenceHold: options.tail.silenceHold, maxTail: Self.unboundedTail),
                                  sampleRate: rate)
        var endedInDeadAir = false
        /// Per slot: what part of the piece the pending block renders.
        var pendingPart = [BlockPart](repeating: .piece, count: depth + 1)
        var dispatchedBlocks = 0, collectedBlocks = 0
        var dispatching = true, finished = false
        var limit = options.maxDuration.map { UInt64(max(0, ($0 * rate).rounded())) } ?? .max
        var truncated = false
        var written: UInt64 = 0
        /// Frames still to drop from the start: the mix's latency (`Renderer.latency`), read after the first block.
        var latencyLeft: Int? = nil

        func collect() throws(RenderJob.Failure) {
            let part = pendingPart[collectedBlocks % (depth + 1)]
            collectedBlocks += 1
            guard !finished else { renderer.discardPending(); return }
            var frames = renderer.collect(into: buffer)
            var from = 0
            if latencyLeft == nil {
                // Latency compensation: the mix (and each stem) starts where the dry piece starts.
                latencyLeft = renderer.latency
                if limit != .max { limit += UInt64(latencyLeft!) }
            }
            if let left = latencyLeft, left > 0 {
                from = min(left, frames)
                latencyLeft = left - from
                frames -= from
            }
            try sink.write(UnsafeBufferPointer(rebasing: UnsafeBufferPointer(buffer)[(2 * from)...]), frames: frames)
            try stems?.add(from: renderer, skipping: from, frames: frames)
            written += UInt64(frames)
            switch part {
            case .tail: finished = tail.observe(peak: renderer.blockPeak, frames: frames)
            case .deadAir:
                finished = deadAir.observe(peak: renderer.blockPeak, frames: frames)
                endedInDeadAir = finished
            case .piece: break
            }
            if let progress, collectedBlocks & 127 == 0 {
                progress(RenderJob.Progress(rendered: Double(written) / rate, pieceDuration: score.duration,
                                            elapsed: RenderJob.seconds(clock.now - start), inTail: part != .piece))
            }
        }

        while dispatching || renderer.pendingBlocks > 0 {
            if cancel?.isSet == true { throw .interrupted(output: output) }
            if rig.voiceBudgetExceeded { return nil }
            if finished { dispatching = false }
            guard dispatching && renderer.pendingBlocks <= depth else { try collect(); continue }
            let left = limit - min(limit, renderer.sampleTime)
            if left == 0 { truncated = true; dispatching = false; continue }
            let inTail = renderer.isScoreFinished
            let part: BlockPart = inTail ? .tail : deadAirFrame.map { renderer.sampleTime >= $0 } == true ? .deadAir : .piece
            var frames = Int(min(UInt64(rig.blockFrames), left))
            if inTail { frames = min(frames, tailLimit - tailDispatched) }
            guard frames > 0 else { dispatching = false; continue }
            if let takeRouting {
                let end = Double(renderer.sampleTime + UInt64(frames)) / rate
                while nextChange < changes.count, changes[nextChange].seconds < end {
                    takeRouting.apply(changes[nextChange].change)
                    nextChange += 1
                }
            }
            renderer.dispatch(frames: frames)
            pendingPart[dispatchedBlocks % (depth + 1)] = part
            dispatchedBlocks += 1
            if inTail { tailDispatched += frames }
        }
        // Stems first: if the mixdown then fails, they are taken back.
        try stems?.finish()
        do throws(RenderJob.Failure) { try sink.finish() } catch {
            stems?.removeFinished()
            throw error
        }
        return Played(frames: written, peak: renderer.peak, clippedSamples: renderer.clippedSamples,
                      droppedMessages: renderer.droppedMessages, refusedSynthCalls: rig.refusedCount,
                      truncated: truncated, endedInDeadAir: endedInDeadAir)
    }

    /// A tail no render reaches (a million hours): dead air is watched for silence only.
    static let unboundedTail = 3.6e9

    /// What part of a piece a block renders: the piece itself, dead air
    /// after its last sound (ends at silence), or the tail after its end.
    private enum BlockPart { case piece, deadAir, tail }
}
