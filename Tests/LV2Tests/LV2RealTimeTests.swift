import CAllocationCounter
import LV2
import Testing

/// `LV2Instance.run` makes no heap call of its own: measured around it with
/// plugins that make none themselves. (mda's instruments do: EPiano makes 2 a
/// run in its own code, which no host can take away.)
@Suite struct LV2RealTimeTests {
    @Test(arguments: ["Delay", "Overdrive", "Stereo"])
    func run_makesNoHeapCallOfItsOwn(_ name: String) throws {
        let plugin = try LV2Instance(world: try LV2World(), uri: LV2WorldTests.mda + name, sampleRate: 48_000, maxFrames: 512,
                                     urids: URIDMap())
        plugin.activate()
        plugin.run(frames: 512)
        var calls: Int64 = 0
        for block in 0..<200 {
            if plugin.takesMIDI, block % 10 == 0 { plugin.appendMIDI(frame: 100, status: 0x90, 60, 90, count: 3) }
            carillon_allocations_arm()
            plugin.run(frames: 512)
            calls += carillon_allocations_disarm()
        }
        #expect(calls == 0, "mda \(name): \(calls) heap calls in 200 runs")
    }
}
