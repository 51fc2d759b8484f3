import Engine
import Sampling
import Testing

/// `DrumChannels` against FluidSynth 2.3's rules (fluid_synth.c, fluid_chan.c): which
/// channels a program change looks in bank 128 on, message by message.
@Suite struct DrumChannelsTests {
    static func follow(_ drums: inout DrumChannels, _ bytes: [UInt8]) -> DrumChannels.Selection {
        let selection = bytes.withUnsafeBufferPointer { drums.selection(of: $0) }
        bytes.withUnsafeBufferPointer { drums.follow(sysEx: $0) }
        return selection
    }

    @Test func gsRhythmPart_makesAChannelADrumChannel_andBack() {
        var drums = DrumChannels(deviceID: 16)
        #expect(drums.isDrum(9) && !drums.isDrum(1))
        // Part 2 (block 0x12) is MIDI channel 2; checksum 0x17.
        #expect(Self.follow(&drums, [0x41, 0x10, 0x42, 0x12, 0x40, 0x12, 0x15, 0x02, 0x17]) == .rhythmPart(channel: 1, drum: true))
        #expect(drums.isDrum(1))
        #expect(Self.follow(&drums, [0x41, 0x7F, 0x42, 0x12, 0x40, 0x12, 0x15, 0x00, 0x19]) == .rhythmPart(channel: 1, drum: false))
        #expect(!drums.isDrum(1))
        // A wrong checksum, another device: FluidSynth drops them.
        #expect(Self.follow(&drums, [0x41, 0x10, 0x42, 0x12, 0x40, 0x12, 0x15, 0x02, 0x18]) == .none)
        #expect(Self.follow(&drums, [0x41, 0x05, 0x42, 0x12, 0x40, 0x12, 0x15, 0x02, 0x17]) == .none)
        #expect(!drums.isDrum(1))
    }

    @Test func xgBankSelect_switchesDrums_onlyInXGStyle() {
        var drums = DrumChannels(deviceID: 16)
        drums.follow(ChannelMessage(status: 0xB3, data1: 0, data2: 127))
        #expect(!drums.isDrum(3), "GS style: a bank select MSB changes no channel's type")
        #expect(Self.follow(&drums, [0x43, 0x10, 0x4C, 0x00, 0x00, 0x7E, 0x00]) == .reset)
        #expect(drums.style == .xg)
        drums.follow(ChannelMessage(status: 0xB3, data1: 0, data2: 127))
        #expect(drums.isDrum(3))
        drums.follow(ChannelMessage(status: 0xB9, data1: 0, data2: 0))
        #expect(!drums.isDrum(9), "XG: bank 0 makes channel 10 melodic")
        // GS rhythm part messages are ignored outside GS style.
        #expect(Self.follow(&drums, [0x41, 0x10, 0x42, 0x12, 0x40, 0x12, 0x15, 0x02, 0x17]) == .none)
        // GM System On: every channel reset, channel 10 the drum channel, GM style.
        #expect(Self.follow(&drums, [0x7E, 0x7F, 0x09, 0x01]) == .reset)
        #expect(drums.style == .gm && drums.drums == 1 << 9)
        // GS mode set (DT1 40 00 7F 00): GS style again.
        #expect(Self.follow(&drums, [0x41, 0x10, 0x42, 0x12, 0x40, 0x00, 0x7F, 0x00, 0x41]) == .reset)
        #expect(drums.style == .gs)
    }
}
