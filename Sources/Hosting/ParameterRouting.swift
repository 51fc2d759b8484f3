import Controls
import Engine
import MIDI
import Parameters
import Synchronization

/// Where a parameter change goes, as the parameter table
/// (`ParameterAddress.spec`) says: a store slot (mixer, effects, tone), a
/// channel message into the render thread's queue, or the transport. One
/// place, used by every host (live, play, render).
public struct ParameterRouting: Sendable {
    public let parameters: ParameterStore
    public let events: (any ChannelOutput)?
    public let transport: Transport?
    /// The piece's first tempo (bpm): `transport.tempo` is relative to it.
    public let pieceTempo: Double
    /// The notes `channel.N.note` and `channel.N.gate` hold down.
    let noteGates = NoteGates()

    public init(parameters: ParameterStore, events: (any ChannelOutput)?, transport: Transport?, pieceTempo: Double = 120) {
        self.parameters = parameters
        self.events = events
        self.transport = transport
        self.pieceTempo = pieceTempo > 0 ? pieceTempo : 120
    }

    /// Applies one change. Any thread but the render thread. `frame`: the
    /// sample-clock frame of the message that made it (`TimedParameterChange`):
    /// a store value then lands at the start of that frame's block, where a
    /// take's render lands it, and a channel message at that frame; nil: at once.
    public func apply(_ change: ParameterChange, at frame: UInt64? = nil) {
        let value = Double(change.value)
        let placement: EventQueueProducer.Placement = frame.map { .frame($0) } ?? .afterLast
        switch change.address.spec.application {
        case .store, .instrumentEffect:
            if let frame { parameters.set(change.address, value, atFrame: frame) } else { parameters.set(change.address, value) }
        case .channelMessage(.notePitch(let c)):
            for m in noteGates.pitch(value, on: c) { events?.push(m, at: placement) }
        case .channelMessage(.noteGate(let c)):
            for m in noteGates.gate(value >= 0.5, on: c) { events?.push(m, at: placement) }
        case .channelMessage(let target):
            events?.push(Self.message(target, value), at: placement)
        case .transport(let command):
            if let transport { Self.apply(command, value, to: transport, pieceTempo: pieceTempo) }
        case .scene:
            break  // the hub switches scenes; their values arrive as changes of their own
        case .keyboard:
            break  // KeyboardRouting follows it on the input side
        }
    }

    /// The channel message that carries `value` (clamped to its data range).
    static func message(_ target: ChannelVoiceTarget, _ value: Double) -> ChannelMessage {
        let byte = dataByte(value)
        switch target {
        case .controlChange(let c, let cc): return .controlChange(cc.value, value: byte, channel: c.intValue)
        case .programChange(let c): return .programChange(byte, channel: c.intValue)
        case .pitchBend(let c):
            let bend = Int(min(max(value.isFinite ? value.rounded() : 8192, 0), 16383))
            return ChannelMessage(status: 0xE0 | UInt8(c.intValue), data1: UInt8(bend & 0x7F), data2: UInt8(bend >> 7))
        case .notePitch(let c), .noteGate(let c):  // stateful: `apply` hands them to `noteGates`
            return .noteOff(byte, channel: c.intValue)
        }
    }

    static func dataByte(_ value: Double) -> UInt8 { UInt8(min(max(value.isFinite ? value.rounded() : 0, 0), 127)) }

    /// `play` and `stop` are triggers: each press arrives as its own change
    /// (value 1), so a press shorter than a block is never lost; the release
    /// (0) does nothing. `loop` is a toggle; `tempo` is in bpm relative to the
    /// piece's first tempo; `position` is in % of the piece.
    public static func apply(_ command: ParameterAddress.Transport, _ value: Double, to transport: Transport,
                             pieceTempo: Double = 120) {
        switch command {
        case .play: if value >= 0.5 { transport.play() }
        case .stop: if value >= 0.5 { transport.stop() }
        case .loop:
            let region = transport.loopRegion
            transport.setLoop(value >= 0.5, start: region.start, end: region.end)
        case .tempo: transport.setTempoScale(value / (pieceTempo > 0 ? pieceTempo : 120))
        case .position: transport.seek(to: max(0, min(value, 100)) / 100 * transport.duration)
        }
    }
}

/// The note a control holds on each channel: `channel.N.note` is its pitch,
/// `channel.N.gate` holds it down. A gate opening plays the pitch; a new pitch
/// while open ends the sounding note and plays the new one (a glide in
/// semitone steps, as a finger on a keyboard); the gate closing ends it.
final class NoteGates: Sendable {
    private struct Channel16 {
        var pitch = [UInt8](repeating: 60, count: 16)
        var sounding = [UInt8?](repeating: nil, count: 16)
    }
    private let state = Mutex(Channel16())
    static let velocity: UInt8 = 100

    func pitch(_ value: Double, on channel: Channel) -> [ChannelMessage] {
        let c = channel.intValue, p = ParameterRouting.dataByte(value)
        return state.withLock { s in
            s.pitch[c] = p
            guard let old = s.sounding[c], old != p else { return [] }
            s.sounding[c] = p
            return [.noteOff(old, channel: c), .noteOn(p, velocity: Self.velocity, channel: c)]
        }
    }

    func gate(_ open: Bool, on channel: Channel) -> [ChannelMessage] {
        let c = channel.intValue
        return state.withLock { s in
            switch (open, s.sounding[c]) {
            case (true, nil):
                s.sounding[c] = s.pitch[c]
                return [.noteOn(s.pitch[c], velocity: Self.velocity, channel: c)]
            case (false, let old?):
                s.sounding[c] = nil
                return [.noteOff(old, channel: c)]
            default:
                return []
            }
        }
    }
}
