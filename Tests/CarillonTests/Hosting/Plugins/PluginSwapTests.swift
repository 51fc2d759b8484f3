@testable import Sampling
@testable import Hosting
@testable import LiveSession
import CAllocationCounter
import Controls
import Engine
import Foundation
import LV2
import MIDI
import Parameters
import Testing

/// A plugin changed while the session runs (a mapping reload) is crossfaded
/// in: the render thread takes the new one at a block's start, runs both for
/// 20 ms, and hands the old one back to be freed off the render thread.
@Suite(.serialized) struct PluginSwapTests {
    static let delay = "http://drobilla.net/plugins/mda/Delay"
    static let overdrive = "http://drobilla.net/plugins/mda/Overdrive"
    static let piano = "http://drobilla.net/plugins/mda/Piano"
    static let epiano = "http://drobilla.net/plugins/mda/EPiano"

    /// A sine in channel 1's strip, so an insert always has something to change.
    final class Sine: Instrument {
        let stripCount = 16
        private var phase = 0.0
        func prepare(sampleRate: Double, maxFrames: Int) { phase = 0 }
        func receive(_ message: ChannelMessage) {}
        func render(frames: Int, dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                    effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {
            for i in 0..<frames {
                let v = Float(0.3 * sin(phase))
                dry[0]![i] += v; dry[1]![i] += v
                phase += 2 * .pi * 440 / 48_000
            }
        }
        func silence() {}
    }

    /// The slot's output while it swaps is the old effect's faded into the
    /// new one's, sample for sample (each effect run alone on the same
    /// input as references), and after the fade the new one's alone.
    @Test func insertSlot_crossfadesFromTheOldEffectToTheNew_exactly() throws {
        let host = try PluginHost(instruments: [], inserts: [InsertSpec(strip: .master, uri: Self.delay),
                                                           InsertSpec(strip: .strip(.channel(0)), uri: Self.overdrive)])
        let store = ParameterStore()
        func make(_ k: Int) throws -> any AudioInsert {
            try host.makeInsert(k, sampleRate: 48_000, maxFrames: 256, offline: false, parameters: store)
        }
        let fade = 960   // 20 ms: blocks of 256 end it inside the fourth block
        var first: (any AudioInsert)? = try make(0)
        weak let firstObject = first as AnyObject?
        let slot = SwappableInsert(first!, maxFrames: 256, fadeFrames: fade)
        first = nil
        let oldAlone = try make(0)
        var newAlone: (any AudioInsert)?
        var phase = 0.0, worst: Float = 0, fadedBlocks = 0
        for block in 0..<40 {
            var input = [Float](repeating: 0, count: 512)
            for i in 0..<256 { input[i] = Float(0.3 * sin(phase)); input[256 + i] = input[i] * 0.5; phase += 2 * .pi * 440 / 48_000 }
            if block == 10 {
                let next = try make(1)
                newAlone = try make(1)
                slot.replace(with: next)
            }
            var out = input, a = input, b = input
            out.withUnsafeMutableBufferPointer { slot.process(left: $0.baseAddress!, right: $0.baseAddress! + 256, frames: 256) }
            a.withUnsafeMutableBufferPointer { oldAlone.process(left: $0.baseAddress!, right: $0.baseAddress! + 256, frames: 256) }
            b.withUnsafeMutableBufferPointer { newAlone?.process(left: $0.baseAddress!, right: $0.baseAddress! + 256, frames: 256) }
            for i in 0..<512 {
                let done = (block - 10) * 256 + i % 256 + 1
                let g: Float = block < 10 ? 0 : min(1, Float(done) / Float(fade))
                let expected = block < 10 ? a[i] : a[i] + (b[i] - a[i]) * g
                worst = max(worst, abs(out[i] - expected))
                if g > 0 && g < 1 && i == 0 { fadedBlocks += 1 }
            }
            if block == 20 {
                #expect(slot.isSwapping, "the old effect waits to be freed off the render thread")
                #expect(firstObject != nil)
                slot.collectRetired()
                #expect(!slot.isSwapping && firstObject == nil, "the old effect is freed here, off the render thread")
            }
        }
        #expect(worst < 1e-6, "the slot's output is \(worst) from the crossfade of the two effects run alone")
        #expect(fadedBlocks == 4, "the fade spans 960 frames: blocks 10...13")
    }

    /// The reload path: a mapping file that puts another effect on the master
    /// and another instrument on channel 1 swaps both in, in a renderer that
    /// keeps playing: the render thread makes no heap call meanwhile, the new
    /// plugins' controls are parameters at their defaults, the old plugins
    /// are freed off the render thread, and additions wait for a restart.
    @Test func mappingReload_swapsThePluginsIn_withoutAHeapCallOnTheRenderThread() throws {
        let dir = NSTemporaryDirectory() + "carillon-swap-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/m.yaml"
        func write(insert: String, instrument: String, more: String = "") throws {
            try """
                channels:
                  1: { lv2: "\(instrument)" }
                \(more)inserts:
                  master: ["\(insert)"]
                controls:
                  - name: Knob
                    kind: knob
                    source: { cc: 20 }
                    targets: [strip.1.gain]

                """.write(toFile: path, atomically: true, encoding: .utf8)
        }
        try write(insert: Self.delay, instrument: Self.piano)
        let own = ControlMapping.plugins(path: path)
        _ = try PluginHost(instruments: own.instruments, inserts: own.inserts)
        let mapping = try ControlMapping.load(path: path)
        let assembly = HostAssembly(options: HostOptions(), channels: mapping.channels, inserts: mapping.inserts)
        let plugins = try #require(try assembly.makePluginHost())
        let slots = PluginSlots()
        let renderer = try assembly.makeRenderer(instrument: Sine(), tracks: [], sampleRate: 48_000, maxFrames: 256,
                                                 plugins: plugins, slots: slots)
        let hub = assembly.makeHub(mapping: mapping, plugins: plugins)
        assembly.connect(hub, to: renderer, events: nil, transport: nil)
        let log = HostLog()
        let live = LivePlugins(host: plugins, slots: slots, assembly: assembly)

        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 512)
        defer { output.deallocate() }
        func play(_ blocks: Int) -> Int64 {
            var calls: Int64 = 0
            for b in 0..<blocks {
                if b % 8 == 0 { renderer.events.push(.now(.noteOn(UInt8(60 + b % 12), velocity: 100, channel: 0))) }
                carillon_allocations_arm()
                renderer.render(frames: 256, into: output)
                calls += carillon_allocations_disarm()
            }
            return calls
        }
        _ = play(20)
        try write(insert: Self.overdrive, instrument: Self.epiano, more: "  3: { lv2: \"\(Self.piano)\" }\n")
        hub.reload(from: path, log: log, plugins: live)
        let lines = log.take()
        #expect(lines.contains("channel 1: now MDA ePiano (crossfaded in)"), "\(lines)")
        #expect(lines.contains("the master: insert now \(Self.overdrive) (crossfaded in)"), "\(lines)")
        #expect(lines.contains("channel 3: an LV2 instrument added takes effect at the next start"), "\(lines)")
        let drive = try #require(ParameterAddress("insert.master.1.drive"))
        #expect(hub.value(of: drive) == ParameterRegistry.standard.info(for: drive).defaultValue)
        #expect(ParameterAddress("plugin.1.hardness") != nil)
        #expect(slots.isSwapping)
        let calls = play(40)
        #expect(calls == 0, "the render thread made \(calls) heap calls while it swapped the plugins")
        #expect(slots.isSwapping, "the replaced plugins wait to be freed off the render thread")
        slots.collectRetired()
        #expect(!slots.isSwapping)
        #expect(plugins.instruments.map(\.uri) == [Self.epiano] && plugins.inserts.map(\.uri) == [Self.overdrive])
        #expect(renderer.peak > 0.01)

        // A mapping with a mistake changes nothing: its plugin's controls are put back.
        try write(insert: Self.delay, instrument: Self.epiano, more: "  4: { bank: 99999 }\n")
        hub.reload(from: path, log: log, plugins: live)
        #expect(log.take().last?.contains("mapping not reloaded") == true)
        #expect(plugins.inserts.map(\.uri) == [Self.overdrive] && !slots.isSwapping)
        #expect(ParameterRegistry.standard.info(for: try #require(ParameterAddress("insert.master.1.drive"))).address.drives
            .contains("Overdrive"))
        // A plugin that is not installed: one line, nothing changes.
        try write(insert: Self.delay + "X", instrument: Self.epiano)
        hub.reload(from: path, log: log, plugins: live)
        let refused = log.take()
        #expect(refused.contains { $0.contains("no LV2 plugin \(Self.delay)X is installed") }, "\(refused)")
        #expect(plugins.inserts.map(\.uri) == [Self.overdrive])
    }
}
