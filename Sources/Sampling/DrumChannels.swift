import Engine

/// Which channels FluidSynth 2.3 treats as drum channels, followed message by
/// message as FluidSynth changes it, so a program change's preset is known
/// before the synth selects it (`OnDemandInstrument`): a drum channel's
/// program change looks in bank 128.
///
/// FluidSynth (fluid_synth.c, fluid_chan.c): channel 10 is the drum channel
/// after a reset; a GS "use for rhythm part" SysEx (in GS bank-select style)
/// makes a channel a drum or melodic one and selects its program 0; in XG
/// style, a bank select MSB of 120 or more makes a drum channel and any other
/// a melodic one; GM System On, GS mode set and XG System On reset every
/// channel and set the style (GM, GS, XG). The synth starts in GS style
/// (`synth.midi-bank-select`'s default, which Carillon leaves).
///
/// Pure; the render thread's (no allocation).
package struct DrumChannels: Equatable {
    package enum BankStyle: Equatable { case gm, gs, xg }

    /// Bit c: channel c is a drum channel.
    package private(set) var drums: UInt16 = 1 << 9
    package private(set) var style = BankStyle.gs
    /// The SysEx device ID FluidSynth answers besides 0x7F (`synth.device-id`).
    let deviceID: Int

    package init(deviceID: Int) { self.deviceID = deviceID }

    @inline(__always)
    package func isDrum(_ channel: Int) -> Bool { drums & 1 << channel != 0 }

    /// What a SysEx makes FluidSynth select.
    package enum Selection: Equatable {
        /// Nothing (not a message FluidSynth acts on, or one that selects no preset).
        case none
        /// Every channel reset: program 0 from bank 0, channel 10 from bank 128.
        case reset
        /// Channel `channel` made a drum (or melodic) channel, then its program 0 selected.
        case rhythmPart(channel: Int, drum: Bool)
    }

    /// What FluidSynth will do with a SysEx (the bytes between F0 and F7),
    /// read as fluid_synth_sysex and its GS and XG handlers read it (bytes as C `char`s).
    package func selection(of data: UnsafeBufferPointer<UInt8>) -> Selection {
        let n = data.count
        guard n >= 4 else { return .none }
        @inline(__always) func at(_ i: Int) -> Int { Int(Int8(bitPattern: data[i])) }
        guard at(1) == deviceID || at(1) == 0x7F else { return .none }
        switch (at(0), at(2)) {
        case (0x7E, 0x09):                                         // GM / GM2 System On
            return at(3) == 0x01 || at(3) == 0x03 ? .reset : .none
        case (0x41, 0x42):                                         // GS DT1
            guard at(3) == 0x12, n >= 9 else { return .none }
            var sum = 0
            for i in 4..<(n - 1) { sum += at(i) }
            guard 0x80 - (sum & 0x7F) == at(n - 1) else { return .none }
            let address = at(4) << 16 | at(5) << 8 | at(6)
            if address == 0x40007F {                                // mode set
                return n == 9 && (at(7) == 0 || at(7) == 0x7F) ? .reset : .none
            }
            guard style == .gs, address & 0xFFF0FF == 0x401015, n == 9, at(7) <= 2 else { return .none }
            let part = (address >> 8) & 0x0F                       // use for rhythm part
            let channel = part >= 0x0A ? part : (part == 0 ? 9 : part - 1)
            return .rhythmPart(channel: channel, drum: at(7) != 0)
        case (0x43, 0x4C):                                         // XG System On
            guard n == 7 else { return .none }
            let address = at(3) << 16 | at(4) << 8 | at(5)
            return (address == 0x7E || address == 0x7F) && at(6) == 0 ? .reset : .none
        default:
            return .none
        }
    }

    /// Follows a SysEx FluidSynth was given.
    package mutating func follow(sysEx data: UnsafeBufferPointer<UInt8>) {
        switch selection(of: data) {
        case .none: return
        case .rhythmPart(let channel, let drum):
            if drum { drums |= 1 << channel } else { drums &= ~(1 << channel) }
        case .reset:
            drums = 1 << 9
            @inline(__always) func at(_ i: Int) -> Int { Int(Int8(bitPattern: data[i])) }
            switch at(0) {
            case 0x7E: style = .gm
            case 0x41: style = at(7) == 0 ? .gs : .gm
            default: style = .xg
            }
        }
    }

    /// Follows a channel message FluidSynth was given (a bank select MSB in XG style).
    @inline(__always)
    package mutating func follow(_ message: ChannelMessage) {
        guard style == .xg, message.kind == 0xB0, message.data1 == 0 else { return }
        if message.data2 >= 120 { drums |= 1 << message.channel } else { drums &= ~(1 << message.channel) }
    }
}
