import LiveSession
import Controls
import Foundation
import MappingFiles
import SoundFile

let openmsx = "/usr/share/games/openttd/baseset/openmsx"
let timGM = "/usr/share/sounds/sf2/TimGM6mb.sf2"

func scratchDirectory() -> String {
    let path = NSTemporaryDirectory() + "carillon-tests-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// Runs a program to completion; returns its exit status.
@discardableResult
func run(_ executable: String, _ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
}

/// Energy envelope: RMS of both channels in consecutive windows of `window`
/// frames, starting `skip` frames in.
func envelope(_ file: AudioFileReader, window: Int, skip: Int = 0) -> [Double] {
    let windows = (file.frames - skip) / window
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
func correlation(_ a: [Double], _ b: [Double]) -> Double {
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

/// The project's own SoundFont, built by scripts/make-soundfont and committed
/// (soundfonts/README.md): found from this file's place in the repository.
let carillonTestFont: String = {
    let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    return repository.appendingPathComponent("soundfonts/carillon-test.sf2").path
}()

/// Polls `condition` every 20 ms until it holds or `seconds` pass; its last answer.
func waitFor(_ seconds: Double = 3, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while Date() < end {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// A host without audio whose mapping file is watched (hot reload, learn): not started.
func watchingHostWithoutAudio(mapping path: String) throws -> LiveHost {
    var options = LiveHost.Options()
    options.audio = false
    options.watchMapping = path
    return try LiveHost(soundFont: nil, mapping: try ControlMapping.load(path: path), options: options)
}
