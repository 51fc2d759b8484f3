import SoundFile

/// Energy envelope: RMS of both channels in consecutive windows of `window`
/// frames, starting `skip` frames in (audio compares by envelope, never by bytes).
public func envelope(_ file: AudioFileReader, window: Int, skip: Int = 0) -> [Double] {
    let windows = max(0, (file.frames - skip) / window)
    var out = [Double](repeating: 0, count: windows)
    file.samples.withUnsafeBufferPointer { s in
        for w in 0..<windows {
            var sum = 0.0
            for i in (2 * skip + w * window * 2)..<(2 * skip + (w + 1) * window * 2) { sum += Double(s[i]) * Double(s[i]) }
            out[w] = (sum / Double(2 * window)).squareRoot()
        }
    }
    return out
}

/// Pearson correlation over the common length.
public func correlation(_ a: [Double], _ b: [Double]) -> Double {
    let n = min(a.count, b.count)
    guard n > 1 else { return 0 }
    let ma = a[..<n].reduce(0, +) / Double(n), mb = b[..<n].reduce(0, +) / Double(n)
    var sab = 0.0, saa = 0.0, sbb = 0.0
    for i in 0..<n {
        let x = a[i] - ma, y = b[i] - mb
        sab += x * y; saa += x * x; sbb += y * y
    }
    return sab / (saa * sbb).squareRoot()
}
