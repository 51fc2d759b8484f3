import Engine
import FluidSynth
import Threads

/// Which samples a render keeps in memory for each piece (with FluidSynth's
/// on-demand sample loading).
///
/// By note, when Carillon can read the font (`SoundFontFile`): before a
/// piece, a scout synth replays its selections (`pinPresets`), noting what
/// each note-on will play; then the piece's synths, new for it, load a view
/// keeping only the zones that sound those notes
/// (`SoundFontHydra.zones(playing:)`) and pin the piece's presets.
/// FluidSynth loads only the samples those zones name, once for all the
/// synths (they share one view, so its sample cache shares the samples).
/// The scout has a view keeping no zone (every preset there, none with
/// samples), so the replay's program changes load nothing; a view keeps
/// every preset, so FluidSynth's preset choices and fallbacks are the same
/// as with the file.
///
/// By preset (the fallback, and with `byNotes` off): the scout and every
/// synth load the file and pin the presets the piece selects, each with all
/// its samples (read once: the scout holds them in FluidSynth's cache).
package final class SampleSelection {
    /// The font, read, while selecting by note.
    private var file: SoundFontFile?
    /// By note: the view keeping no zone, which the scout loads (every preset, no samples).
    package private(set) var scoutView: VirtualSoundFont?
    private let log: HostLog
    /// The font's presets whose voices may have an exclusive class (nil: the
    /// font could not be read; see `wholeChannels`).
    private let exclusivePresets: Set<SoundFontHydra.PresetNumber>?

    /// Selects from `font` by note when `byNotes` and Carillon could read it;
    /// if it could not, by preset, saying why in `log`. Takes its presets'
    /// exclusive classes in any case.
    package init(soundFont font: SharedSoundFont, byNotes: Bool, log: HostLog) {
        self.log = log
        var file: SoundFontFile?
        switch font.file {
        case .success(let read): file = read
        case .failure(let error): if byNotes { log.append("\(font.path): samples loaded by preset, not by note (\(error))") }
        }
        exclusivePresets = font.exclusivePresets
        guard byNotes, let file else { return }
        self.file = file
        scoutView = file.view(keeping: file.hydra.zones(playing: PlayedNotes()))
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
    /// A preset of another font (`extraFonts`: the scout's IDs of a set's
    /// other fonts) counts as one that may have an exclusive class.
    package func wholeChannels(_ selection: FluidSynthInstrument.Selection, extraFonts: [Int32] = []) -> UInt16 {
        var whole = selection.percussionChannels | selection.interactingChannels
        for (preset, channels) in selection.channelsPlaying {
            let number = SoundFontHydra.PresetNumber(bank: Int(preset.bank), program: Int(preset.program))
            if extraFonts.contains(preset.soundFontID) || exclusivePresets?.contains(number) ?? true { whole |= channels }
        }
        return whole
    }

    package var byNotes: Bool { file != nil }

    /// Selects by preset from now on, `reason` in the log; the synths load the file.
    package func fallBack(_ reason: String) {
        if let file { log.append("\(file.path): samples loaded by preset, not by note (\(reason))") }
        file = nil
        scoutView = nil
    }

    /// What a piece needs of the font: the view its synths load (nil: the
    /// file itself, by preset) and what its score selects.
    package struct Plan {
        package var view: VirtualSoundFont?
        package var selection: FluidSynthInstrument.Selection
        /// The fonts the synths load beside this one (`--timbres` across a
        /// SoundFont set; none otherwise), each with its view and bank offset.
        package var extras: [Extra] = []
    }

    /// A font a piece's synths load beside the main one, at its bank offset
    /// (`FontBankLayout`), and the ID the scout has it under (what the
    /// selection's presets name it by).
    package struct Extra {
        package var font: Sampler.ExtraFont
        package var scoutID: Int32
        package init(font: Sampler.ExtraFont, scoutID: Int32) { self.font = font; self.scoutID = scoutID }
    }

    /// The view of this font keeping the zones that sound `notes` (nil: by preset, the file).
    package func view(playing notes: PlayedNotes) -> VirtualSoundFont? {
        file.map { $0.view(keeping: $0.hydra.zones(playing: notes)) }
    }

    /// Finds what `score` selects by replaying its selections on `scout`, a
    /// synth that renders nothing. The scout keeps the piece's presets pinned
    /// (`pinned`: from the last piece, and for the next) until the next piece:
    /// by preset, that holds their samples in FluidSynth's sample cache, which
    /// the render's synths then share; by note, the scout has the view with no
    /// zone, and nothing is loaded. `skipping` names the channels that never
    /// reach the synths. Not on the render thread.
    package func plan(_ score: Score, scout: Sampler, pinned: inout Set<Synth.PresetAddress>,
              skipping: UInt16) throws(Sampler.Failure) -> Plan {
        let selection: FluidSynthInstrument.Selection
        do throws(FluidSynthError) {
            selection = try scout.instrument.pinPresets(selectedBy: score, unpinning: pinned, skipping: skipping)
        } catch { throw .soundFont(error) }
        pinned = selection.presets
        guard let file else { return Plan(view: nil, selection: selection) }
        // With other fonts beside it (a set's draw), this font's view keeps only its own notes' zones.
        let notes = scout.extraSoundFonts.isEmpty ? selection.notes
            : scout.soundFont.flatMap { selection.notesByFont[$0.id] } ?? PlayedNotes()
        return Plan(view: file.view(keeping: file.hydra.zones(playing: notes)), selection: selection)
    }

    /// Selects by preset from now on (`reason` in the log): the scout loads the file.
    package func fallBack(_ reason: String, scout: Sampler, pinned: inout Set<Synth.PresetAddress>) throws(Sampler.Failure) {
        fallBack(reason)
        scout.instrument.resetAndFinishVoices()
        try scout.loadSoundFont(nil)
        pinned = []
    }

    /// A new synth for a piece: nothing of an earlier piece in it (voices,
    /// effects, channels, tunings), the plan's view (or the file) loaded and
    /// the piece's presets pinned, as FluidSynth starts. Not on the render thread.
    /// With `plan.extras`, the synth loads those fonts too, each at its bank offset.
    package func makeSampler(for plan: Plan, path: String, sampleRate: Double,
                     options: SamplerOptions) throws(Sampler.Failure) -> Sampler {
        let sampler = try Sampler(soundFont: path, sampleRate: sampleRate, options: options, view: plan.view,
                                  extraFonts: plan.extras.map(\.font))
        guard let font = sampler.soundFont?.id else { preconditionFailure("a sampler has its font") }
        do throws(FluidSynthError) {
            for preset in plan.selection.presets {
                // The scout's font ID, as the selection names it, to this synth's.
                let id = plan.extras.firstIndex { $0.scoutID == preset.soundFontID }.map { sampler.extraSoundFonts[$0].id } ?? font
                try sampler.instrument.synth.pin(Synth.PresetAddress(soundFontID: id, bank: preset.bank, program: preset.program))
            }
        } catch { throw .soundFont(error) }
        return sampler
    }
}

/// A SoundFont as Carillon's SF2 reader reads it, once for every `RenderJob`
/// of a process that plays it (a batch's workers share one per font): its
/// layout and preset data (`SoundFontFile`, which its views read their
/// samples through) and its presets' exclusive classes, or why it could not be
/// read. It holds no sample data: each piece's synths load the samples its
/// notes sound (`SampleSelection`). Any thread.
public final class SharedSoundFont: Sendable {
    public let path: String
    let file: Result<SoundFontFile, SoundFontFileError>
    /// The presets whose voices may have an exclusive class (nil: not read).
    let exclusivePresets: Set<SoundFontHydra.PresetNumber>?

    /// Reads the font at `path`; a font Carillon cannot read is no error
    /// here (FluidSynth may still load it: its samples then load by preset).
    public init(path: String) {
        self.path = path
        do throws(SoundFontFileError) {
            let read = try SoundFontFile(path: path)
            file = .success(read)
            exclusivePresets = read.hydra.presetsWithExclusiveClass()
        } catch {
            file = .failure(error)
            exclusivePresets = nil
        }
    }
}
