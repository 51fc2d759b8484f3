import Controls
import Engine
import Hosting
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
///   which the render applies to its hub at the block they fall in (live
///   applies them at the next block too).
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
    public init(_ file: StandardMIDIFile, hub: ControlHub) {
        let capture = ScoreCapture()
        let store = ParameterStore()
        let routing = ParameterRouting(parameters: store, events: capture, transport: nil)
        var changes: [(seconds: Double, change: ParameterChange)] = []
        let token = hub.subscribe { change in
            switch change.address.spec.application {
            case .channelMessage: break       // into the score, through `routing`
            case .scene: break                // the scene's own values arrive as changes of their own
            case .store, .instrumentEffect, .transport: changes.append((capture.now, change))
            }
            routing.apply(change)
        }
        // Values set before the first message (start values, defaults) are the render hub's too.
        changes.removeAll()
        let keyboard = KeyboardRouting(hub: hub, events: capture)
        keyboard.start()
        var sysEx: [[UInt8]] = []
        file.forEachTimedEvent { timed in
            guard case .midi(let message) = timed.event else { return }
            capture.now = timed.seconds
            capture.track = UInt16(clamping: timed.track)
            if case .sysEx(let s) = message {
                guard !s.data.isEmpty, sysEx.count <= ChannelMessage.maxSysExNumber else { return }
                capture.append(.sysExPlaceholder(sysEx.count))
                sysEx.append(s.data)
                return
            }
            keyboard.route(message, from: 0, at: .afterLast)
        }
        keyboard.stop()
        hub.unsubscribe(token)
        score = Score(events: capture.events, duration: file.duration)
        score.sysExMessages = sysEx
        self.changes = changes
    }
}

/// The pass's output: channel messages at the time of the message being routed.
/// One thread (the pass's): `ChannelOutput` asks for `Sendable`, which the
/// pass's order of calls makes true.
private final class ScoreCapture: ChannelOutput, @unchecked Sendable {
    var now = 0.0
    var track: UInt16 = 0
    private(set) var events: [Score.Event] = []

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
