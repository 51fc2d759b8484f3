import CAllocationCounter
import Engine
import Foundation
import Testing

/// Master inserts: run in order on the mixed block, before the master gain
/// and meters; nothing on the heap.
@Suite struct MasterInsertTests {
    final class Scale: AudioInsert {
        let left: Float, right: Float
        var calls = 0
        init(_ left: Float, _ right: Float) { self.left = left; self.right = right }
        func process(left l: UnsafeMutablePointer<Float>, right r: UnsafeMutablePointer<Float>, frames: Int) {
            calls += 1
            for i in 0..<frames { l[i] *= left; r[i] *= right }
        }
    }

    /// Adds 0.25 to the left side: with `Scale`, tells the order apart.
    final class Offset: AudioInsert {
        func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int) {
            for i in 0..<frames { left[i] += 0.25 }
        }
    }

    @Test func inserts_runInOrder_beforeTheMasterGainAndMeters_withNoHeapCall() {
        let scale = Scale(0.5, 0.25)
        let renderer = Renderer(instrument: FakeInstrument(), masterInserts: [scale, Offset()])
        renderer.prepare(sampleRate: 48_000, maxFrames: 64)
        renderer.schedule(Score(events: [], duration: 10))
        renderer.events.push(.now(.noteOn(60, velocity: 127, channel: 0)))
        renderer.parameters.set(.masterGain, 20 * log10(0.5))
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 128)
        defer { output.deallocate() }
        renderer.render(frames: 64, into: output)   // the master gain ramps in this block
        carillon_allocations_arm()
        for _ in 0..<500 { renderer.render(frames: 64, into: output) }
        let calls = carillon_allocations_disarm()
        #expect(calls == 0, "heap calls in 500 blocks: \(calls)")
        // The fake's note is 1 on both sides: (1 × 0.5 + 0.25) × 0.5 left, 1 × 0.25 × 0.5 right.
        #expect(abs(output[0] - 0.375) < 1e-6 && abs(output[1] - 0.125) < 1e-6)
        #expect(abs(renderer.meters.peak - 0.375) < 1e-6)
        #expect(scale.calls == 501)
    }
}
