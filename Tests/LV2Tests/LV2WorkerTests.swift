import CAllocationCounter
#if canImport(Glibc)
import Glibc
#endif
import LV2
import Testing

private let avldrumsURI = "http://gareus.org/oss/lv2/avldrums#BlackPearl"
private let avldrumsInstalled = (try? LV2World().plugin(uri: avldrumsURI)) != nil

/// The worker extension with a real plugin that needs it: avldrums (Debian's
/// avldrums.lv2) loads its drum kit through its worker. Live, the kit loads on
/// the worker's thread while `run` goes on; offline, it is loaded by the end of
/// the first `run`, so a render's first notes sound. Skipped, with the reason,
/// where avldrums is not installed (it is an optional plugin: `scripts/setup` installs it).
@Suite(.enabled(if: avldrumsInstalled, "avldrums.lv2 is not installed (Debian's avldrums.lv2; scripts/setup installs it)"))
struct LV2WorkerTests {
    static let drums = avldrumsURI

    /// The first block of `plugin`'s left output that sounds, sending a kick (36) every 4 blocks.
    static func firstSoundingBlock(_ plugin: LV2Instance, within blocks: Int) -> Int? {
        for block in 0..<blocks {
            if block % 4 == 0 { plugin.appendMIDI(frame: 0, status: 0x99, 36, 120, count: 3) }
            plugin.run(frames: 512)
            if (0..<512).contains(where: { abs(plugin.audioOutputs[0][$0]) > 1e-3 }) { return block }
        }
        return nil
    }

    @Test func live_theKitLoadsOnTheWorkersThread_andRunNeverAllocates() throws {
        let plugin = try LV2Instance(world: try LV2World(), uri: Self.drums, sampleRate: 48_000, maxFrames: 512, urids: URIDMap())
        #expect(plugin.usesWorker)
        plugin.activate()
        var calls: Int64 = 0, sounded: Int?
        // Paced like a sound card (10.7 ms a block) so the worker has its time: at most 5 s.
        for block in 0..<470 where sounded == nil {
            if block % 4 == 0 { plugin.appendMIDI(frame: 0, status: 0x99, 36, 120, count: 3) }
            carillon_allocations_arm()
            plugin.run(frames: 512)
            calls += carillon_allocations_disarm()
            if (0..<512).contains(where: { abs(plugin.audioOutputs[0][$0]) > 1e-3 }) { sounded = block }
            usleep(10_667)
        }
        print("avldrums live: kit loaded, first kick heard in block \(sounded.map(String.init) ?? "none"); \(calls) heap calls in run")
        #expect(sounded != nil, "no kick within 5 s: the worker's thread did not load the kit")
        #expect(calls == 0)
    }

    @Test func offline_theKitIsLoadedByTheEndOfTheFirstRun() throws {
        let plugin = try LV2Instance(world: try LV2World(), uri: Self.drums, sampleRate: 48_000, maxFrames: 512, urids: URIDMap(),
                                     offline: true)
        plugin.activate()
        plugin.run(frames: 512)
        plugin.appendMIDI(frame: 100, status: 0x99, 36, 120, count: 3)
        plugin.run(frames: 512)
        let left = UnsafeBufferPointer(start: plugin.audioOutputs[0], count: 512)
        #expect(left[..<100].allSatisfy { abs($0) < 1e-6 }, "sound before the kick's frame: \(left[..<100].map(abs).max()!)")
        #expect(left[100..<164].contains { abs($0) > 1e-4 }, "no kick within 64 frames of its frame")
        #expect(Self.firstSoundingBlock(plugin, within: 4) == 0)
    }
}

