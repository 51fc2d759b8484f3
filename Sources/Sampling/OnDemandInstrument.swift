import Engine
import FluidSynth
import Parameters

/// Live's FluidSynth instrument with presets loaded as they are selected
/// (`OnDemandPresets`): a program change whose preset is pinned goes to the
/// synth at once; one whose preset is not waits, the loader is asked for it,
/// and it is sent at the first block's start after its samples are in memory.
///
/// While it waits, every later message for its channel waits with it
/// (`HeldMessages`: notes, note-offs, controllers, bends, pressure, further
/// bank selects and program changes) and is applied in arrival order right
/// after it, in that block: a chord played at once after the program change
/// sounds with the new preset, the wait late. Notes sounding from before keep
/// sounding; their note-offs come in order, so at most the wait late. Other
/// channels never wait, unless a SysEx comes while something waits: it may
/// reset or retype any channel, so it waits in order and every channel waits
/// behind it. A SysEx that selects a preset not loaded (a reset to programs
/// 0, a GS rhythm part) waits for it the same way; which channels are drum
/// channels is followed as FluidSynth changes it (`DrumChannels`), so a
/// program change's preset is known before it is sent. While the loader's
/// window is open, program changes and SysEx wait (and their channels).
/// A program change to a preset whose samples could not be read is refused
/// (counted; the loader said it): the channel keeps its sound.
///
/// What waited is reported where it was applied (`takeStamps`: the frame
/// of the renderer's clock at the block piece it was applied before, by the
/// live take's number of its input message), so `--record-midi` stamps it
/// there and `render --take` plays it where it was heard.
///
/// Threads: built before rendering; then only the render thread calls it.
public final class OnDemandInstrument: Instrument {
    public let base: FluidSynthInstrument
    public let presets: OnDemandPresets
    private var held: HeldMessages
    private var drums: DrumChannels
    /// Where held messages of the live take were applied; the take's recorder drains it.
    public let takeStamps = TakeStamps()
    /// Frames rendered since `prepare`: the renderer's sample clock at the next `render`.
    private var renderedFrames: UInt64 = 0

    public init(base: FluidSynthInstrument, presets: OnDemandPresets, heldCapacity: Int = 1024, heldReserve: Int = 256) {
        self.base = base
        self.presets = presets
        held = HeldMessages(capacity: heldCapacity, reserve: heldReserve)
        drums = DrumChannels(deviceID: base.synth.deviceID)
    }

    deinit { held.deallocate() }

    public var stripCount: Int { base.stripCount }
    public var eventGranularity: Int { base.eventGranularity }
    public var effectsGroupCount: Int { base.effectsGroupCount }

    /// Messages waiting behind a program change now. Render thread (tests).
    package var heldCount: Int { held.count }

    public func prepare(sampleRate: Double, maxFrames: Int) {
        base.prepare(sampleRate: sampleRate, maxFrames: maxFrames)
        renderedFrames = 0
    }

    public func receive(_ message: ChannelMessage) { receive(message, take: 0) }

    public func receive(_ message: ChannelMessage, take: UInt32) {
        if held.holds(channel: message.channel) { hold(message, take: take); return }
        guard message.kind == 0xC0 else { send(message); return }
        if presets.windowOpen() { hold(message, take: take); return }
        switch readiness(of: message) {
        case .ready: sendProgram(message)
        case .loading: hold(message, take: take)
        case .failed: base.countRefusal()
        }
    }

    public func receiveSysEx(_ data: UnsafeBufferPointer<UInt8>) {
        if held.isEmpty && !presets.windowOpen() && sysExSelectsReady(data) {
            sendSysEx(data)
            return
        }
        if !held.holdSysEx(data) {
            base.countRefusal()
            presets.droppedOthers.store(held.droppedOthers, ordering: .relaxed)
        }
    }

    public func render(frames: Int,
                       dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                       effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {
        // Every block's start grants the loader's window if it asks (whether or not anything waits).
        if !presets.windowOpen() && !held.isEmpty { releaseHeld() }
        base.render(frames: frames, dry: dry, effects: effects)
        renderedFrames &+= UInt64(frames)
    }

    /// Applies, in order, every held message whose channel's preset is ready
    /// (the window is closed: program changes and SysEx may reach the synth),
    /// and reports each of the take's where it was applied: the synth takes
    /// it at its next grid frame (FluidSynth: 64), where a render of the take
    /// puts it too.
    private func releaseHeld() {
        let grid = UInt64(max(1, base.eventGranularity))
        let applied = (renderedFrames &+ grid &- 1) / grid &* grid
        held.release { [self] message, take, sysEx in
            if let data = sysEx {
                guard sysExSelectsReady(data) else { return false }
                sendSysEx(data)
                return true
            }
            guard message.kind == 0xC0 else {
                send(message)
                takeStamps.report(take: take, frame: applied)
                return true
            }
            switch readiness(of: message) {
            case .ready:
                sendProgram(message)
                takeStamps.report(take: take, frame: applied)
            case .loading: return false
            case .failed: base.countRefusal()
            }
            return true
        }
    }

    private func hold(_ message: ChannelMessage, take: UInt32) {
        switch held.hold(message, take: take) {
        case .held, .replacedWaitingProgram: break
        case .applyNow: send(message)
        case .dropped:
            base.countRefusal()
            presets.droppedOthers.store(held.droppedOthers, ordering: .relaxed)
        }
        // A note-on refused or evicted.
        presets.droppedNoteOns.store(held.droppedNoteOns, ordering: .relaxed)
    }

    private enum Readiness { case ready, loading, failed }

    /// Whether a program change's preset is in memory (asking the loader for it if not).
    @inline(__always)
    private func readiness(of programChange: ChannelMessage) -> Readiness {
        let channel = programChange.channel
        guard let target = presets.target(channel: channel, program: Int(programChange.data1), drum: drums.isDrum(channel))
        else { return .ready }
        return readiness(target)
    }

    @inline(__always)
    private func readiness(_ target: Int) -> Readiness {
        switch presets.state(target) {
        case .ready, .absent: return .ready
        case .failed: return .failed
        case .unloaded, .requested:
            presets.request(target)
            return .loading
        }
    }

    /// Whether the presets a SysEx makes FluidSynth select are in memory (asking for those that are not).
    private func sysExSelectsReady(_ data: UnsafeBufferPointer<UInt8>) -> Bool {
        switch drums.selection(of: data) {
        case .none:
            return true
        case .reset:
            let melodic = presets.resolve(bank: 0, program: 0, drum: false).map(readiness) ?? .ready
            let drum = presets.resolve(bank: 128, program: 0, drum: true).map(readiness) ?? .ready
            return melodic != .loading && drum != .loading
        case .rhythmPart(let channel, let drum):
            let bank = drum ? 128 : base.synth.storedBank(onChannel: channel)
            return (presets.resolve(bank: bank, program: 0, drum: drum).map(readiness) ?? .ready) != .loading
        }
    }

    @inline(__always)
    private func send(_ message: ChannelMessage) {
        drums.follow(message)
        base.receive(message)
    }

    private func sendProgram(_ message: ChannelMessage) {
        base.receive(message)
        presets.checkSelected(onChannel: message.channel)
    }

    private func sendSysEx(_ data: UnsafeBufferPointer<UInt8>) {
        drums.follow(sysEx: data)
        base.receiveSysEx(data)
        for channel in 0..<16 { presets.checkSelected(onChannel: channel) }
    }

    /// All sound off, and the held note-ons forgotten (they would start after it).
    public func silence() {
        held.dropNoteOns()
        base.silence()
    }

    public func setEffect(_ effect: SynthEffect, to value: Float) { base.setEffect(effect, to: value) }
    public func finishBlock() { base.finishBlock() }
    public var blocksInFlight: Int { base.blocksInFlight }
    public func collectBlock() { base.collectBlock() }
}
