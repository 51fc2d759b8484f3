import Engine

/// FluidSynth 2.3.1's basic-channel table, changed as its MIDI handling
/// changes it, so the pool knows which channels play mono without asking a
/// synth. What FluidSynth does (fluid_synth.c):
///
/// - A system reset (`fluid_synth_system_reset_LOCAL`, also run by a GM or
///   GM2 System On, a GS mode set to 0x40007F and an XG reset to 0x00007E or
///   0x00007F) clears every channel's mode (`fluid_channel_init`) and makes
///   channel 0 the one basic channel, omni on poly, its group all 16 channels.
/// - CC 124/125/126/127 (omni off/on, mono, poly: `fluid_synth_cc_LOCAL`) act
///   only on a basic channel (`FLUID_CHANNEL_BASIC`); elsewhere they do
///   nothing. The new mode is the basic channel's with one bit changed, and
///   the CC's value is the group's size, as `fluid_synth_check_next_basic_channel`
///   reads it: omni-off poly is always one channel; 0 is up to the next basic
///   channel or the last channel; otherwise that many channels, refused if
///   they pass channel 16 or reach the next basic channel. Then the old group
///   is cleared (`fluid_synth_reset_basic_channel_LOCAL`: its channels
///   disabled) and the new one set (`fluid_synth_set_basic_channel_LOCAL`:
///   all notes off on each, the mode on each, enabled). So CC 126 value 0 on
///   channel 1 puts all 16 channels in mono, and CC 126 value 4 puts channels
///   1–4 in mono and disables 5–16, which then refuse notes.
/// - A CC on a disabled channel (`fluid_synth_cc`) reaches every channel of
///   the next channel's group (channel 16 wraps to 1) when that channel is a
///   basic channel in omni-off mono: MIDI's global controller.
///
/// No allocation: a value with its tables inline.
package struct ChannelModes {
    static let polyOff: UInt8 = 0x01, omniOff: UInt8 = 0x02, basic: UInt8 = 0x04, enabled: UInt8 = 0x08
    /// FLUID_CHANNEL_MODE_MASK | BASIC | ENABLED: the bits a basic-channel change sets.
    private static let basicInfo: UInt8 = 0x0F
    /// Per channel: FluidSynth's mode bits and, on a basic channel, its group's size (`mode_val`).
    private var bits = InlineArray<16, UInt8>(repeating: 0)
    private var groupSize = InlineArray<16, UInt8>(repeating: 0)
    /// The SysEx device ID the synths answer besides 0x7F (`synth.device-id`).
    let deviceID: Int

    package init(deviceID: Int) {
        self.deviceID = deviceID
        reset()
    }

    /// As `fluid_synth_system_reset_LOCAL` leaves the table.
    package mutating func reset() {
        for c in 0..<16 { bits[c] = Self.enabled; groupSize[c] = 0 }
        bits[0] |= Self.basic
        groupSize[0] = 16
    }

    func bits(ofChannel c: Int) -> UInt8 { bits[c] }
    func groupSize(ofChannel c: Int) -> Int { Int(groupSize[c]) }

    /// Bit c: channel c is in a mono mode (poly off) now.
    var monoChannels: UInt16 {
        var mask: UInt16 = 0
        for c in 0..<16 where bits[c] & Self.polyOff != 0 { mask |= 1 << c }
        return mask
    }

    /// The channels a control change on `channel` reaches (bit c: channel c):
    /// the channel itself if enabled; if not, the group of the next channel
    /// when that is a basic channel in omni-off mono; otherwise none.
    func reach(ofControlOn channel: Int) -> UInt16 {
        if bits[channel] & Self.enabled != 0 { return 1 << channel }
        let next = channel < 15 ? channel + 1 : 0
        guard bits[next] & Self.basic != 0, bits[next] & 0x03 == Self.polyOff | Self.omniOff else { return 0 }
        var mask: UInt16 = 0
        for c in next..<min(16, next + Int(groupSize[next])) { mask |= 1 << c }
        return mask
    }

    /// CC `controller` (124...127) with `value`, reaching `channel`. Returns
    /// the channels that got all notes off (the new group; none if the channel
    /// is not basic or FluidSynth refuses the group).
    mutating func changeMode(onChannel channel: Int, controller: Int, value: Int) -> UInt16 {
        guard bits[channel] & Self.basic != 0 else { return 0 }
        var mode = bits[channel] & 0x03
        switch controller {
        case 124: mode |= Self.omniOff
        case 125: mode &= ~Self.omniOff
        case 126: mode |= Self.polyOff
        case 127: mode &= ~Self.polyOff
        default: return 0
        }
        // fluid_synth_check_next_basic_channel
        var size: Int
        if mode == Self.omniOff {
            size = 1
        } else if value == 0 {
            size = 16 - channel
        } else if channel + value > 16 {
            return 0
        } else {
            size = value
        }
        for c in (channel + 1)..<(channel + size) where bits[c] & Self.basic != 0 {
            guard value == 0 else { return 0 }
            size = c - channel
            break
        }
        // fluid_synth_reset_basic_channel_LOCAL, then fluid_synth_set_basic_channel_LOCAL
        for c in channel..<min(16, channel + Int(groupSize[channel])) {
            bits[c] &= ~Self.basicInfo
            groupSize[c] = 0
        }
        var changed: UInt16 = 0
        for c in channel..<(channel + size) {
            bits[c] = bits[c] & ~Self.basicInfo | mode | Self.enabled | (c == channel ? Self.basic : 0)
            groupSize[c] = c == channel ? UInt8(size) : 0
            changed |= 1 << c
        }
        return changed
    }

    /// Whether FluidSynth runs a system reset for this SysEx message (the
    /// bytes between F0 and F7), as `fluid_synth_sysex` and its GS and XG
    /// handlers test it (bytes read as C `char`s).
    package func resets(_ data: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = data.count
        guard n >= 4 else { return false }
        @inline(__always) func at(_ i: Int) -> Int { Int(Int8(bitPattern: data[i])) }
        guard at(1) == deviceID || at(1) == 0x7F else { return false }
        switch (at(0), at(2)) {
        case (0x7E, 0x09):                                     // GM / GM2 System On
            return at(3) == 0x01 || at(3) == 0x03
        case (0x41, 0x42):                                     // GS DT1 mode set
            guard at(3) == 0x12, n == 9, at(4) << 16 | at(5) << 8 | at(6) == 0x40007F,
                  at(7) == 0 || at(7) == 0x7F else { return false }
            var sum = 0
            for i in 4..<(n - 1) { sum += at(i) }
            return 0x80 - (sum & 0x7F) == at(n - 1)
        case (0x43, 0x4C):                                     // XG system reset
            guard n == 7 else { return false }
            let address = at(3) << 16 | at(4) << 8 | at(5)
            return (address == 0x7E || address == 0x7F) && at(6) == 0
        default:
            return false
        }
    }
}
