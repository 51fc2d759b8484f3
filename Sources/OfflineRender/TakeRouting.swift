import Controls
import Engine
import Hosting
import LV2
import MIDI
import Parameters
import Synchronization

/// `render --take`: a recorded performance (`live --record-midi take.mid`)
/// played into the rig as the keyboard played it. Each message of the file
/// goes, in time order, the keyboard's way (`KeyboardRouting`: the mapping's
/// controls first, then its zones, then its own channel) on a hub of its
/// own, as if it arrived at its time; what comes out is written down:
///
/// - the channel messages the zones and the controls send (a split's notes on
///   their channels, transposed and reshaped, a pad's notes, a knob's CC to a
///   channel, a scene's presets) become the piece's score, at the time of the
///   message that caused them, so the sample plan, labels and stems see the
///   notes as they sounded;
/// - the parameters the controls move that are not channel messages (a
///   fader on `strip.2.gain`, `synth.reverb.level` …) become timed changes,
///   which the render applies at the start of the block they fall in, as
///   live does with timed input (`ParameterStore.set(_:_:atFrame:)`) — the
///   same block when the render's block is live's period (`render --block`).
///
/// A program change (or a `scene.select` control) that switches scenes
/// switches the zones there and then, as it did live; held notes end where
/// they began. The score keeps the file's SysEx and its length.
public struct TakeRouting: Sendable {
    /// The score as the rig played it.
    public var score: Score
    /// Parameter changes the controls made, in time order (seconds), besides channel messages.
    public var changes: [(seconds: Double, change: ParameterChange)]

    /// Plays `file` into `mapping`'s rig. `hub` is a hub of its own for this
    /// pass (the job's start values and the mapping's defaults), never the one
    /// that drives the render.
    ///
    /// `effects`: the zones' MIDI effect chains (`PluginHost.midiEffects`, in
    /// order), made by `makeEffect` for this pass. They run here, block by
    /// block (`blockFrames`, live's period) on a clock of `sampleRate` frames a second, as the render thread
    /// runs them live: what a zone sends them at a time is applied at that
    /// frame, and what they send is written at the frame they send it (a
    /// chord's notes, an echo later), so the sample plan and the labels see
    /// it. At the take's end each chain is sent All Notes Off, so no note it
    /// made is left on.
    public init(_ file: StandardMIDIFile, hub: ControlHub, effects: [MIDIEffectSpec] = [], sampleRate: Int = 48_000,
                blockFrames: Int = HostOptions.defaultPeriodFrames,
                makeEffect: (Int, ParameterStore) throws(LV2Error) -> any MIDIEffect = { _, _ throws(LV2Error) in
                    throw LV2Error(function: "TakeRouting", context: "no MIDI effects")
                }) throws(LV2Error) {
        let store = ParameterStore()
        var chains: [any MIDIEffect] = []
        for k in effects.indices { chains.append(try makeEffect(k, store)) }
        let runner = EffectRunner(chains, sampleRate: sampleRate, blockFrames: blockFrames)
        let capture = ScoreCapture(effects: runner)
        let routing = ParameterRouting(parameters: store, events: capture, transport: nil)
        var changes: [(seconds: Double, change: ParameterChange)] = []
        let token = hub.subscribe { change in
            switch change.address.spec.application {
            case .channelMessage: break       // into the score, through `routing`
            case .scene: break                // the scene's own values arrive as changes of their own
            case .keyboard: break             // `keyboard` follows it (the notes after it are transposed)
            case .store, .instrumentEffect, .transport: changes.append((capture.now, change))
            }
            routing.apply(change)
        }
        // Values set before the first message (start values, defaults) are the render hub's too.
        changes.removeAll()
        let keyboard = KeyboardRouting(hub: hub, events: capture, effects: effects)
        keyboard.start()
        var sysEx: [[UInt8]] = []
        file.forEachTimedEvent { timed in
            guard case .midi(let message) = timed.event else { return }
            capture.now = timed.seconds
            capture.track = UInt16(clamping: timed.track)
            runner.advance(to: timed.seconds, into: &capture.effectEvents)
            if case .sysEx(let s) = message {
                guard !s.data.isEmpty, sysEx.count <= ChannelMessage.maxSysExNumber else { return }
                capture.append(.sysExPlaceholder(sysEx.count))
                sysEx.append(s.data)
                return
            }
            keyboard.route(message, from: 0, at: .afterLast)
            // A momentary it pressed falls back a block on, as live's control loop has it (`ControlHub.tick`).
            if hub.hasFiredMomentary {
                let pressed = capture.now
                capture.now = pressed + Double(blockFrames) / Double(sampleRate)
                hub.tick()
                capture.now = pressed
            }
        }
        keyboard.stop()
        hub.unsubscribe(token)
        runner.finish(at: file.duration, into: &capture.effectEvents)
        score = Score(events: Self.merge(capture.events, capture.effectEvents), duration: file.duration)
        score.sysExMessages = sysEx
        // In time order (a release was written ahead of the messages after its press); at one time, as made.
        self.changes = changes.enumerated().sorted { ($0.element.seconds, $0.offset) < ($1.element.seconds, $1.offset) }.map(\.element)
    }
}

extension TakeRouting {
    /// Two lists of events in time order as one: at one time, `a`'s first.
    static func merge(_ a: [Score.Event], _ b: [Score.Event]) -> [Score.Event] {
        guard !b.isEmpty else { return a }
        var out: [Score.Event] = []
        out.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if j == b.count || (i < a.count && a[i].seconds <= b[j].seconds) { out.append(a[i]); i += 1 } else { out.append(b[j]); j += 1 }
        }
        return out
    }
}

/// The take's MIDI effect chains, run block by block as the pass goes: the
/// messages for each are kept at their frames until their block runs.
private final class EffectRunner {
    /// Live's block: the chains run as the render thread runs them there.
    let blockFrames: Int
    let chains: [any MIDIEffect]
    let sampleRate: Double
    /// Per chain: messages waiting for their block, (frame, message, track).
    var pending: [[(frame: Int, message: ChannelMessage, track: UInt16)]]
    /// The first frame not run yet.
    var clock = 0
    var track: UInt16 = 0
    private let output = UnsafeMutableBufferPointer<TimedMessage>.allocate(capacity: 4096)

    init(_ chains: [any MIDIEffect], sampleRate: Int, blockFrames: Int) {
        self.chains = chains
        self.sampleRate = Double(sampleRate)
        self.blockFrames = blockFrames
        pending = Array(repeating: [], count: chains.count)
    }

    deinit { output.deallocate() }

    func frame(_ seconds: Double) -> Int { max(0, Int((seconds * sampleRate).rounded())) }

    func push(_ k: Int, _ message: ChannelMessage, at seconds: Double, track: UInt16) {
        guard chains.indices.contains(k) else { return }
        pending[k].append((max(clock, frame(seconds)), message, track))
        self.track = track
    }

    /// Runs every block that ends by `seconds`.
    func advance(to seconds: Double, into events: inout [Score.Event]) {
        guard !chains.isEmpty else { return }
        let target = frame(seconds)
        while clock + blockFrames <= target { runBlock(into: &events) }
    }

    /// All Notes Off into every chain at `seconds`, and the blocks up to it and the one after.
    func finish(at seconds: Double, into events: inout [Score.Event]) {
        guard !chains.isEmpty else { return }
        advance(to: seconds, into: &events)
        for k in chains.indices { pending[k].append((max(clock, frame(seconds)), .controlChange(123, value: 0, channel: 0), track)) }
        runBlock(into: &events)
        runBlock(into: &events)
    }

    private func runBlock(into events: inout [Score.Event]) {
        let end = clock + blockFrames
        var block: [Score.Event] = []
        for k in chains.indices {
            var taken = 0
            var track = self.track
            for item in pending[k] where item.frame < end {
                chains[k].receive(item.message, at: item.frame - clock)
                track = item.track
                taken += 1
            }
            pending[k].removeFirst(taken)
            let n = chains[k].process(frames: blockFrames, into: output)
            for i in 0..<n {
                block.append(Score.Event(seconds: Double(clock + Int(output[i].frame)) / sampleRate, message: output[i].message, track: track))
            }
        }
        // Each chain's in order; several: by time, the earlier chain first at one time.
        events += block.enumerated().sorted { ($0.element.seconds, $0.offset) < ($1.element.seconds, $1.offset) }.map(\.element)
        clock = end
    }
}

/// The pass's output: channel messages at the time of the message being routed.
/// One thread (the pass's): `ChannelOutput` asks for `Sendable`, which the
/// pass's order of calls makes true.
private final class ScoreCapture: ChannelOutput, @unchecked Sendable {
    var now = 0.0
    var track: UInt16 = 0
    private(set) var events: [Score.Event] = []
    /// What the MIDI effect chains sent, in time order.
    var effectEvents: [Score.Event] = []
    private let effects: EffectRunner

    init(effects: EffectRunner) { self.effects = effects }

    func pushEffect(_ effect: Int, _ message: ChannelMessage, at placement: EventQueueProducer.Placement) -> Bool {
        effects.push(effect, message, at: now, track: track)
        return true
    }

    func append(_ message: ChannelMessage) {
        events.append(Score.Event(seconds: now, message: message, track: track))
    }

    func push(_ message: ChannelMessage, at placement: EventQueueProducer.Placement) -> Bool {
        append(message)
        return true
    }

    func pushSysEx(_ bytes: [UInt8], at placement: EventQueueProducer.Placement) -> Bool {
        // The keyboard's SysEx is taken from the file before routing (`TakeRouting`).
        false
    }
}
