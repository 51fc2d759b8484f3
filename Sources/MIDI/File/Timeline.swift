// All tracks' events merged into one list in time order.

extension StandardMIDIFile {
    /// Every event of every track, in time order with its time in seconds.
    /// Formats 0 and 1: tracks play together; at equal ticks, events keep
    /// track order, then file order (the merge is stable). Format 2: tracks
    /// play one after another.
    public func timeline() -> [TimedEvent] {
        let total = tracks.reduce(0) { $0 + $1.events.count }
        var out: [TimedEvent] = []
        out.reserveCapacity(total)
        var clock = SecondsSweep(tempoMap)

        if format == .sequentialTracks || tracks.count == 1 {
            for (k, (track, start)) in zip(tracks, trackStartTicks).enumerated() {
                for e in track.events {
                    let tick = start &+ e.tick
                    out.append(TimedEvent(seconds: clock.seconds(atTick: tick), tick: tick, track: k, event: e.event))
                }
            }
            return out
        }

        // k-way merge with a binary heap of (tick, track) heads; a track's run of events
        // that stays first is copied without touching the heap.
        let trackEvents = tracks.map(\.events)
        var heap = MergeHeap()
        var cursor = [Int](repeating: 0, count: tracks.count)
        for (k, events) in trackEvents.enumerated() where !events.isEmpty {
            heap.push(tick: events[0].tick, track: k)
        }
        while let k = heap.topTrack {
            trackEvents[k].withUnsafeBufferPointer { events in
                var c = cursor[k]
                let (limit, limitTrack) = heap.secondBest
                repeat {
                    let tick = events[c].tick
                    out.append(TimedEvent(seconds: clock.seconds(atTick: tick), tick: tick, track: k, event: events[c].event))
                    c += 1
                } while c < events.count && (events[c].tick < limit || (events[c].tick == limit && k < limitTrack))
                cursor[k] = c
                if c < events.count { heap.replaceTop(tick: events[c].tick) } else { heap.removeTop() }
            }
        }
        return out
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

/// A min-heap of track heads ordered by (tick, track index).
struct MergeHeap {
    private var items: [(tick: UInt64, track: Int)] = []

    var topTrack: Int? { items.first?.track }

    /// The smallest head other than the top: (tick, track), or (max, max) when there is none.
    var secondBest: (UInt64, Int) {
        var best: (tick: UInt64, track: Int) = (.max, .max)
        for i in 1..<min(3, max(1, items.count)) where Self.less(items[i], best) { best = items[i] }
        return (best.tick, best.track)
    }

    @inline(__always)
    private static func less(_ a: (tick: UInt64, track: Int), _ b: (tick: UInt64, track: Int)) -> Bool {
        a.tick < b.tick || (a.tick == b.tick && a.track < b.track)
    }

    mutating func push(tick: UInt64, track: Int) {
        items.append((tick, track))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard Self.less(items[i], items[parent]) else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    /// The top track's head moved on to `tick`.
    mutating func replaceTop(tick: UInt64) {
        items[0].tick = tick
        siftDown()
    }

    mutating func removeTop() {
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            siftDown()
        }
    }

    private mutating func siftDown() {
        items.withUnsafeMutableBufferPointer { items in
            var i = 0
            let n = items.count
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < n && Self.less(items[l], items[m]) { m = l }
                if r < n && Self.less(items[r], items[m]) { m = r }
                if m == i { break }
                items.swapAt(i, m)
                i = m
            }
        }
    }
}
