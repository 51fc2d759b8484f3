import Engine

/// An instrument whose sound is easy to predict: while a note sounds on MIDI
/// channel c, strip c carries a constant level of velocity/127 on both sides;
/// the reverb return carries `reverbLevel` while any note sounds (with one
/// effects group per strip: channel c's group, while a note sounds on c).
final class FakeInstrument: Instrument {
    let stripCount: Int
    let effectsGroupCount: Int
    var reverbLevel: Float = 0
    private(set) var received: [ChannelMessage] = []
    /// SysEx payloads in the order they arrived.
    private(set) var receivedSysEx: [[UInt8]] = []
    private var levels: [Float]
    private(set) var preparedRate: Double = 0
    var recordsMessages = true

    init(stripCount: Int = 16, effectsGroups: Int = 1) {
        self.stripCount = stripCount
        effectsGroupCount = effectsGroups
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
        if effectsGroupCount > 1 {
            for channel in 0..<16 where levels[channel] != 0 && reverbLevel != 0 {
                let group = channel % effectsGroupCount
                for side in 0..<2 { if let b = effects[4 * group + side] { for i in 0..<frames { b[i] += reverbLevel } } }
            }
        } else if anyOn && reverbLevel != 0 {
            for side in 0..<2 { if let b = effects[side] { for i in 0..<frames { b[i] += reverbLevel } } }
        }
    }

    func silence() { for i in levels.indices { levels[i] = 0 } }
}

/// A track whose sound is easy to predict: `left` and `right` on every frame
/// while the piece plays, silence otherwise; it keeps the last position it was told.
final class ConstantTrack: TrackSource, @unchecked Sendable {
    let name: String
    let left: Float, right: Float
    private(set) var lastPosition: Double = -1
    private(set) var lastPlaying = false

    init(name: String, left: Float, right: Float) {
        self.name = name; self.left = left; self.right = right
    }

    func render(frames: Int, position: Double, playing: Bool,
                left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) {
        lastPosition = position; lastPlaying = playing
        left.update(repeating: playing ? self.left : 0, count: frames)
        right.update(repeating: playing ? self.right : 0, count: frames)
    }
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
