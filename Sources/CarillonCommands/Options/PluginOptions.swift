import ArgumentParser
import Hosting

/// `--instrument` and `--insert`, declared once: `live`, `play` and `render`
/// (through `SynthOptions`) and `carillon parameters` take them.
struct PluginOptions: ParsableArguments {
    @Option(name: .customLong("insert"), help: ArgumentHelp(
        "An LV2 effect on a strip before its gain, pan and meters, as STRIP=URI ('carillon plugins' lists them); repeatable, in order.",
        discussion: "STRIP is master, a MIDI channel 1...16, osc, tone or track1...track8. Its controls are parameters insert.STRIP.K.SYMBOL (K: its place on the strip, from 1).",
        valueName: "strip=uri"))
    var insert: [String] = []

    @Option(name: .customLong("instrument"), help: ArgumentHelp(
        "An LV2 instrument playing a MIDI channel instead of the SoundFont, as N=URI (N 1...16; 'carillon plugins' lists them); repeatable.",
        discussion: "Its controls are parameters plugin.N.SYMBOL ('carillon parameters --instrument N=URI' lists them).",
        valueName: "channel=uri"))
    var instrument: [String] = []

    func validate() throws {
        var channels = Set<Int>()
        for text in instrument {
            guard let spec = InstrumentSpec(text) else {
                throw ValidationError("--instrument takes N=URI with N a MIDI channel 1...16, found '\(text)'")
            }
            guard channels.insert(spec.channel).inserted else {
                throw ValidationError("--instrument gives MIDI channel \(spec.channel + 1) twice; one instrument plays a channel")
            }
        }
        for text in insert where InsertSpec(text) == nil {
            throw ValidationError("--insert takes STRIP=URI with STRIP master, 1...16, osc, tone or track1...track8, found '\(text)'")
        }
    }

    var instruments: [InstrumentSpec] { instrument.compactMap(InstrumentSpec.init) }
    var inserts: [InsertSpec] { insert.compactMap(InsertSpec.init) }

    /// Reads the plugins asked for (and a mapping's own: its instruments, and
    /// its inserts, which come before `--insert`'s on each strip) and registers
    /// their controls as parameters (`plugin.N.SYMBOL`, `insert.STRIP.K.SYMBOL`),
    /// so a mapping or `--set` can name them; a plugin that is missing or
    /// unusable ends the command here, with one line.
    func registerParameters(adding mapping: (instruments: [InstrumentSpec], inserts: [InsertSpec]) = ([], []),
                            midiEffects: [MIDIEffectSpec] = []) {
        let instruments = instruments + mapping.instruments, inserts = mapping.inserts + inserts
        guard !instruments.isEmpty || !inserts.isEmpty || !midiEffects.isEmpty else { return }
        do { _ = try PluginHost(instruments: instruments, inserts: inserts, midiEffects: midiEffects) } catch { Diagnostics.fail("\(error)") }
    }
}
