import Testing
import Engine

@Suite struct MessageRingTests {
    /// Wider than a word, so a value read half-written would show as unequal parts.
    struct Wide: BitwiseCopyable, Equatable {
        var a, b, c, d: UInt64
        init(_ n: UInt64) { a = n; b = n &* 3; c = ~n; d = n ^ 0x5555 }
        var isWhole: Bool { b == a &* 3 && c == ~a && d == a ^ 0x5555 }
    }

    @Test func capacity_roundsUpToAPowerOfTwo_atLeastTwo() {
        #expect(MessageRing<UInt8>(capacity: 0).capacity == 2)
        #expect(MessageRing<UInt8>(capacity: 2).capacity == 2)
        #expect(MessageRing<UInt8>(capacity: 3).capacity == 4)
        #expect(MessageRing<UInt8>(capacity: 64).capacity == 64)
        #expect(MessageRing<UInt8>(capacity: 1000).capacity == 1024)
    }

    @Test func fillsToCapacity_refusesOneMore_andTakesAgainAfterAPop() {
        let ring = MessageRing<Int>(capacity: 4)
        for i in 0..<4 { #expect(ring.hasRoom); #expect(ring.push(i)) }
        #expect(!ring.hasRoom)
        #expect(!ring.push(99))
        #expect(ring.count == 4)
        #expect(ring.peek() == 0)
        ring.pop()
        #expect(ring.push(4))
        var seen: [Int] = []
        while let v = ring.peek() { seen.append(v); ring.pop() }
        #expect(seen == [1, 2, 3, 4])   // the refused 99 never stored
    }

    @Test func popOnEmpty_doesNothing() {
        let ring = MessageRing<Int>(capacity: 2)
        ring.pop()
        #expect(ring.count == 0)
        #expect(ring.peek() == nil)
        #expect(ring.push(7))
        #expect(ring.peek() == 7)
        ring.pop(); ring.pop()
        #expect(ring.count == 0)
        #expect(ring.push(8) && ring.push(9) && !ring.push(10))
    }

    /// Many times round the ring, one value at a time and in bursts that fill it: order and values kept.
    @Test func wrapsManyTimes_inOrder() {
        let ring = MessageRing<Wide>(capacity: 8)
        var next: UInt64 = 0, expected: UInt64 = 0
        for round in 0..<10_000 {
            for _ in 0..<(round % 9) where ring.push(Wide(next)) { next += 1 }
            for _ in 0..<(round % 5) {
                guard let v = ring.peek() else { break }
                #expect(v == Wide(expected))
                ring.pop(); expected += 1
            }
        }
        #expect(next > 10_000 && ring.count == Int(next - expected))
    }

    @Test func producerThread_consumerThread_seeEveryValueWholeAndInOrder() {
        let ring = MessageRing<Wide>(capacity: 16)
        let total: UInt64 = 300_000
        let producer = ProducerThread {
            var i: UInt64 = 0
            while i < total { if ring.push(Wide(i)) { i += 1 } }
        }
        var expected: UInt64 = 0
        var good = true
        while expected < total {
            if let v = ring.peek() {
                good = good && v.a == expected && v.isWhole
                ring.pop(); expected += 1
            }
        }
        producer.join()
        #expect(good)
        #expect(ring.peek() == nil)
    }
}
