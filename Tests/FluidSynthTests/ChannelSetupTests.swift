import Testing
import FluidSynth

/// A mapping's per-channel set-up through FluidSynth: its bank numbers (128
/// = percussion, which bank-select CCs cannot reach in its GS style) and a
/// preset of one particular SoundFont.
@Suite struct ChannelSetupTests {
    @Test func select_bankAndProgram_includingThePercussionBank() throws {
        let synth = try Synth(settings: Settings.forRendering(sampleRate: 44_100))
        let font = try synth.loadSoundFont(at: timGM)
        defer { withExtendedLifetime(font) {} }
        #expect(synth.select(channel: 0, bank: 0, program: 19))
        #expect(synth.select(channel: 3, bank: 128, program: 0))  // a drum kit on a melodic channel
    }

    @Test func extraSoundFont_isSelectedByIdOnItsChannel() throws {
        let synth = try Synth(settings: Settings.forRendering(sampleRate: 44_100))
        let extra = try synth.loadExtraSoundFont(at: timGM)
        let main = try synth.loadSoundFont(at: timGM)
        defer { withExtendedLifetime((extra, main)) {} }
        #expect(extra.id != main.id)
        #expect(synth.select(channel: 2, soundFont: extra, bank: 0, program: 40))
        #expect(synth.select(channel: 9, soundFont: extra, bank: 128, program: 0))
    }

    @Test func extraSoundFont_missingFile_isATypedError() throws {
        let synth = try Synth(settings: Settings.forRendering(sampleRate: 44_100))
        #expect(throws: FluidSynthError.self) { _ = try synth.loadExtraSoundFont(at: "/nonexistent.sf2") }
    }
}
