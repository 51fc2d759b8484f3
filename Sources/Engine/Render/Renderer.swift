import Parameters
import Synchronization

/// The block render loop, the same for live playback and offline rendering.
///
/// Each `render(frames:into:)` call, on the render thread:
/// 1. takes the events due in the block from the sequencer (the scheduled
///    `Score`) and from the `events` queue (pushed by another thread), in time
///    order, and splits the block at each one so it applies at its frame;
/// 2. has the instrument (and the oscillator) render each piece into the
///    strip buffers, and the tone and each track its whole block;
/// 3. mixes the strips (gain, balance, mute, solo, master, meters) into the
///    caller's interleaved stereo buffer;
/// 4. advances the sample clock (`sampleTime`) by `frames`.
///
/// Strips (`meters.strips` lists them, the mixer's list of `StripID`s, each
/// with its buffers in a block slot's inputs): one per instrument strip (per MIDI
/// channel, `strip.N.*`; a channel an attached `ChannelPlugin` plays sounds
/// in its strip too, added after the instrument's block is complete), the oscillator (`osc.level|pan|mute|solo`), the
/// tone (`tone.level|pan|mute|solo`), the shared reverb and chorus returns
/// (when the instrument has one effects group; with one group per channel
/// each channel's effects go through its own strip), then one per track
/// (`track.N.gain|pan|mute|solo`). Any solo silences every strip not soloed.
///
/// Tracks: `Renderer(instrument:tracks:)` takes up to
/// `ParameterAddress.maxTracks` `TrackSource`s, fixed for the renderer's
/// life. Each block, every track renders `frames` frames into its strip,
/// told the piece's position (seconds, at the block's start) and whether
/// the piece plays (a piece is scheduled, the transport plays, the piece has
/// not ended), so it starts, stops, seeks and loops with the transport.
///
/// Stems: with `capturesStems` set before `prepare`, `stem(_:)` gives each
/// strip's last block after the master gain; the stems add up to the output.
///
/// Blocks in flight: `render` is `dispatch` (steps 1–2, then the instrument's
/// `finishBlock`) followed by `collect` (the instrument's `collectBlock`, then
/// steps 3–4's mix). An instrument that renders on threads of its own
/// (`Instrument.blocksInFlight` > 0: the offline pool) lets the caller
/// dispatch that many blocks ahead of the one it collects, each into a slot
/// of buffers of its own, so the threads are not held in step block by block.
/// Offline only: parameters are read when a block is mixed, and the sample
/// clock (`sampleTime`, the sequencer, `isScoreFinished`) is the dispatch side's.
///
/// Threads: `prepare` and `schedule` before rendering starts (or while no
/// render call runs); `render` and `silence` on one render thread;
/// `events.push` on one producer thread; `parameters` and `meters` from any thread.
/// Nothing in `render` allocates, locks, throws or logs.
public final class Renderer: @unchecked Sendable {
    public let instrument: any Instrument
    /// Messages from another thread (MIDI input, UI), applied at their `frame`.
    public let events: EventQueue
    /// Mixer parameters, set from any thread.
    public let parameters: ParameterStore
    /// Levels, read from any thread.
    public var meters: Meters { mixer.meters }
    /// Play, stop, seek, loop and tempo of the scheduled piece, from any
    /// thread; polled once per block.
    public let transport = Transport()
    /// The preset each sampler channel plays, as this thread applied it (read from any thread).
    public let selections = ChannelSelections()

    private let mixer: Mixer
    /// The oscillator instrument, played by the channels `route` gives it.
    public let oscillator = Oscillator()
    /// The built-in tone (`tone.*`), a source of its own strip.
    private var tone: ToneSource
    /// Which instrument each MIDI channel plays: 0 the sampler, 1 the
    /// oscillator, 2 + k `channelPlugins[k]`; one lookup per event.
    private let routes: UnsafeMutablePointer<UInt8>
    /// The channels' own instruments (`attach`), each with its channel.
    private var channelPlugins: [(channel: Int, plugin: any ChannelPlugin)] = []
    /// Per slot: each channel plugin's planar left and right, `maxFrames` each, one after the other.
    private var slotPlugins: UnsafeMutablePointer<Float>
    private var pluginBuffers: UnsafeMutablePointer<Float>
    /// The slot being dispatched: the oscillator's planar left and right, `maxFrames` each.
    private var oscillatorBuffer: UnsafeMutablePointer<Float>
    private var oscillatorSounds = false
    /// Where the mixer finds each source in a slot's inputs (`dryPointers`): after the
    /// instrument's dry and effects pointers, the oscillator's, the tone's, then the tracks' left and right.
    private let oscillatorInput: Int, toneInput: Int, firstTrackInput: Int
    /// Pointers per slot: the instrument's buffers, then the oscillator's, the tone's and the tracks'.
    private let inputsPerSlot: Int
    /// The sequencer's dropped-message count, published once per block.
    private let dropped = Atomic<Int>(0)
    private var sequencer = Sequencer()
    /// The slot being dispatched: its strip and effect buffers, and pointers to them.
    private var buffers: UnsafeMutablePointer<Float>
    private var dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    private var effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    /// Block slots (`instrument.blocksInFlight + 1`), each: its buffers, its
    /// inputs (the pointers the instrument renders into and the mixer reads),
    /// its oscillator, tone and track buffers, and the frames and whether the
    /// oscillator and the tone sounded in the block it holds.
    private let slotCount: Int
    private var slotBuffers: UnsafeMutablePointer<Float>
    private let slotPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    private var slotOscillator: UnsafeMutablePointer<Float>
    private var slotTone: UnsafeMutablePointer<Float>
    private var slotTracks: UnsafeMutablePointer<Float>
    private let slotFrames: UnsafeMutablePointer<Int>
    private let slotOscillatorSounds: UnsafeMutablePointer<Bool>
    private let slotToneSounds: UnsafeMutablePointer<Bool>
    /// Blocks dispatched and collected since `prepare`.
    private var dispatched = 0
    private var collected = 0
    private let dryPiece: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    private let effectsPiece: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>
    private var bufferCount: Int { 2 * instrument.stripCount + effectsCount }
    /// Effect buffers: reverb L/R, chorus L/R per effects group.
    private let effectsCount: Int
    /// The tracks, and (the slot being dispatched) their planar left, right, `maxFrames` each, one after the other.
    public let tracks: [any TrackSource]
    private var trackBuffers: UnsafeMutablePointer<Float>
    private let granularity: Int
    private var effectWatcher: EffectWatcher
    private var sysExTable = SysExTable()
    /// The MIDI effects (`attach(_:)`), each with the queue its messages come through.
    private var midiEffects: [(effect: any MIDIEffect, queue: EventQueue)] = []
    /// What the MIDI effects sent in the block being dispatched, by frame (absolute), and the next to apply.
    private let effectOutput: UnsafeMutablePointer<TimedMessage>
    private var effectOutputCount = 0, effectOutputNext = 0
    /// Messages the MIDI effects sent beyond `effectOutputCapacity` in a block (dropped). Any thread.
    private let effectOverflows = Atomic<Int>(0)
    public static let effectOutputCapacity = 1024

    public private(set) var sampleRate: Double = 0
    public private(set) var maxFrames = 0
    /// Frames rendered since `prepare`: the sample clock events are timed on.
    public private(set) var sampleTime: UInt64 = 0

    /// `tracks`: at most `ParameterAddress.maxTracks` sources, each a strip of its own.
    /// `masterInserts`: effects on the master, in order, before its gain and meters;
    /// `stripInserts`: on strips, before their gain, pan and meters (all sized for `prepare`'s `maxFrames`).
    public init(instrument: any Instrument, tracks: [any TrackSource] = [], eventCapacity: Int = 1024,
                parameters: ParameterStore = ParameterStore(), masterInserts: [any AudioInsert] = [],
                stripInserts: [ParameterAddress.StripID: [any AudioInsert]] = [:]) {
        precondition(tracks.count <= ParameterAddress.maxTracks, "at most \(ParameterAddress.maxTracks) tracks")
        self.instrument = instrument
        self.events = EventQueue(capacity: eventCapacity)
        self.parameters = parameters
        self.tracks = tracks
        effectsCount = 4 * instrument.effectsGroupCount
        let strips = instrument.stripCount, ownEffects = instrument.effectsGroupCount > 1
        precondition(!ownEffects || instrument.effectsGroupCount == strips, "one effects group, or one per strip")
        let oscillatorInput = 2 * strips + 4 * instrument.effectsGroupCount
        let toneInput = oscillatorInput + 2, firstTrackInput = toneInput + 2
        self.oscillatorInput = oscillatorInput; self.toneInput = toneInput; self.firstTrackInput = firstTrackInput
        inputsPerSlot = firstTrackInput + 2 * tracks.count
        // The mixer's strips, in the order they are summed: the instrument's (each
        // with its effects group, if it has one), the oscillator, the tone, the
        // shared returns, the tracks.
        var list: [Mixer.Strip] = (0..<strips).map {
            Mixer.Strip(id: .channel($0), source: 2 * $0, effects: ownEffects ? 2 * strips + 4 * $0 : -1)
        }
        list.append(Mixer.Strip(id: .oscillator, source: oscillatorInput))
        list.append(Mixer.Strip(id: .tone, source: toneInput))
        if !ownEffects {
            list.append(Mixer.Strip(id: .reverb, source: 2 * strips, isReturn: true))
            list.append(Mixer.Strip(id: .chorus, source: 2 * strips + 2, isReturn: true))
        }
        list += tracks.indices.map { Mixer.Strip(id: .track($0), source: firstTrackInput + 2 * $0) }
        mixer = Mixer(strips: list, sourceNames: list.map { if case .track(let t) = $0.id { tracks[t].name } else { "" } },
                      parameters: parameters, masterInserts: masterInserts, stripInserts: stripInserts)
        tone = ToneSource(parameters: parameters)
        granularity = max(1, instrument.eventGranularity)
        effectWatcher = EffectWatcher(parameters: parameters)
        routes = .allocate(capacity: 16); routes.initialize(repeating: 0, count: 16)
        slotCount = max(0, instrument.blocksInFlight) + 1
        slotPointers = .allocate(capacity: slotCount * inputsPerSlot)
        slotPointers.initialize(repeating: nil, count: slotCount * inputsPerSlot)
        slotBuffers = .allocate(capacity: 0)
        slotOscillator = .allocate(capacity: 0)
        slotTone = .allocate(capacity: 0)
        slotTracks = .allocate(capacity: 0)
        slotPlugins = .allocate(capacity: 0); pluginBuffers = slotPlugins
        slotFrames = .allocate(capacity: slotCount); slotFrames.initialize(repeating: 0, count: slotCount)
        slotOscillatorSounds = .allocate(capacity: slotCount); slotOscillatorSounds.initialize(repeating: false, count: slotCount)
        slotToneSounds = .allocate(capacity: slotCount); slotToneSounds.initialize(repeating: false, count: slotCount)
        buffers = slotBuffers; oscillatorBuffer = slotOscillator; trackBuffers = slotTracks
        dry = slotPointers; effects = slotPointers + 2 * strips
        dryPiece = .allocate(capacity: 2 * strips); dryPiece.initialize(repeating: nil, count: 2 * strips)
        effectsPiece = .allocate(capacity: effectsCount); effectsPiece.initialize(repeating: nil, count: effectsCount)
        effectOutput = .allocate(capacity: Self.effectOutputCapacity)
        effectOutput.initialize(repeating: TimedMessage(frame: 0, message: .noteOff(0, channel: 0)), count: Self.effectOutputCapacity)
    }

    deinit {
        sequencer.destroy()
        slotBuffers.deallocate(); slotOscillator.deallocate(); slotTone.deallocate(); slotTracks.deallocate()
        slotPlugins.deallocate(); slotPointers.deallocate(); slotFrames.deallocate()
        slotOscillatorSounds.deallocate(); slotToneSounds.deallocate()
        routes.deallocate()
        effectWatcher.release(); sysExTable.release()
        dryPiece.deallocate(); effectsPiece.deallocate(); effectOutput.deallocate()
    }

    /// Keep each strip's block for `stem(_:)` (offline stems). Set before `prepare`.
    public var capturesStems: Bool {
        get { mixer.capturesStems }
        set { mixer.capturesStems = newValue }
    }

    /// Strip `s`'s (`meters.strips[s]`) last block after the master gain:
    /// planar left and right, `frames` of the last `render` each; nil when the
    /// strip was silent in it (or `capturesStems` is off). Render thread (or while idle).
    public func stem(_ s: Int) -> (left: UnsafePointer<Float>, right: UnsafePointer<Float>)? { mixer.stem(s) }

    /// Sizes every buffer for blocks of up to `maxFrames` frames and resets the
    /// sample clock to 0. Not on the render thread, and with no block in flight.
    public func prepare(sampleRate: Double, maxFrames: Int) {
        precondition(maxFrames > 0 && sampleRate > 0)
        precondition(pendingBlocks == 0, "collect or discard every block before prepare")
        self.sampleRate = sampleRate
        self.maxFrames = maxFrames
        instrument.prepare(sampleRate: sampleRate, maxFrames: maxFrames)
        var lags: [Int: Int] = [:]
        for (channel, plugin) in channelPlugins { lags[channel % instrument.stripCount, default: 0] += plugin.latency }
        mixer.prepare(maxFrames: maxFrames, instrumentLatency: lags)
        oscillator.prepare(sampleRate: sampleRate)
        tone.prepare(sampleRate: sampleRate)
        func storage(_ perSlot: Int) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: slotCount * perSlot)
            p.initialize(repeating: 0, count: slotCount * perSlot)
            return p
        }
        slotBuffers.deallocate(); slotBuffers = storage(bufferCount * maxFrames)
        slotOscillator.deallocate(); slotOscillator = storage(oscillatorSlotSize)
        slotTone.deallocate(); slotTone = storage(oscillatorSlotSize)
        slotTracks.deallocate(); slotTracks = storage(trackSlotSize)
        slotPlugins.deallocate(); slotPlugins = storage(pluginSlotSize)
        for slot in 0..<slotCount {
            let base = slotBuffers + slot * bufferCount * maxFrames, inputs = dryPointers(slot)
            for i in 0..<bufferCount { inputs[i] = base + i * maxFrames }
            for t in 0..<tracks.count {
                let left = trackSlot(slot) + 2 * t * maxFrames
                inputs[firstTrackInput + 2 * t] = left
                inputs[firstTrackInput + 2 * t + 1] = left + maxFrames
            }
        }
        dispatched = 0; collected = 0
        select(slot: 0)
        sampleTime = 0
        mixer.resetStatistics()
        mixer.meters.resetClips()
    }

    /// Has MIDI channel `channel` (0...15) play `instrument`: its messages go
    /// to that instrument instead of the other. Before rendering starts (or
    /// while no render call runs).
    public func route(channel: Int, to instrument: ChannelInstrument) {
        precondition((0..<16).contains(channel))
        routes[channel] = instrument == .oscillator ? 1 : 0
    }

    /// The instrument channel `channel` (0...15) plays (`.sampler` for a channel an attached plugin plays).
    public func instrument(forChannel channel: Int) -> ChannelInstrument {
        routes[channel & 15] == 1 ? .oscillator : .sampler
    }

    /// Has MIDI channel `channel` (0...15) play `plugin`, which sounds in the
    /// channel's strip (`channel % instrument.stripCount`). Before `prepare`.
    public func attach(_ plugin: any ChannelPlugin, toChannel channel: Int) {
        precondition((0..<16).contains(channel) && sampleRate == 0, "attach channel plugins before prepare")
        precondition(channelPlugins.count < 14, "at most 14 channel plugins")  // routes 2...15
        routes[channel] = UInt8(2 + channelPlugins.count)
        channelPlugins.append((channel, plugin))
    }

    /// Adds a MIDI effect, run at each block's start before anything else
    /// is applied; returns the queue of the messages it takes (one producer
    /// thread pushes them, timed as `events`' are). What it sends plays on
    /// the renderer's channels in the same block. Before `prepare`.
    public func attach(_ effect: any MIDIEffect, queueCapacity: Int = 1024) -> EventQueue {
        precondition(sampleRate == 0, "attach MIDI effects before prepare")
        let queue = EventQueue(capacity: queueCapacity)
        midiEffects.append((effect, queue))
        return queue
    }

    /// Blocks in which the MIDI effects' output filled the room a block has (`effectOutputCapacity`:
    /// what did not fit was dropped). Any thread.
    public var fullEffectBlocks: Int { effectOverflows.load(ordering: .relaxed) }

    /// The MIDI effects' queues (`attach(_:)`'s), in order.
    public var midiEffectQueues: [EventQueue] { midiEffects.map(\.queue) }

    /// Schedules a piece to start at `startFrame` of the sample clock (now by
    /// default), replacing any piece scheduled before. Not while `render` runs.
    public func schedule(_ score: Score, startingAt startFrame: UInt64? = nil) {
        precondition(sampleRate > 0, "prepare before schedule")
        sysExTable.replace(with: score.sysExMessages)
        sequencer.replace(with: score, sampleRate: sampleRate, startFrame: startFrame ?? sampleTime, transport: transport)
    }

    /// When the scheduled piece ends, release the notes it still holds (a
    /// player's choice; offline rendering leaves the file's ending alone).
    /// Not while `render` runs.
    public var releasesNotesAtEnd: Bool {
        get { sequencer.releasesAtEnd }
        set { sequencer.releasesAtEnd = newValue }
    }

    /// True once every scheduled event has been applied and the clock has
    /// reached the piece's end. Render thread (or when it is idle).
    public var isScoreFinished: Bool { sequencer.finished }

    /// Where the piece is on the sample clock after the last block dispatched
    /// (MIDI clock out follows it block by block). Render thread.
    public var pieceMap: PieceMap { sequencer.map }

    /// Sequencer events dropped because its held-note or chase tables were full. Any thread.
    public var droppedMessages: Int { dropped.load(ordering: .relaxed) }

    /// Where the scheduled piece ends on the sample clock.
    public var scoreEndFrame: UInt64 { sequencer.endFrame }

    /// By how many frames the mix lags the piece: the strips lined up with the
    /// one whose plugins lag most, then the master's inserts (as they last
    /// reported it). A render drops that many frames from its start. Render thread (or while idle).
    public var latency: Int { mixer.latency }

    /// The last block's peak (linear, both channels), the peak since `prepare`
    /// and the samples beyond ±1 since `prepare`. Render thread.
    public var blockPeak: Float { mixer.blockPeak }
    public var peak: Float { mixer.peak }
    public var clippedSamples: Int { mixer.clippedSamples }

    /// Renders `frames` (≤ `maxFrames`) frames of interleaved stereo into
    /// `output` (at least `2 × frames` samples): `dispatch`, then `collect`.
    /// Render thread, with no block in flight.
    public func render(frames: Int, into output: UnsafeMutableBufferPointer<Float>) {
        precondition(frames <= maxFrames && output.count >= 2 * frames)
        guard frames > 0 else { return }
        dispatch(frames: frames)
        _ = collect(into: output)
    }

    /// Blocks the caller may have dispatched and not yet collected: the instrument's `blocksInFlight`.
    public var blocksInFlight: Int { slotCount - 1 }

    /// Blocks dispatched and not yet collected.
    public var pendingBlocks: Int { dispatched - collected }

    /// The first half of `render`: the events due in the next `frames` (≤
    /// `maxFrames`, > 0) frames go to the instrument and the oscillator, which
    /// render the block into a free slot; the sample clock advances. At most
    /// `blocksInFlight + 1` blocks may be pending. Render thread.
    public func dispatch(frames: Int) {
        precondition(frames > 0 && frames <= maxFrames && pendingBlocks < slotCount)
        let slot = dispatched % slotCount
        select(slot: slot)
        for i in 0..<bufferCount { buffers.advanced(by: i * maxFrames).update(repeating: 0, count: frames) }
        // Control moves timed for a frame in this block take effect at its start, before anything reads the store.
        parameters.applyTimed(before: sampleTime &+ UInt64(frames))
        effectWatcher.poll(parameters, instrument)
        oscillator.update(from: parameters)
        oscillatorSounds = oscillator.activeVoices > 0
        if oscillatorSounds { oscillatorBuffer.update(repeating: 0, count: 2 * maxFrames) }

        let blockStart = sampleTime
        let blockEnd = blockStart &+ UInt64(frames)
        // Events apply on the instrument's grid: each moves to the nearest grid
        // frame, and is due in this block when that frame is.
        let grid = UInt64(granularity), half = grid / 2
        let bound = (blockEnd &+ grid &- 1) / grid &* grid &- half
        sequencer.begin(at: blockStart, transport: transport)
        if !tracks.isEmpty { renderTracks(frames: frames, at: blockStart) }
        let toneLeft = slotTone + slot * oscillatorSlotSize
        slotToneSounds[slot] = tone.render(frames: frames, left: toneLeft, right: toneLeft + maxFrames, parameters: parameters)
        effectOutputCount = 0; effectOutputNext = 0
        if !midiEffects.isEmpty && !leavesQueuesAlone { runMIDIEffects(frames: frames, from: blockStart) }
        var done = 0
        while true {
            // The earliest of the score's, the queue's and the MIDI effects' next events (in that order at one frame).
            var source = 0
            var event = TimedMessage(frame: 0, message: .noteOff(0, channel: 0))
            if let s = sequencer.next(before: bound) { event = s; source = 1 }
            if !leavesQueuesAlone, let q = events.peek(), q.frame < bound, source == 0 || q.frame < event.frame { event = q; source = 2 }
            if effectOutputNext < effectOutputCount, source == 0 || effectOutput[effectOutputNext].frame < event.frame {
                event = effectOutput[effectOutputNext]; source = 3
            }
            if source == 0 { break }
            let isScore = source == 1
            let snapped = grid == 1 ? event.frame : (event.frame &+ half) / grid &* grid
            let offset = snapped <= blockStart ? 0 : Int(snapped - blockStart)
            if offset > done {
                renderPiece(from: done, frames: offset - done)
                done = offset
            }
            deliver(event.message, take: event.take, at: offset, sysExFrom: isScore ? nil : events)
            if source == 1 { sequencer.advance() } else if source == 2 { events.pop() } else { effectOutputNext += 1 }
        }
        if done < frames { renderPiece(from: done, frames: frames - done) }
        for k in 0..<channelPlugins.count {
            let left = pluginBuffers + 2 * k * maxFrames
            channelPlugins[k].plugin.render(frames: frames, left: left, right: left + maxFrames)
        }
        instrument.finishBlock()
        sequencer.end(at: blockEnd, transport: transport)
        dropped.store(sequencer.droppedMessages, ordering: .relaxed)
        slotFrames[slot] = frames
        slotOscillatorSounds[slot] = oscillatorSounds
        dispatched += 1
        sampleTime = blockEnd
    }

    /// The second half of `render`: waits for the oldest pending block, mixes
    /// it into `output` (at least `2 × frames` samples of it) and returns its
    /// frames. Render thread, with a block pending.
    @discardableResult
    public func collect(into output: UnsafeMutableBufferPointer<Float>) -> Int {
        precondition(pendingBlocks > 0)
        let slot = collected % slotCount, frames = slotFrames[slot]
        precondition(output.count >= 2 * frames)
        instrument.collectBlock()
        let inputs = dryPointers(slot)
        if !channelPlugins.isEmpty { addPlugins(slot, into: inputs, frames: frames) }
        // The oscillator and the tone: their buffers, or nil (a silent strip) for a block they did not sound in.
        let oscillatorLeft = slotOscillatorSounds[slot] ? oscillatorSlot(slot) : nil
        inputs[oscillatorInput] = oscillatorLeft
        inputs[oscillatorInput + 1] = oscillatorLeft.map { $0 + maxFrames }
        let toneLeft = slotToneSounds[slot] ? slotTone + slot * oscillatorSlotSize : nil
        inputs[toneInput] = toneLeft
        inputs[toneInput + 1] = toneLeft.map { $0 + maxFrames }
        mixer.mix(frames: frames, inputs: inputs, into: output.baseAddress!)
        collected += 1
        return frames
    }

    /// Waits for every pending block and drops it unmixed (the meters and the
    /// peak do not see it): a render that ends or stops with blocks in flight. Render thread.
    public func discardPending() {
        while pendingBlocks > 0 {
            instrument.collectBlock()
            collected += 1
        }
    }

    /// Each MIDI effect takes its messages due before the block's end, runs
    /// the block, and what they send is put in time order (`effectOutput`).
    @inline(__always)
    private func runMIDIEffects(frames: Int, from blockStart: UInt64) {
        let blockEnd = blockStart &+ UInt64(frames)
        for k in 0..<midiEffects.count {
            let effect = midiEffects[k].effect, queue = midiEffects[k].queue
            while let event = queue.peek(), event.frame < blockEnd {
                effect.receive(event.message, at: event.frame <= blockStart ? 0 : Int(event.frame - blockStart))
                queue.pop()
            }
            let room = Self.effectOutputCapacity - effectOutputCount
            let first = effectOutputCount
            let n = effect.process(frames: frames, into: UnsafeMutableBufferPointer(start: effectOutput + first, count: room))
            for i in first..<(first + n) {
                effectOutput[i].frame = blockStart &+ min(effectOutput[i].frame, UInt64(frames - 1))
            }
            effectOutputCount += n
            if n == room { effectOverflows.wrappingAdd(1, ordering: .relaxed) }
        }
        // Insertion sort, stable: each effect's messages are (nearly) in order already, and few.
        do {
            var i = 1
            while i < effectOutputCount {
                let item = effectOutput[i]
                var j = i - 1
                while j >= 0 && effectOutput[j].frame > item.frame { effectOutput[j + 1] = effectOutput[j]; j -= 1 }
                effectOutput[j + 1] = item
                i += 1
            }
        }
    }

    /// Points the dispatch side's buffers at slot `slot`.
    @inline(__always)
    private func select(slot: Int) {
        dry = dryPointers(slot)
        effects = dry + 2 * instrument.stripCount
        buffers = slotBuffers + slot * bufferCount * maxFrames
        oscillatorBuffer = oscillatorSlot(slot)
        trackBuffers = trackSlot(slot)
        pluginBuffers = slotPlugins + slot * pluginSlotSize
    }

    /// Adds each channel plugin's block into its channel's strip buffers (the sampler's are complete by now).
    @inline(__always)
    private func addPlugins(_ slot: Int, into dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>, frames: Int) {
        let base = slotPlugins + slot * pluginSlotSize
        for k in 0..<channelPlugins.count {
            let strip = channelPlugins[k].channel % instrument.stripCount
            guard let left = dry[2 * strip], let right = dry[2 * strip + 1] else { continue }
            let source = base + 2 * k * maxFrames
            for i in 0..<frames {
                left[i] += source[i]
                right[i] += source[maxFrames + i]
            }
        }
    }

    // The slots' layout, for the dispatch side (`select`) and the collect side alike.
    private var oscillatorSlotSize: Int { 2 * maxFrames }
    private var trackSlotSize: Int { max(1, 2 * tracks.count * maxFrames) }
    private var pluginSlotSize: Int { max(1, 2 * channelPlugins.count * maxFrames) }
    @inline(__always) private func dryPointers(_ slot: Int) -> UnsafeMutablePointer<UnsafeMutablePointer<Float>?> {
        slotPointers + slot * inputsPerSlot
    }
    @inline(__always) private func oscillatorSlot(_ slot: Int) -> UnsafeMutablePointer<Float> {
        slotOscillator + slot * oscillatorSlotSize
    }
    @inline(__always) private func trackSlot(_ slot: Int) -> UnsafeMutablePointer<Float> { slotTracks + slot * trackSlotSize }

    /// Hands one message to what plays its channel: a channel plugin, the
    /// oscillator or the instrument (a SysEx: the instrument, its bytes from
    /// `queue`'s byte ring before its `pop`, or from the score's pool when nil), with the
    /// live take's number of the input message it came from (`TimedMessage.take`, 0: none).
    @inline(__always)
    private func deliver(_ message: ChannelMessage, take: UInt32 = 0, at offset: Int, sysExFrom queue: EventQueue?) {
        if message.isSysEx {
            deliverSysEx(message, from: queue)
        } else if routes[message.channel] >= 2 {
            channelPlugins[Int(routes[message.channel]) - 2].plugin.receive(message, at: offset)
        } else if routes[message.channel] == 1 {
            oscillator.receive(message)
            if !oscillatorSounds && message.isNoteOn {
                // Silent so far this block: the pieces before stay silent.
                oscillatorBuffer.update(repeating: 0, count: 2 * maxFrames)
                oscillatorSounds = true
            }
        } else {
            instrument.receive(message, take: take)
            selections.note(message)
        }
    }

    /// While true, `dispatch` takes nothing from the live queue or the MIDI
    /// effects' queues: the blocks a live output that is down renders away
    /// (`RenderAway`: the tails after all sound off) must not play what a
    /// player sends meanwhile. Under load a block's render is long, and what
    /// arrived during it was taken and sounded, keeping the tails from ending
    /// (the VM soak: a render-away run to its 10 s limit). Set by the thread
    /// that renders.
    public var leavesQueuesAlone = false

    /// While nothing renders (a live output that is down): takes every message
    /// queued, whatever its frame, without rendering a frame. Note-ons are
    /// dropped (played nowhere now, they would sound late, and held, when the
    /// output is back); everything else is applied in order (controls, program
    /// changes, pitch bend, pedals, SysEx), so the state a player sets meanwhile
    /// is kept. The MIDI effects' queues likewise: each effect gets its
    /// messages but the note-ons and runs one block, and what it sends but
    /// note-ons is applied. The sample clock does not move. Returns the
    /// note-ons dropped. Render thread (or the thread that stands in for it).
    @discardableResult
    public func drainWithoutSound() -> Int {
        var dropped = 0
        while let event = events.peek() {
            if event.message.isNoteOn { dropped += 1 } else { deliver(event.message, take: event.take, at: 0, sysExFrom: events) }
            events.pop()
        }
        for k in 0..<midiEffects.count {
            let effect = midiEffects[k].effect, queue = midiEffects[k].queue
            guard queue.peek() != nil else { continue }
            while let event = queue.peek() {
                if event.message.isNoteOn { dropped += 1 } else { effect.receive(event.message, at: 0) }
                queue.pop()
            }
            let n = effect.process(frames: maxFrames, into: UnsafeMutableBufferPointer(start: effectOutput, count: Self.effectOutputCapacity))
            for i in 0..<n where !effectOutput[i].message.isNoteOn { deliver(effectOutput[i].message, at: 0, sysExFrom: nil) }
        }
        return dropped
    }

    /// Hands a SysEx placeholder's bytes to the instrument: from the scheduled
    /// score's pool (`queue` nil), or from a queue's byte ring (before its `pop`).
    @inline(__always)
    private func deliverSysEx(_ message: ChannelMessage, from queue: EventQueue?) {
        let data: UnsafeBufferPointer<UInt8>?
        if let queue { data = queue.headSysEx() } else { data = sysExTable.message(message.sysExNumber) }
        if let data, !data.isEmpty { instrument.receiveSysEx(data) }
    }

    @inline(__always)
    private func renderPiece(from offset: Int, frames: Int) {
        if oscillatorSounds {
            oscillator.render(frames: frames, left: oscillatorBuffer + offset, right: oscillatorBuffer + maxFrames + offset)
        }
        if offset == 0 {
            instrument.render(frames: frames, dry: dry, effects: effects)
            return
        }
        for i in 0..<(2 * instrument.stripCount) { dryPiece[i] = dry[i].map { $0 + offset } }
        for i in 0..<effectsCount { effectsPiece[i] = effects[i].map { $0 + offset } }
        instrument.render(frames: frames, dry: dryPiece, effects: effectsPiece)
    }

    /// Each track's block, from the piece's position at the block's start.
    @inline(__always)
    private func renderTracks(frames: Int, at frame: UInt64) {
        let (position, playing) = sequencer.piecePosition(at: frame)
        for t in 0..<tracks.count {
            let left = trackBuffers + 2 * t * maxFrames
            tracks[t].render(frames: frames, position: position, playing: playing, left: left, right: left + maxFrames)
        }
    }

    /// Stops every sound now (all sound off). Render thread.
    public func silence() {
        instrument.silence(); oscillator.silence()
        for k in 0..<channelPlugins.count { channelPlugins[k].plugin.silence() }
    }
}
