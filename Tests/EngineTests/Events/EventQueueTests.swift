import Parameters
import Testing
import Engine
import MIDI

@Suite struct EventQueueTests {
    @Test func pushPop_keepsOrder() {
        let queue = EventQueue(capacity: 8)
        for i in 0..<5 { #expect(queue.push(TimedMessage(frame: UInt64(i), message: .noteOn(60, velocity: 1, channel: 0)))) }
        var frames: [UInt64] = []
        while let e = queue.peek() { frames.append(e.frame); queue.pop() }
        #expect(frames == [0, 1, 2, 3, 4])
        #expect(queue.peek() == nil)
    }

    @Test func push_whenFull_isRefusedAndCounted() {
        let queue = EventQueue(capacity: 4)
        for _ in 0..<4 { #expect(queue.push(.now(.noteOff(1, channel: 0)))) }
        #expect(!queue.push(.now(.noteOff(1, channel: 0))))
        #expect(queue.overflowCount == 1)
        queue.pop()
        #expect(queue.push(.now(.noteOff(1, channel: 0))))
    }

    @Test func producerThread_consumerThread_seeEveryEventInOrder() {
        let queue = EventQueue(capacity: 64)
        let total = 200_000
        let producer = ProducerThread {
            var i = 0
            while i < total {
                if queue.push(TimedMessage(frame: UInt64(i), message: .noteOn(UInt8(i % 128), velocity: 1, channel: i % 16))) { i += 1 }
            }
        }
        var expected: UInt64 = 0
        var ordered = true
        while expected < UInt64(total) {
            if let e = queue.peek() {
                ordered = ordered && e.frame == expected && e.message.data1 == UInt8(expected % 128)
                queue.pop(); expected += 1
            }
        }
        producer.join()
        #expect(ordered)
    }

    @Test func channelMessage_fromMIDIMessage_keepsWireBytes() {
        #expect(ChannelMessage(.noteOn(60, velocity: 100, channel: 9)) == ChannelMessage(status: 0x99, data1: 60, data2: 100))
        #expect(ChannelMessage(.pitchBend(UInt14(8192 + 5), channel: 1)) == ChannelMessage(status: 0xE1, data1: 5, data2: 64))
        #expect(ChannelMessage(.programChange(5, channel: 2)) == ChannelMessage(status: 0xC2, data1: 5))
        #expect(ChannelMessage(.timingClock) == nil)
        #expect(ChannelMessage(.sysEx([0x7E, 0x7F])) == nil)
    }
}

@Suite struct ParameterStoreTests {
    @Test func set_changesValueAndCounter() {
        let store = ParameterStore()
        let index = ParameterAddress.strip(.channel(3), .gain).index
        let before = store.read(index)
        #expect(before.value == 1)
        store.set(.strip(.channel(3), .gain), -6)
        let after = store.read(index)
        #expect(abs(after.value - 0.501_187) < 1e-5)
        #expect(after.counter == before.counter &+ 1)
        store.set(.strip(.channel(3), .gain), -6)
        #expect(store.read(index).counter == before.counter &+ 2)
    }

    @Test func set_refusesNonFiniteAndClampsOutOfRange() {
        let store = ParameterStore()
        let index = ParameterAddress.masterGain.index
        let before = store.read(index)
        for bad in [Double.nan, .infinity, -.infinity] { #expect(!store.set(.masterGain, bad)) }
        #expect(store.read(index) == before)
        #expect(store.refusedCount == 3)
        store.set(.masterGain, 1e9)
        #expect(abs(store.value(.masterGain) - 1.995_262) < 1e-5)  // +6 dB, the top of the range
        store.set(.masterGain, -1e9)
        #expect(store.value(.masterGain) == 0)
        // A parameter with no store slot (a channel message) is refused, not stored.
        #expect(!store.set(.channelCC(0, 7), 64))
        #expect(store.refusedCount == 4)
    }

    /// A change timed for a frame is stored at the start of the block that frame
    /// falls in: not before, and at once when that block has passed.
    @Test func timedSet_isStoredAtTheStartOfItsFramesBlock() {
        let store = ParameterStore()
        #expect(store.set(.masterGain, -6, atFrame: 512))
        #expect(store.set(.masterGain, -12, atFrame: 767))
        #expect(store.set(.masterGain, -20, atFrame: 768))
        #expect(store.value(.masterGain) == 1)
        store.applyTimed(before: 512)                       // the block 256..<512
        #expect(store.value(.masterGain) == 1)
        store.applyTimed(before: 768)                       // 512..<768: both of its changes, in order
        #expect(abs(store.value(.masterGain) - 0.251_189) < 1e-5)
        store.applyTimed(before: 4096)                      // a block well past 768
        #expect(abs(store.value(.masterGain) - 0.1) < 1e-5)
        // Refused as `set` refuses; nothing is queued.
        #expect(!store.set(.masterGain, .nan, atFrame: 0) && !store.set(.channelCC(0, 7), 64, atFrame: 0))
        #expect(store.refusedCount == 2)
        store.set(.masterGain, 0)
        store.applyTimed(before: .max)
        #expect(store.value(.masterGain) == 1)
    }

    /// A timed change never undoes a newer one: a UI's `set` after it, or a
    /// change stored at once because the ring was full (no block rendered).
    @Test func timedSet_neverUndoesANewerChange() {
        let store = ParameterStore()
        let pan = ParameterAddress.strip(.channel(0), .pan), gain = ParameterAddress.strip(.channel(1), .pan)
        store.set(pan, -0.5, atFrame: 100)
        store.set(gain, -0.5, atFrame: 100)
        store.set(pan, 0.25)                                   // the page moves it meanwhile
        store.applyTimed(before: 256)
        #expect(store.value(pan) == 0.25 && store.value(gain) == -0.5)
        for i in 0..<1024 { #expect(store.set(pan, -1, atFrame: 300 + UInt64(i))) }
        #expect(store.set(gain, 1, atFrame: 200))             // full: stored at once, counted
        #expect(store.timedOverflowCount == 1 && store.value(gain) == 1)
        #expect(store.set(pan, 1, atFrame: 2000))             // full: stored at once, the 1024 older dropped
        #expect(store.timedOverflowCount == 2 && store.value(pan) == 1)
        store.applyTimed(before: .max)
        #expect(store.value(pan) == 1 && store.value(gain) == 1)
        #expect(store.set(pan, 0.5, atFrame: 3000))           // the ring is free again
        store.applyTimed(before: 3001)
        #expect(store.value(pan) == 0.5 && store.timedOverflowCount == 2)
    }

    @Test func defaults_comeFromTheParameterTable() {
        let store = ParameterStore()
        for address in ParameterAddress.all {
            let spec = address.spec
            guard let expected = spec.storeValue(spec.defaultValue) else { continue }
            #expect(store.value(address) == expected, "\(address)")
        }
        #expect(store.value(.masterGain) == 1)
        #expect(store.value(.reverb(.level)) == 1)
        #expect(abs(store.value(.strip(.tone, .gain)) - 0.251_189) < 1e-5)
    }
}

/// Values that would corrupt the queue or trap: refused or clamped.
@Suite struct EventQueueBadValueTests {
    @Test func push_sysExPlaceholder_isRefusedAndCounted_theByteRingStaysIntact() {
        let queue = EventQueue(capacity: 8, sysExCapacity: 64)
        // A placeholder without bytes would make the consumer read (and free) 5000 bytes of a 64-byte ring.
        #expect(!queue.push(.now(.sysExPlaceholder(5_000))))
        #expect(!queue.push(TimedMessage(frame: 9, message: .sysExPlaceholder(3))))
        #expect(queue.refusedCount == 2 && queue.overflowCount == 0)
        #expect(queue.count == 0 && queue.peek() == nil)
        let data: [UInt8] = [0x7E, 0x7F, 0x09, 0x01]
        #expect(data.withUnsafeBufferPointer { queue.pushSysEx($0) })
        #expect(queue.headSysEx().map(Array.init) == data)
        queue.pop()
        #expect(queue.count == 0)
    }

    @Test func init_hugeOrNegativeCapacities_areClamped() {
        let huge = EventQueue(capacity: Int.max, sysExCapacity: Int.max)
        #expect(huge.capacity == EventQueue.maximumCapacity)
        let negative = EventQueue(capacity: Int.min, sysExCapacity: -1)
        #expect(negative.capacity == 2)
        #expect(negative.push(.now(.noteOff(1, channel: 0))) && negative.push(.now(.noteOff(2, channel: 0))))
        #expect(!negative.push(.now(.noteOff(3, channel: 0))))
        let bytes = [UInt8](repeating: 1, count: 16)
        #expect(bytes.withUnsafeBufferPointer { EventQueue(capacity: 4, sysExCapacity: -1).pushSysEx($0) })
    }

    @Test func pushSysEx_empty_isRefused() {
        let queue = EventQueue(capacity: 4)
        #expect(![UInt8]().withUnsafeBufferPointer { queue.pushSysEx($0) })
        #expect(queue.overflowCount == 1)
    }
}
