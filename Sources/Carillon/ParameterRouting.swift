import Controls
import Engine
import MIDI
#if canImport(Glibc)
import Glibc
#endif

/// Where a control surface's parameter changes go: mixer and effect levels to
/// the `ParameterStore`'s atomics, synth CCs/programs/bend into the render
/// thread's `EventQueue`. One place, used by every host (live, play).
enum ParameterRouting {
    /// Applies one change. Call on the event queue's producer thread.
    static func apply(_ change: ParameterChange, parameters: ParameterStore, events: EventQueue) {
        let v = change.value
        func gain(_ dB: Float) -> Float { dB <= -60 ? 0 : pow(10, dB / 20) }
        switch change.address {
        case .masterGain: parameters.set(.masterGain, gain(v))
        case .strip(let c, .gain): parameters.set(.stripGain(c.intValue), gain(v))
        case .strip(let c, .pan): parameters.set(.stripPan(c.intValue), v)
        case .strip(let c, .mute): parameters.set(.stripMute(c.intValue), v >= 0.5 ? 1 : 0)
        case .strip(let c, .solo): parameters.set(.stripSolo(c.intValue), v >= 0.5 ? 1 : 0)
        case .reverb(.level): parameters.set(.reverbReturn, max(0, v) / 0.9)
        case .chorus(.level): parameters.set(.chorusReturn, max(0, v) / 2)
        case .reverb(.roomSize): parameters.set(.effect(.reverbRoomSize), v)
        case .reverb(.damping): parameters.set(.effect(.reverbDamping), v)
        case .reverb(.width): parameters.set(.effect(.reverbWidth), v)
        case .reverb(.enabled): parameters.set(.effect(.reverbEnabled), v >= 0.5 ? 1 : 0)
        case .chorus(.voices): parameters.set(.effect(.chorusVoices), v.rounded())
        case .chorus(.depth): parameters.set(.effect(.chorusDepth), v)
        case .chorus(.speed): parameters.set(.effect(.chorusSpeed), v)
        case .chorus(.enabled): parameters.set(.effect(.chorusEnabled), v >= 0.5 ? 1 : 0)
        case .tone(.frequency): parameters.set(.tone(.frequency), v)
        case .tone(.level): parameters.set(.tone(.level), gain(v))
        case .tone(.waveform): parameters.set(.tone(.waveform), v.rounded())
        case .tone(.enabled): parameters.set(.tone(.enabled), v >= 0.5 ? 1 : 0)
        case .channelCC(let c, let cc):
            events.push(.now(.controlChange(cc.value, value: UInt8(min(max(v.rounded(), 0), 127)), channel: c.intValue)))
        case .channelProgram(let c):
            events.push(.now(.programChange(UInt8(min(max(v.rounded(), 0), 127)), channel: c.intValue)))
        case .channelPitchBend(let c):
            let bend = Int(min(max(v.rounded(), 0), 16383))
            events.push(.now(ChannelMessage(status: 0xE0 | UInt8(c.intValue), data1: UInt8(bend & 0x7F), data2: UInt8(bend >> 7))))
        default:
            break  // transport: not applied live yet
        }
    }
}
