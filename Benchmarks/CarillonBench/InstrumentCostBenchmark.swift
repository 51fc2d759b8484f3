import Carillon
import Engine
import Foundation

/// What an LV2 instrument costs on a channel, the way the renderer calls it
/// (its controls read, one run into the strip's buffers; no notes, as
/// `lv2bench` runs it): seconds for FRAMES frames in blocks of BLOCK at
/// 48 kHz. Benchmarks/lv2.sh sets it beside `lv2bench`'s time for the
/// plugin's run() alone.
///
///   CarillonBench instrument-cost URI [BLOCK] [FRAMES]
enum InstrumentCostBenchmark {
    static func run(arguments: [String]) throws {
        guard let uri = arguments.first else { throw BenchError("usage: CarillonBench instrument-cost URI [BLOCK] [FRAMES]") }
        let block = arguments.count > 1 ? Int(arguments[1]) ?? 512 : 512
        let frames = arguments.count > 2 ? Int(arguments[2]) ?? 4_800_000 : 4_800_000
        let spec = InstrumentSpec(channel: 0, uri: uri)
        let host = try PluginHost(instruments: [spec], inserts: [])
        let instrument = try host.makeInstrument(spec, sampleRate: 48_000, maxFrames: block, offline: true, parameters: ParameterStore())
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block), right = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer { left.deallocate(); right.deallocate() }
        left.initialize(repeating: 0, count: block); right.initialize(repeating: 0, count: block)
        let clock = ContinuousClock()
        let start = clock.now
        var done = 0
        while done < frames {
            let n = min(block, frames - done)
            instrument.render(frames: n, left: left, right: right)
            done += n
        }
        let (s, atto) = (clock.now - start).components
        print(String(format: "%.6f", Double(s) + Double(atto) * 1e-18), uri)
    }
}
