// All tracks' events merged into one list in time order.

extension StandardMIDIFile {
    /// Every event of every track, in time order with its time in seconds.
    /// Formats 0 and 1: tracks play together; at equal ticks, events keep
    /// track order, then file order (the merge is stable). Format 2: tracks
    /// play one after another.
    public func timeline() -> [TimedEvent] {
        var out: [TimedEvent] = []
        out.reserveCapacity(tracks.reduce(0) { $0 + $1.events.count })
        forEachTimedEvent { out.append($0) }
        return out
    }

    /// The events of `timeline()`, in the same order, handed to `body` one by
    /// one instead of collected: for going through a big file without a copy of it.
    public func forEachTimedEvent(_ body: (TimedEvent) -> Void) {
        var clock = SecondsSweep(tempoMap)

        if format == .sequentialTracks || tracks.count == 1 {
            for (k, (track, start)) in zip(tracks, trackStartTicks).enumerated() {
                for e in track.events {
                    let tick = start &+ e.tick
                    body(TimedEvent(seconds: clock.seconds(atTick: tick), tick: tick, track: k, event: e.event))
                }
            }
            return
        }

        // k-way merge: a binary heap of track heads (tick, track, position). A track's run of
        // events that stays first is copied without touching the heap.
        var heap: [MergeHead] = []
        heap.reserveCapacity(tracks.count)
        for (k, track) in tracks.enumerated() where !track.events.isEmpty {
            MergeHead.push(MergeHead(tick: track.events[0].tick, track: k, position: 0), into: &heap)
        }
        tracks.withUnsafeBufferPointer { tracks in
            heap.withUnsafeMutableBufferPointer { heapBuffer in
                var count = heapBuffer.count
                while count > 0 {
                    let head = heapBuffer[0]
                    let k = head.track
                    // The best head after this one is a child of the root.
                    var limit = MergeHead(tick: .max, track: .max, position: 0)
                    if count > 1 { limit = heapBuffer[1] }
                    if count > 2 && heapBuffer[2] < limit { limit = heapBuffer[2] }
                    tracks[k].events.withUnsafeBufferPointer { events in
                        var c = head.position
                        repeat {
                            let tick = events[c].tick
                            body(TimedEvent(seconds: clock.seconds(atTick: tick), tick: tick, track: k, event: events[c].event))
                            c += 1
                        } while c < events.count && (events[c].tick < limit.tick || (events[c].tick == limit.tick && k < limit.track))
                        if c < events.count {
                            heapBuffer[0] = MergeHead(tick: events[c].tick, track: k, position: c)
                        } else {
                            count -= 1
                            heapBuffer[0] = heapBuffer[count]
                        }
                    }
                    MergeHead.siftDown(heapBuffer, count: count)
                }
            }
        }
    }
}

/// A track's next event in the timeline merge, ordered by (tick, track).
struct MergeHead: Comparable {
    var tick: UInt64
    var track: Int
    var position: Int

    @inline(__always)
    static func < (a: MergeHead, b: MergeHead) -> Bool { a.tick < b.tick || (a.tick == b.tick && a.track < b.track) }
    static func == (a: MergeHead, b: MergeHead) -> Bool { a.tick == b.tick && a.track == b.track }

    static func push(_ head: MergeHead, into heap: inout [MergeHead]) {
        heap.append(head)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[i] < heap[parent] else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    @inline(__always)
    static func siftDown(_ heap: UnsafeMutableBufferPointer<MergeHead>, count n: Int) {
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < n && heap[l] < heap[m] { m = l }
            if r < n && heap[r] < heap[m] { m = r }
            if m == i { return }
            heap.swapAt(i, m)
            i = m
        }
    }
}

/// Seconds at non-decreasing ticks: walks forward through the tempo changes.
struct SecondsSweep {
    let map: TempoMap
    var index = 0
    var nextChangeTick: UInt64

    init(_ map: TempoMap) {
        self.map = map
        nextChangeTick = map.changes.count > 1 ? map.changes[1].tick : .max
    }

    @inline(__always)
    mutating func seconds(atTick tick: UInt64) -> Double {
        if map.changes.isEmpty { return map.seconds(atTick: tick) }
        while tick >= nextChangeTick {
            index += 1
            nextChangeTick = index + 1 < map.changes.count ? map.changes[index + 1].tick : .max
        }
        return map.seconds(atTick: tick, changeIndex: index)
    }
}
