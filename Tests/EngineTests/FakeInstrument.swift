import Engine

/// An instrument whose sound is easy to predict: while a note sounds on MIDI
/// channel c, strip c carries a constant level of velocity/127 on both sides;
/// the reverb return carries `reverbLevel` while any note sounds.
final class FakeInstrument: Instrument {
    let stripCount: Int
    var reverbLevel: Float = 0
    private(set) var received: [ChannelMessage] = []
    /// SysEx payloads in the order they arrived.
    private(set) var receivedSysEx: [[UInt8]] = []
    private var levels: [Float]
    private(set) var preparedRate: Double = 0
    var recordsMessages = true

    init(stripCount: Int = 16) {
        self.stripCount = stripCount
        levels = Array(repeating: 0, count: 16)
        received.reserveCapacity(1 << 16)
    }

    func prepare(sampleRate: Double, maxFrames: Int) { preparedRate = sampleRate }

    func receive(_ message: ChannelMessage) {
        if recordsMessages && received.count < received.capacity { received.append(message) }
        switch message.kind {
        case 0x90 where message.data2 > 0: levels[message.channel] = Float(message.data2) / 127
        case 0x80, 0x90: levels[message.channel] = 0
        default: break
        }
    }

    func receiveSysEx(_ data: UnsafeBufferPointer<UInt8>) {
        if recordsMessages { receivedSysEx.append(Array(data)) }
    }

    func render(frames: Int, dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {
        var anyOn = false
        for channel in 0..<16 where levels[channel] != 0 {
            anyOn = true
            let strip = channel % stripCount
            for side in 0..<2 {
                guard let buffer = dry[2 * strip + side] else { continue }
                for i in 0..<frames { buffer[i] += levels[channel] }
            }
        }
        if anyOn && reverbLevel != 0 {
            for side in 0..<2 { if let b = effects[side] { for i in 0..<frames { b[i] += reverbLevel } } }
        }
    }

    func silence() { for i in levels.indices { levels[i] = 0 } }
}

/// Renders `frames` frames in blocks of `block` and returns the interleaved output.
func renderAll(_ renderer: Renderer, frames: Int, block: Int) -> [Float] {
    var out = [Float](repeating: 0, count: 2 * frames)
    var scratch = [Float](repeating: 0, count: 2 * block)
    var done = 0
    while done < frames {
        let n = min(block, frames - done)
        scratch.withUnsafeMutableBufferPointer { renderer.render(frames: n, into: $0) }
        for i in 0..<(2 * n) { out[2 * done + i] = scratch[i] }
        done += n
    }
    return out
}

/// The first frame whose left sample is above `threshold`.
func onset(_ interleaved: [Float], after start: Int = 0, threshold: Float = 0.001) -> Int? {
    var i = start
    while 2 * i < interleaved.count {
        if abs(interleaved[2 * i]) > threshold { return i }
        i += 1
    }
    return nil
}
