import Testing
import FluidSynth
@testable import Sampling
import Threads

/// `--timbres` across a SoundFont set: a piece's synth loads the set's other
/// fonts beside its own, each at the bank offset its `ExtraFont` carries
/// (`FontBankLayout`'s), and a font given no offset stays parked out of reach.
/// Real fonts: TimGM6mb at home, FluidR3_GM beside it (both have a piano at 0:0).
@Suite struct ExtraFontOffsetTests {
    static let home = "/usr/share/sounds/sf2/TimGM6mb.sf2"
    static let other = "/usr/share/sounds/sf2/FluidR3_GM.sf2"

    /// A piece's synth as `RenderJob` makes it (`SampleSelection.makeSampler`), by preset.
    static func pieceSampler(otherAt offset: Int?) throws -> Sampler {
        let selection = SampleSelection(soundFont: SharedSoundFont(path: home), byNotes: false, log: HostLog())
        let font = offset.map { Sampler.ExtraFont(path: other, view: nil, bankOffset: $0) }
            ?? Sampler.ExtraFont(path: other, view: nil)
        var plan = SampleSelection.Plan(view: nil, selection: FluidSynthInstrument.Selection())
        plan.extras = [SampleSelection.Extra(font: font, scoutID: 99)]
        return try selection.makeSampler(for: plan, path: home, sampleRate: 44_100, options: SamplerOptions())
    }

    @Test func theOtherFontAnswersAtItsOffset_fromTheStart_andTheHomeFontAtZero() throws {
        let sampler = try Self.pieceSampler(otherAt: 5)
        let synth = sampler.instrument.synth
        let homeID = try #require(sampler.soundFont?.id), otherID = try #require(sampler.extraSoundFonts.first?.id)
        #expect(synth.select(channel: 0, bank: 5, program: 0))
        #expect(synth.preset(onChannel: 0) == Synth.PresetAddress(soundFontID: otherID, bank: 0, program: 0))
        #expect(synth.select(channel: 1, bank: 0, program: 0))
        #expect(synth.preset(onChannel: 1)?.soundFontID == homeID)
    }

    @Test func aFontGivenNoOffset_isParked_noBankSelectReachesIt() throws {
        let sampler = try Self.pieceSampler(otherAt: nil)
        let synth = sampler.instrument.synth
        let other = try #require(sampler.extraSoundFonts.first), home = try #require(sampler.soundFont)
        // FluidR3's melodic presets TimGM6mb lacks (its bank 8 variations): at offset 0 they would answer.
        let onlyThere = other.presets.filter { p in p.bank < 128 && !home.presets.contains { $0.bank == p.bank && $0.program == p.program } }
        try #require(onlyThere.count > 5)
        for p in onlyThere.prefix(20) {
            _ = synth.select(channel: 0, bank: p.bank, program: p.program)
            #expect(synth.preset(onChannel: 0)?.soundFontID != other.id, "\(p.bank):\(p.program)")
        }
    }
}
