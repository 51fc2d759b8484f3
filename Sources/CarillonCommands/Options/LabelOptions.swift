import ArgumentParser
import OfflineRender

/// `--labels` and `--labels-format`, declared once: `render` labels its
/// outputs, `play` its `--record`ing.
struct LabelOptions: ParsableArguments {
    @Flag(help: "Also write beside the audio file (render's output, play's --record) its notes as rendered (NAME.notes.csv: onset and offset where the synth applied them, pitch, velocity, channel, program, bank, preset, track, drum, stem, soundfont), its beats (NAME.beats.csv) and its tempo map (NAME.tempo.csv).")
    var labels = false

    @Option(name: .customLong("labels-format"), help: ArgumentHelp("The labels as csv, or jsonl for JSON Lines; implies --labels.", valueName: "format"))
    var labelsFormat: RenderLabels.Format?

    /// The labels' format, nil for none.
    var format: RenderLabels.Format? { labels || labelsFormat != nil ? labelsFormat ?? .csv : nil }
}

extension RenderLabels.Format: ExpressibleByArgument {}
