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
