import Testing

@testable import ALSA

/// The estimate of `monotonic − queue time` from pairs read together: the smallest
/// difference over a window, since any delay between the two readings only adds.
struct QueueTimeOffsetTests {
    @Test func beforeAnyPair_thereIsNoEstimate() {
        let offset = QueueTimeOffset()
        #expect(offset.offset == nil)
        #expect(offset.monotonic(queue: 123) == nil)
    }

    @Test func theSmallestDifferenceWins_delaysOnlyAdd() {
        var offset = QueueTimeOffset()
        let trueOffset: UInt64 = 5_000_000_000
        // Readings 10 ms apart, each read late by 0…3 ms; one on time.
        let delays: [UInt64] = [3_000_000, 1_000_000, 2_500_000, 0, 700_000, 2_000_000]
        for (i, delay) in delays.enumerated() {
            let queue = UInt64(i) * 10_000_000
            offset.observe(queue: queue, monotonic: queue + trueOffset + delay)
        }
        #expect(offset.offset == Int64(trueOffset))
        #expect(offset.monotonic(queue: 42) == trueOffset + 42)
    }

    @Test func theWindowForgetsOldMinima_soADriftIsFollowed() {
        var offset = QueueTimeOffset()
        let start: UInt64 = 1_000_000_000_000
        // One pair per second; the offset grows by 1 µs each second.
        for second in 0..<UInt64(20) {
            let monotonic = start + second * QueueTimeOffset.slotNanos
            offset.observe(queue: monotonic - start - second * 1_000, monotonic: monotonic)
        }
        // The window holds the last `slots` seconds: the smallest of them is `slots` back.
        let oldest = UInt64(20 - QueueTimeOffset.slots)
        #expect(offset.offset == Int64(start + oldest * 1_000))
    }

    @Test func aQueueTimeAheadOfTheClock_isANegativeOffset() {
        var offset = QueueTimeOffset()
        offset.observe(queue: 9_000, monotonic: 2_000)
        #expect(offset.offset == -7_000)
        #expect(offset.monotonic(queue: 10_000) == 3_000)
    }
}
