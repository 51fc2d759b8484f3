import Engine
import FluidSynth

/// Which samples a render keeps in memory for each piece (with FluidSynth's
/// on-demand sample loading).
///
/// By note, when Carillon can read the font (`SoundFontFile`): before a
/// piece, synth 0 replays its selections (`pinPresets`), noting what each
/// note-on will play; then every synth of the render drops the last piece's
/// view of the font, loads a view keeping only the zones that sound those
/// notes (`SoundFontHydra.zones(playing:)`) and pins the piece's presets.
/// FluidSynth loads only the samples those zones name, once for all the
/// synths (they share one view, so its sample cache shares the samples).
/// The synths start with a view keeping no zone (every preset there, none
/// with samples), so the replay's program changes load nothing; a view
/// keeps every preset, so FluidSynth's preset choices and fallbacks are the
/// same as with the file.
///
/// By preset (the fallback, and with `byNotes` off): every synth loads the
/// file and pins the presets the piece selects, each with all its samples.
final class SampleSelection {
    /// The font, read, while selecting by note.
    private var file: SoundFontFile?
    /// The view the synths have loaded now (by note).
    private(set) var view: VirtualSoundFont?
    private let log: HostLog
    /// The font's presets whose voices may have an exclusive class (nil: the
    /// font could not be read; see `wholeChannels`).
    private let exclusivePresets: Set<SoundFontHydra.PresetNumber>?

    /// Reads the font at `path` when `byNotes`; if that fails, selects by preset and says why in `log`.
    /// Reads its presets' exclusive classes in any case.
    init(soundFont path: String, byNotes: Bool, log: HostLog) {
        self.log = log
        var file: SoundFontFile?
        do throws(SoundFontFileError) {
            file = try SoundFontFile(path: path)
        } catch {
            if byNotes { log.append("\(path): samples loaded by preset, not by note (\(error))") }
        }
        exclusivePresets = file?.hydra.presetsWithExclusiveClass()
        guard byNotes, let file else { return }
        self.file = file
        view = file.view(keeping: file.hydra.zones(playing: PlayedNotes()))
    }

    /// The channels a pool plays whole for a piece (bit c: channel c): those
    /// whose notes interact within the channel in FluidSynth, so splitting
    /// them over synths would change the sound — percussion (bank 128),
    /// mono, legato and portamento (`Selection.interactingChannels`), and
    /// every channel that plays a note on a preset whose voices may have an
    /// exclusive class (a class kills voices of the same class on the same
    /// channel, any preset: see `SoundFontHydra.presetsWithExclusiveClass`).
    /// When the font could not be read, every channel that plays a note plays
    /// whole: each stays on one synth, the channels still spread over the
    /// synths. A render's presets all come from this font (`RenderJob`
    /// builds its samplers with no per-channel fonts), so bank and program name them.
    func wholeChannels(_ selection: FluidSynthInstrument.Selection) -> UInt16 {
        var whole = selection.percussionChannels | selection.interactingChannels
        for (preset, channels) in selection.channelsPlaying {
            let number = SoundFontHydra.PresetNumber(bank: Int(preset.bank), program: Int(preset.program))
            if exclusivePresets?.contains(number) ?? true { whole |= channels }
        }
        return whole
    }

    var byNotes: Bool { file != nil }

    /// Selects by preset from now on, `reason` in the log; the synths load the file.
    func fallBack(_ reason: String) {
        if let file { log.append("\(file.path): samples loaded by preset, not by note (\(reason))") }
        file = nil
        view = nil
    }

    /// Gets every synth of a render ready for `score` (reset, its samples
    /// pinned, no voice sounding) and returns the channels a pool plays whole
    /// (`wholeChannels`: percussion, mono, legato, portamento, exclusive classes). `pinned` holds each synth's pinned presets, from the last
    /// piece and for the next; `skipping` the channels that never reach the
    /// synths. Not on the render thread.
    func prepare(_ score: Score, samplers: [Sampler], pinned: inout [Set<Synth.PresetAddress>],
                 skipping: UInt16) throws(Sampler.Failure) -> UInt16 {
        if let file {
            do throws(Sampler.Failure) {
                return try prepareByNotes(score, file: file, samplers: samplers, pinned: &pinned, skipping: skipping)
            } catch {
                fallBack("\(error)")
                for sampler in samplers {
                    sampler.instrument.resetAndFinishVoices()
                    try sampler.loadSoundFont(nil)
                }
                pinned = pinned.map { _ in [] }
            }
        }
        var whole: UInt16 = 0
        do throws(FluidSynthError) {
            for (i, sampler) in samplers.enumerated() {
                let selection = try sampler.instrument.pinPresets(selectedBy: score, unpinning: pinned[i], skipping: skipping)
                pinned[i] = selection.presets
                whole |= wholeChannels(selection)
            }
        } catch { throw .soundFont(error) }
        return whole
    }

    private func prepareByNotes(_ score: Score, file: SoundFontFile, samplers: [Sampler],
                                pinned: inout [Set<Synth.PresetAddress>], skipping: UInt16) throws(Sampler.Failure) -> UInt16 {
        let selection: FluidSynthInstrument.Selection
        do throws(FluidSynthError) {
            selection = try samplers[0].instrument.pinPresets(selectedBy: score, unpinning: pinned[0], skipping: skipping)
        } catch { throw .soundFont(error) }
        // The last view out of every synth first, so its samples and the new view's are never in memory together.
        for sampler in samplers.dropFirst() { sampler.instrument.resetAndFinishVoices() }
        for sampler in samplers { sampler.unloadSoundFont() }
        let next = file.view(keeping: file.hydra.zones(playing: selection.notes))
        view = next
        for (i, sampler) in samplers.enumerated() {
            try sampler.loadSoundFont(next)
            let font = sampler.soundFont!.id
            pinned[i] = Set(selection.presets.map { Synth.PresetAddress(soundFontID: font, bank: $0.bank, program: $0.program) })
            do throws(FluidSynthError) {
                for preset in pinned[i] { try sampler.instrument.synth.pin(preset) }
            } catch { throw .soundFont(error) }
            sampler.instrument.resetToGS()
        }
        return wholeChannels(selection)
    }
}
