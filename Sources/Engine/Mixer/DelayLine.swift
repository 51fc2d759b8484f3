/// A fixed stereo delay of `length` frames: the mixer puts one at the end of
/// a strip's chain to line it up with the strip whose plugins lag the most
/// (latency compensation), so every strip sounds in time with the others.
final class DelayLine: AudioInsert {
    let length: Int
    private let ring: UnsafeMutablePointer<Float>
    private var position = 0

    init(length: Int) {
        precondition(length > 0)
        self.length = length
        ring = .allocate(capacity: 2 * length)
        ring.initialize(repeating: 0, count: 2 * length)
    }

    deinit { ring.deallocate() }

    func process(left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>, frames: Int) {
        let l = ring, r = ring + length
        var p = position
        for i in 0..<frames {
            let a = l[p], b = r[p]
            l[p] = left[i]; r[p] = right[i]
            left[i] = a; right[i] = b
            p += 1
            if p == length { p = 0 }
        }
        position = p
    }

    /// Its own delay is what it compensates, not a plugin's: it reports none.
    var latency: Int { 0 }
}
