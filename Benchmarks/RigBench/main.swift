// The zone router's added time per input event (issue 29; goal ≤ 5 µs).
//
//   swift build -c release --product rig-bench && .build/release/rig-bench [EVENTS]
//
// Two zone sets of 8 zones each: "split" (8 ranges, one layered to an external port,
// transposed, velocity-shaped) and "layer" (all 8 over the whole keyboard: each note
// goes to 8 channels). The stream: played-like note-ons and note-offs (up to 10 keys
// held), sustain every 16 notes, pitch bend and mod wheel between notes. The baseline
// loop hands every message to the same sink without routing; the router's figure is
// the difference, per event. Time is the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so
// other processes on a loaded machine do not count; best of 7 rounds.
import Glibc
import MIDI
import Rig

struct Sink: ZoneSink {
    var count = 0
    var checksum = 0
    mutating func send(_ message: MIDIMessage, to destination: RoutedDestination) {
        count &+= 1
        if case .noteOn(let n) = message { checksum &+= Int(n.note.value) }
    }
}

func events(_ n: Int) -> [MIDIMessage] {
    var out: [MIDIMessage] = []
    out.reserveCapacity(n)
    var held: [UInt7] = []
    var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> Int { seed = seed &* 6364136223846793005 &+ 1442695040888963407; return Int(seed >> 33) }
    var notes = 0
    while out.count < n {
        if held.count >= 10 || (!held.isEmpty && next() % 3 == 0) {
            out.append(.noteOff(held.removeFirst(), channel: 0))
        } else {
            let key = UInt7(21 + next() % 88)
            if !held.contains(key) { held.append(key); out.append(.noteOn(key, velocity: UInt7(1 + next() % 127), channel: 0)); notes += 1 }
            if notes % 16 == 0 { out.append(.cc(64, value: notes % 32 == 0 ? 0 : 127, channel: 0)) }
        }
        if next() % 4 == 0 { out.append(.pitchBend(UInt14(next() % 16384), channel: 0)) }
        if next() % 6 == 0 { out.append(.cc(1, value: UInt7(next() % 128), channel: 0)) }
    }
    return out
}

func splitZones() -> [Zone] {
    (0..<8).map { i in
        var z = Zone(name: "Z\(i)", destinations: [.channel(Channel(i))])
        z.keys = UInt7(i * 16)...UInt7(i * 16 + 15)
        z.transpose = i % 3 == 0 ? 12 : 0
        z.velocity = i % 2 == 0 ? .linear(scale: 0.8, offset: 10) : .unchanged
        if i == 5 { z.destinations.append(.port("Hardware Synth", channel: 0)) }
        if i == 3 { z.controllers = [1: 11] }
        return z
    }
}

func layerZones() -> [Zone] {
    (0..<8).map { i in
        var z = Zone(name: "L\(i)", destinations: [.channel(Channel(i))])
        z.transpose = (i % 3) * 12 - 12
        z.velocity = .linear(scale: 0.9, offset: Double(i))
        return z
    }
}

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 200_000 : 200_000
let stream = events(count)
func cpuNanos() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Double(t.tv_sec) * 1e9 + Double(t.tv_nsec)
}

func best(_ body: () -> Void) -> Double {
    var result = Double.infinity
    for _ in 0..<7 {
        let start = cpuNanos()
        body()
        result = min(result, cpuNanos() - start)
    }
    return result / Double(stream.count)
}

var baselineSink = Sink()
let baseline = best {
    for m in stream { baselineSink.send(m, to: .internal) }
}
print("events: \(stream.count) (\(stream.filter { if case .noteOn = $0 { true } else { false } }.count) note-ons)")
print(String(describing: "baseline (sink only): ") + format(baseline) + " ns/event")
for (name, zones) in [("split, 8 zones", splitZones()), ("layer, 8 zones", layerZones())] {
    let router = ZoneRouter()
    var sink = Sink()
    router.setZones(zones, into: &sink)
    let routed = best {
        for m in stream { _ = router.route(m, from: 1, into: &sink) }
        router.releaseAll(source: 1, into: &sink)
    }
    print("\(name): \(format(routed)) ns/event, added \(format(routed - baseline)) ns/event (\(format((routed - baseline) / 1000, digits: 3)) µs); outputs/event \(format(Double(sink.count) / Double(stream.count * 7), digits: 2)); held at end \(router.heldNotes)")
}
if baselineSink.checksum == 42 { print("") }

func format(_ v: Double, digits: Int = 1) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let r = (v * scale).rounded() / scale
    return String(r)
}
