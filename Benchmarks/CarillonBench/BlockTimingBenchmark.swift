import Sampling
import Engine
import FluidSynth
import Foundation

/// Time per render block against the block's real-time budget: the live
/// output thread's work (sequencer + FluidSynth + mixer), measured on this
/// machine without a sound card. A dense piece is made denser with the
/// transport's tempo scale.
///
///   CarillonBench blocks FILE.mid SOUNDFONT [TEMPO-SCALE] [BLOCK...]
enum BlockTimingBenchmark {
    static let sampleRate = 48_000.0

    static func run(arguments: [String]) throws {
        guard arguments.count >= 2 else {
            throw BenchError("usage: CarillonBench blocks FILE.mid SOUNDFONT [TEMPO-SCALE] [BLOCK...]")
        }
        let (file, font) = (arguments[0], arguments[1])
        let scale = arguments.count > 2 ? Double(arguments[2]) ?? 1 : 1
        let blocks = arguments.count > 3 ? arguments.dropFirst(3).compactMap { Int($0) } : [64, 256]
        let score = try Score(contentsOf: file)
        print("file: \(file)  font: \(font)  tempo ×\(scale)  \(Int(sampleRate)) Hz, reverb and chorus on")
        print("block  budget_ms  mean_ms  p50_ms  p99_ms  max_ms  mean/budget  over_budget  peak_dBFS")
        for block in blocks {
            let settings = try Settings.forRendering(sampleRate: sampleRate, gain: 0.2)
            let synth = try Synth(settings: settings)
            let soundFont = try synth.loadSoundFont(at: font)  // unloaded when released
            let renderer = Renderer(instrument: FluidSynthInstrument(synth: synth), eventCapacity: 4096)
            renderer.prepare(sampleRate: sampleRate, maxFrames: block)
            renderer.schedule(score)
            renderer.transport.setTempoScale(scale)
            let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * block)
            defer { output.deallocate(); withExtendedLifetime(soundFont) {} }
            let total = Int((score.duration / scale + 2) * sampleRate) / block
            var nanos = [UInt64](repeating: 0, count: total)
            for i in 0..<total {
                let start = DispatchTime.now().uptimeNanoseconds
                renderer.render(frames: block, into: output)
                nanos[i] = DispatchTime.now().uptimeNanoseconds - start
            }
            nanos.sort()
            let budget = Double(block) / sampleRate * 1e3
            let ms = { (n: UInt64) in Double(n) / 1e6 }
            let mean = ms(nanos.reduce(0, +)) / Double(total)
            let over = nanos.filter { ms($0) > budget }.count
            // The peak shows the piece really sounded.
            print(String(format: "%5d  %9.3f  %7.4f  %6.4f  %6.4f  %6.3f  %11.3f  %d of %d  %.1f",
                         block, budget, mean, ms(nanos[total / 2]), ms(nanos[total * 99 / 100]),
                         ms(nanos[total - 1]), mean / budget, over, total, 20 * log10(Double(renderer.peak))))
        }
    }
}
