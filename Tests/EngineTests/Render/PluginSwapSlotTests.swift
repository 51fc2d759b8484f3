import Engine
import Testing

/// `SwappableChannelPlugin`: a channel's instrument replaced while it plays.
@Suite struct PluginSwapSlotTests {
    /// Writes a constant and counts the messages it hears.
    final class Constant: ChannelPlugin {
        let level: Float
        var heard = 0
        init(_ level: Float) { self.level = level }
        func receive(_ message: ChannelMessage, at offset: Int) { heard += 1 }
        func render(frames: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
            left.update(repeating: level, count: frames); right.update(repeating: -level, count: frames)
        }
        func silence() {}
    }

    /// The old plugin's output ramps into the new one's over the fade, with no
    /// step larger than one fade step; the new one hears every message from
    /// the block it was taken in; the old one is freed only by `collectRetired`.
    @Test func channelSlot_rampsFromTheOldPluginToTheNew() {
        var old: Constant? = Constant(1)
        weak let oldObject = old
        let slot = SwappableChannelPlugin(old!, maxFrames: 64, fadeFrames: 100)
        old = nil
        let next = Constant(0.5)
        var left = [Float](repeating: 0, count: 64), right = left
        var samples: [Float] = []
        for block in 0..<6 {
            if block == 2 { slot.replace(with: next) }
            slot.receive(.noteOn(60, velocity: 100, channel: 0), at: 0)
            left.withUnsafeMutableBufferPointer { l in
                right.withUnsafeMutableBufferPointer { r in slot.render(frames: 64, left: l.baseAddress!, right: r.baseAddress!) }
            }
            samples += left
            #expect(right.indices.allSatisfy { right[$0] == -left[$0] })
        }
        #expect(samples[0..<128].allSatisfy { $0 == 1 } && samples[228...].allSatisfy { $0 == 0.5 })
        let steps = zip(samples, samples.dropFirst()).map { abs($1 - $0) }
        #expect(steps.max()! <= 0.5 / 100 + 1e-6, "a step of \(steps.max()!): a click")
        #expect(next.heard == 4, "the new plugin hears the messages from the block it was taken in")
        #expect(slot.isSwapping && oldObject != nil)
        slot.collectRetired()
        #expect(!slot.isSwapping && oldObject == nil)
    }
}
