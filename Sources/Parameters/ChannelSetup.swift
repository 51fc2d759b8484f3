import MIDI

/// What a mapping asks of one sampler channel before any control moves.
public struct ChannelSetup: Hashable, Sendable {
    public var channel: Channel
    /// A SoundFont file name or path, looked up like `--soundfont`.
    public var soundFont: String?
    /// Bank number 0...16383 (MSB·128 + LSB); 128 is the GM percussion bank in FluidSynth.
    public var bank: Int?
    public var program: UInt7?
    /// Which instrument plays the channel (`instrument: oscillator`); nil: the sampler.
    public var instrument: ChannelInstrument?
    /// An LV2 instrument's URI playing the channel instead (`lv2: URI`), as `--instrument N=URI`.
    public var lv2: String?

    public init(channel: Channel, soundFont: String? = nil, bank: Int? = nil, program: UInt7? = nil,
                instrument: ChannelInstrument? = nil, lv2: String? = nil) {
        self.channel = channel
        self.lv2 = lv2
        self.soundFont = soundFont
        self.bank = bank
        self.program = program
        self.instrument = instrument
    }
}
