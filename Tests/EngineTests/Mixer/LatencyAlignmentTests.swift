import Engine
import Parameters
import Testing

/// Latency compensation in the mixer: every strip is delayed to the one whose
/// plugins lag most, so all sound in time, and the renderer reports how late
/// the mix is (a render drops that from its start).
@Suite struct LatencyAlignmentTests {
    /// A channel's instrument that sounds `lag` frames after each note-on, and says so.
    final class LaggingPlugin: ChannelPlugin {
        let lag: Int
        private var startsIn: Int?
        init(lag: Int) { self.lag = lag }
        var latency: Int { lag }
        func receive(_ message: ChannelMessage, at offset: Int) {
            if message.kind == 0x90 && message.data2 > 0 { startsIn = offset + lag }
        }
        func render(frames: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
            for i in 0..<frames {
                let on = startsIn.map { i >= $0 } ?? false
                left[i] = on ? 0.25 : 0; right[i] = left[i]
            }
            if let s = startsIn { startsIn = max(0, s - frames) }
        }
        func silence() { startsIn = nil }
    }

    @Test func strips_areDelayedToTheMostLaggingPlugin() {
        let renderer = Renderer(instrument: FakeInstrument())
        renderer.attach(LaggingPlugin(lag: 100), toChannel: 2)
        renderer.prepare(sampleRate: 48_000, maxFrames: 64)
        #expect(renderer.latency == 100)
        renderer.events.push(.now(.noteOn(60, velocity: 127, channel: 0)))   // the fake: strip 1 at 1.0 from now
        renderer.events.push(.now(.noteOn(60, velocity: 127, channel: 2)))   // the plugin: 0.25, 100 frames on
        var mix: [Float] = []
        let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: 128)
        defer { block.deallocate() }
        for _ in 0..<4 {
            renderer.render(frames: 64, into: block)
            mix += stride(from: 0, to: 128, by: 2).map { block[$0] }
        }
        // Both start at frame 100: the fake's strip was delayed by the plugin's lag.
        #expect(mix[..<100].allSatisfy { $0 == 0 }, "\(mix[..<100].filter { $0 != 0 }.count) frames sound early")
        #expect(mix[100...].allSatisfy { $0 > 1.1 }, "both strips sound from frame 100")
    }

    @Test func noLatency_noDelay() {
        let renderer = Renderer(instrument: FakeInstrument())
        renderer.attach(LaggingPlugin(lag: 0), toChannel: 2)
        renderer.prepare(sampleRate: 48_000, maxFrames: 64)
        #expect(renderer.latency == 0)
    }
}
