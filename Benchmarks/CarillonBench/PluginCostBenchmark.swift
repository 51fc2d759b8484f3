import Hosting
import Engine
import Foundation

/// What an LV2 plugin costs the way Carillon runs it, on silence and without
/// notes as `lv2bench` feeds it: seconds for FRAMES frames in blocks of BLOCK
/// at 48 kHz. Benchmarks/lv2.sh sets it beside `lv2bench`'s own time for the
/// plugin's run() alone.
///
///   CarillonBench insert-cost URI [BLOCK] [FRAMES]      an effect as the mixer runs an insert
///   CarillonBench instrument-cost URI [BLOCK] [FRAMES]  an instrument as the renderer runs a channel's
enum PluginCostBenchmark {
    enum Kind: String { case insert = "insert-cost", instrument = "instrument-cost" }

    static func run(_ kind: Kind, arguments: [String]) throws {
        guard let uri = arguments.first else { throw BenchError("usage: CarillonBench \(kind.rawValue) URI [BLOCK] [FRAMES]") }
        let block = arguments.count > 1 ? Int(arguments[1]) ?? 512 : 512
        let frames = arguments.count > 2 ? Int(arguments[2]) ?? 4_800_000 : 4_800_000
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block), right = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer { left.deallocate(); right.deallocate() }
        // Silence in, as lv2bench feeds it; these effects give silence back, so it stays in.
        left.initialize(repeating: 0, count: block); right.initialize(repeating: 0, count: block)
        let runBlock: (Int) -> Void
        switch kind {
        case .insert:
            let host = try PluginHost(instruments: [], inserts: [InsertSpec(strip: .master, uri: uri)])
            let insert = try host.makeInsert(0, sampleRate: 48_000, maxFrames: block, offline: true, parameters: ParameterStore())
            runBlock = { insert.process(left: left, right: right, frames: $0) }
        case .instrument:
            let spec = InstrumentSpec(channel: 0, uri: uri)
            let host = try PluginHost(instruments: [spec], inserts: [])
            let instrument = try host.makeInstrument(spec, sampleRate: 48_000, maxFrames: block, offline: true,
                                                     parameters: ParameterStore())
            runBlock = { instrument.render(frames: $0, left: left, right: right) }
        }
        let clock = ContinuousClock()
        let start = clock.now
        var done = 0
        while done < frames {
            let n = min(block, frames - done)
            runBlock(n)
            done += n
        }
        let (s, atto) = (clock.now - start).components
        print(String(format: "%.6f", Double(s) + Double(atto) * 1e-18), uri)
    }
}
