import Engine
import FluidSynth

/// Which synth plays what: a note-on goes to the synth with the least load,
/// its key's repeats, off and pressure follow it, and a channel that must
/// play whole stays on one synth. Render thread only (or while it is idle).
struct NotePlacement {
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
