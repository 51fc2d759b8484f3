// Benchmark driver; see Benchmarks/README.md. Not a test: run by Benchmarks/*.sh.
//   CarillonBench generate-smf OUT.mid [NOTES]    deterministic large SMF
//   CarillonBench parse FILE.mid [RUNS]            SMF parse throughput
//   CarillonBench blocks FILE.mid SF2 [SCALE] [BLOCK...]   time per render block vs its budget
//   CarillonBench voice-budget SF2 FILE.mid...      a two-synth split render's voice budget flag
//   CarillonBench insert-cost URI [BLOCK] [FRAMES]  an LV2 effect's cost as a master insert
//   CarillonBench instrument-cost URI [BLOCK] [FRAMES]  an LV2 instrument's cost on a channel
//   CarillonBench by-note-equality SOUNDFONT FILE.mid...  renders by note byte for byte the font loaded whole
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "generate-smf":
    try ParseBenchmark.generate(arguments: Array(arguments.dropFirst()))
case "parse":
    try ParseBenchmark.parse(arguments: Array(arguments.dropFirst()))
case "blocks":
    try BlockTimingBenchmark.run(arguments: Array(arguments.dropFirst()))
case "voice-budget":
    try VoiceBudgetBenchmark.run(arguments: Array(arguments.dropFirst()))
case "insert-cost":
    try PluginCostBenchmark.run(.insert, arguments: Array(arguments.dropFirst()))
case "instrument-cost":
    try PluginCostBenchmark.run(.instrument, arguments: Array(arguments.dropFirst()))
case "by-note-equality":
    try ByNoteEqualityBenchmark.run(arguments: Array(arguments.dropFirst()))
default:
    FileHandle.standardError.write(Data("usage: CarillonBench generate-smf OUT.mid [NOTES] | parse FILE.mid [RUNS] | blocks FILE.mid SF2 [SCALE] [BLOCK...] | voice-budget SF2 FILE.mid... | insert-cost URI [BLOCK] [FRAMES] | instrument-cost URI [BLOCK] [FRAMES] | by-note-equality SOUNDFONT FILE.mid...\n".utf8))
    exit(2)
}
