import Carillon
import Foundation

/// `carillon render` of one file into a float WAV, as `RenderJob` renders it,
/// with silent gaps rendered rather than skipped: with the gaps skipped, the
/// frames skipped depend on the block size (one synth: 512, a pool: 2048),
/// and FluidSynth's reverb and chorus modulators advance only with rendered
/// frames, so a split render and a one-synth render part after a gap.
///
///   CarillonBench render-no-skip SOUNDFONT FILE.mid OUT.wav THREADS
enum RenderNoSkipBenchmark {
    static func run(arguments: [String]) throws {
        guard arguments.count == 4, let threads = Int(arguments[3]) else {
            throw BenchError("usage: CarillonBench render-no-skip SOUNDFONT FILE.mid OUT.wav THREADS")
        }
        var options = RenderJob.Options()
        options.threads = threads
        options.skipsSilence = false
        let job = try RenderJob(soundFont: arguments[0], options: options)
        _ = try job.render(input: arguments[1], output: arguments[2], format: .wav, encoding: .float32)
    }
}
