import LiveSession
import Controls
import Foundation
import MIDI
import Testing

/// The mapping file is watched (inotify): a good change is swapped in, a bad
/// one keeps the running mapping and logs every mistake with its place.
@Suite(.serialized) struct MappingReloadTests {
    static let good = """
        name: Reload test
        controls:
          - name: Level
            kind: fader
            source: { cc: 7 }
            targets: [strip.1.gain]
        """

    /// Writes as editors do: a new file renamed over the old one.
    func save(_ text: String, to path: String) throws {
        let temporary = path + ".tmp"
        try text.write(toFile: temporary, atomically: false, encoding: .utf8)
        guard rename(temporary, path) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    @Test func watcher_seesARenamedSaveOnce() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/m.yaml"
        try save(Self.good, to: path)
        final class Count: @unchecked Sendable { let lock = NSLock(); var n = 0 }
        let count = Count()
        let watcher = try MappingWatcher(path: path) { count.lock.withLock { count.n += 1 } }
        try save(Self.good + "\n", to: path)
        try save(Self.good + "\n\n", to: path)          // in quick succession: one change
        #expect(waitFor { count.lock.withLock { count.n } == 1 })
        usleep(300_000)
        #expect(count.lock.withLock { count.n } == 1)
        try "x".write(toFile: "\(dir)/other.yaml", atomically: true, encoding: .utf8)   // another file: nothing
        usleep(300_000)
        #expect(count.lock.withLock { count.n } == 1)
        watcher.cancel()
    }

    /// "Save as scene" on a session that watches its file: the saved mapping
    /// comes in through the watcher's reload alone — one reload, one new
    /// mapping generation — and it holds the scene.
    @Test func liveHost_savedScene_isReloadedOnce() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/m.yaml"
        try save(Self.good, to: path)
        let host = try watchingHostWithoutAudio(mapping: path)
        try host.start()
        defer { host.stop() }
        let generation = host.hub.mappingGeneration
        host.hub.selectPreset(onChannel: Channel(0), bank: 0, program: 89)
        try host.hub.saveScene(named: "Gig")
        var log: [String] = []
        #expect(waitFor { log += host.takeLog(); return host.hub.sceneNames == ["Gig"] }, "\(log)")
        usleep(500_000)   // the watcher's settle time (100 ms) and more: nothing else comes
        log += host.takeLog()
        #expect(log.filter { $0.hasPrefix("mapping reloaded") }.count == 1, "\(log)")
        #expect(host.hub.mappingGeneration == generation + 1)
    }

    @Test func watcher_unwatchableFolder_isOneClearError() {
        #expect(throws: MappingWatcher.Failure.self) { try MappingWatcher(path: "/nonexistent-folder/m.yaml") {} }
    }

    @Test func liveHost_reloadsAGoodFile_andKeepsTheOldOneOnMistakes() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/m.yaml"
        try save(Self.good, to: path)
        let host = try watchingHostWithoutAudio(mapping: path)
        try host.start()
        defer { host.stop() }

        try save(Self.good.replacingOccurrences(of: "name: Level", with: "name: Volume"), to: path)
        #expect(waitFor { host.controlStates().map(\.name) == ["Volume"] })

        try save(Self.good + "\n  - name: Broken\n    kind: wobbler\n", to: path)
        var log: [String] = []
        #expect(waitFor { log += host.takeLog(); return log.contains { $0.contains("not reloaded") } })
        #expect(log.contains { $0.hasPrefix("\(path):8:11: error: unknown control kind") }, "\(log)")
        #expect(host.controlStates().map(\.name) == ["Volume"])
    }
}
