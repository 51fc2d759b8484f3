@testable import Sampling
@testable import Hosting
@testable import LiveSession
import CAllocationCounter
import Controls
import Engine
import Foundation
import LV2
import MIDI
import MappingFiles
import Parameters
import Rig
import Testing
import Threads

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
        let live = LivePlugins(host: plugins, slots: slots, assembly: assembly, keyboard: nil)

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

/// A reload that changes a zone's `midi-fx`: the new chain takes a free slot
/// from the next block (no heap call on the render thread), a key held across
/// the reload ends in the chain it began in, a chain left unused is released,
/// and slots are reused, so reloads never run out of them.
@Suite(.serialized) struct MIDIEffectReloadTests {
    static let x42 = MIDIEffectRenderTests.x42

    /// A live session's side of the mapping at `path`, as `LiveHost` builds it: its
    /// plugins, the renderer with its chain slots, the keyboard's way in (started),
    /// and `LivePlugins` for reloads.
    struct Session {
        let hub: ControlHub, plugins: PluginHost, instrument = MIDIEffectRenderTests.RecordingInstrument()
        let slots = PluginSlots(), renderer: Renderer, keyboard: KeyboardRouting, live: LivePlugins

        init(mapping path: String) throws {
            try LivePlugins.register(mappingAt: path)
            let mapping = try ControlMapping.load(path: path)
            let assembly = HostAssembly(options: HostOptions(), midiEffects: try MIDIEffectSpec.all(in: mapping))
            plugins = try #require(try assembly.makePluginHost())
            hub = assembly.makeHub(mapping: mapping, plugins: plugins)
            renderer = try assembly.makeRenderer(instrument: instrument, tracks: [], sampleRate: 48_000, maxFrames: 256,
                                                 plugins: plugins, slots: slots)
            keyboard = KeyboardRouting(hub: hub, events: EventQueueProducer(renderer.events, effects: renderer.midiEffectQueues),
                                       effects: plugins.midiEffects, effectSlots: slots.midiEffectSlots)
            keyboard.start()
            live = LivePlugins(host: plugins, slots: slots, assembly: assembly, keyboard: keyboard)
        }
    }

    @Test func mappingReload_swapsAZonesMIDIEffects_andHeldKeysEndInTheirChain() throws {
        let dir = NSTemporaryDirectory() + "carillon-fx-swap-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/m.yaml"
        func write(_ plugin: String, to: String = "2", zone: String = "FX") throws {
            try "zones:\n  - { name: \(zone), to: \(to), midi-fx: [\"\(Self.x42)\(plugin)\"] }\n"
                .write(toFile: path, atomically: true, encoding: .utf8)
        }
        try write("midichord")
        let session = try Session(mapping: path)
        defer { session.keyboard.stop() }
        let (hub, plugins, instrument, slots, renderer, keyboard, live)
            = (session.hub, session.plugins, session.instrument, session.slots, session.renderer, session.keyboard, session.live)
        #expect(renderer.midiEffectQueues.count == ZoneRouter.maxEffects && slots.midiEffectSlots == ZoneRouter.maxEffects)
        let log = HostLog()
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 512)
        defer { output.deallocate() }
        var heapCalls: Int64 = 0
        func blocks(_ n: Int) {
            for _ in 0..<n {
                carillon_allocations_arm()
                renderer.render(frames: 256, into: output)
                heapCalls += carillon_allocations_disarm()
            }
        }
        func play(_ message: MIDIMessage) { keyboard.route(message, from: 1, at: .afterLast); blocks(2) }
        func reload() -> [String] { hub.reload(from: path, log: log, plugins: live); slots.collectRetired(); return log.take() }
        let notes = { instrument.received.filter { $0.message.kind == 0x90 || $0.message.kind == 0x80 }.map { "\($0.message)" } }

        play(.noteOn(60, velocity: 100, channel: 0))                  // C4 → its C-major chord on channel 2
        #expect(Set(notes()) == ["91 3C 64", "91 40 64", "91 43 64", "91 48 64"], "\(notes())")
        try write("notetoggle")
        let lines = reload()
        #expect(lines.contains("zone FX: midi-fx now MIDI Note Toggle"), "\(lines)")
        blocks(4)
        play(.noteOff(60, channel: 0))                                // ends the chord, in the chain it began in
        #expect(Set(notes().suffix(4)) == ["81 3C 00", "81 40 00", "81 43 00", "81 48 00"] && notes().count == 8, "\(notes())")
        play(.noteOn(62, velocity: 100, channel: 0))                  // the new chain: D4 alone, toggled on
        play(.noteOff(62, channel: 0))
        #expect(notes().suffix(1) == ["91 3E 64"] && notes().count == 9, "\(notes())")

        // Destinations changed, plugins the same: a chain of its own; the unused one ends what it toggled on.
        try write("notetoggle", to: "3")
        #expect(reload().contains("zone FX: midi-fx now MIDI Note Toggle"))
        blocks(2)
        #expect(notes().suffix(1) == ["81 3E 00"], "\(notes())")
        play(.noteOn(64, velocity: 100, channel: 0))
        play(.noteOff(64, channel: 0))
        #expect(notes().suffix(1) == ["92 40 64"], "\(notes())")
        play(.noteOn(64, velocity: 100, channel: 0))                  // toggled off again
        play(.noteOff(64, channel: 0))
        #expect(notes().suffix(1) == ["82 40 00"], "\(notes())")
        #expect(heapCalls == 0, "the render thread made \(heapCalls) heap calls while chains were swapped")

        // The same file again: the chain goes on as it is.
        #expect(!reload().contains { $0.contains("midi-fx now") })
        // More reloads than slots, a key held across each: every chain is made, every note ends.
        for k in 0..<(ZoneRouter.maxEffects + 8) {
            play(.noteOn(UInt7(unchecked: UInt8(48 + k % 12)), velocity: 90, channel: 0))
            try write(k % 2 == 0 ? "midichord" : "mididup", to: "\(4 + k % 3)", zone: "FX\(k)")
            let lines = reload()
            #expect(lines.contains { $0.hasPrefix("zone FX\(k): midi-fx now") }, "reload \(k): \(lines)")
            play(.noteOff(UInt7(unchecked: UInt8(48 + k % 12)), channel: 0))
        }
        blocks(8)
        var sounding: [String: Int] = [:]
        for m in instrument.received.map(\.message) where m.kind == 0x90 || m.kind == 0x80 {
            sounding["\(m.status & 0x0F) \(m.data1)", default: 0] += m.kind == 0x90 && m.data2 > 0 ? 1 : -1
        }
        #expect(sounding.values.allSatisfy { $0 == 0 }, "notes left on: \(sounding.filter { $0.value != 0 })")
        #expect(keyboard.heldNotes == 0)
        #expect(heapCalls == 0, "the render thread made \(heapCalls) heap calls while chains were swapped")
        slots.collectRetired()
        #expect(!slots.isSwapping)

        // A midi-fx plugin that is no MIDI effect: the reload is refused, the chain goes on.
        try "zones:\n  - { name: FX39, to: 5, midi-fx: [\"http://drobilla.net/plugins/mda/Delay\"] }\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let refused = reload()
        #expect(refused.contains { $0.contains("is not a MIDI effect") } && refused.last?.contains("mapping not reloaded") == true,
                "\(refused)")
        let before = notes().count
        play(.noteOn(60, velocity: 100, channel: 0))
        #expect(notes().count > before && notes().last?.hasPrefix("9") == true, "the last chain still plays: \(notes().suffix(3))")
        play(.noteOff(60, channel: 0))
        withExtendedLifetime(plugins) {}
    }

    /// A scene's own zone, changed by a reload while that scene is current: the
    /// old chord ends with its key; once the scene is picked again (after a
    /// reload none is current, docs/zones.md) its new chain plays the next key,
    /// and a switch to the other scene releases what that chain holds.
    @Test func mappingReload_changesTheCurrentScenesZone() throws {
        let dir = NSTemporaryDirectory() + "carillon-fx-scene-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/m.yaml"
        func write(_ plugin: String) throws {
            try MIDIEffectRenderTests.twoScenes(firstNamed: "Verse", plugin: plugin).write(toFile: path, atomically: true, encoding: .utf8)
        }
        try write("midichord")
        let session = try Session(mapping: path)
        defer { session.keyboard.stop() }
        let (hub, plugins, instrument, renderer, keyboard, live)
            = (session.hub, session.plugins, session.instrument, session.renderer, session.keyboard, session.live)
        let log = HostLog()
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 512)
        defer { output.deallocate() }
        func play(_ message: MIDIMessage) {
            keyboard.route(message, from: 1, at: .afterLast)
            for _ in 0..<2 { renderer.render(frames: 256, into: output) }
        }
        let notes = { instrument.received.filter { $0.message.kind == 0x90 || $0.message.kind == 0x80 }.map { "\($0.message)" } }

        play(.noteOn(60, velocity: 100, channel: 0))                  // scene Verse: C4's chord on channel 2
        #expect(notes().count == 4, "\(notes())")
        try write("notetoggle")
        hub.reload(from: path, log: log, plugins: live)
        let lines = log.take()
        #expect(lines.contains("zone FX (scene Verse): midi-fx now MIDI Note Toggle"), "\(lines)")
        play(.noteOff(60, channel: 0))                                // the chord ends in its old chain
        #expect(Set(notes().suffix(4)) == ["81 3C 00", "81 40 00", "81 43 00", "81 48 00"] && notes().count == 8, "\(notes())")
        // Scene Verse again: through Plain, since the selector still holds Verse's value from
        // before the reload, and a program change to it changes nothing (the hub's, noted).
        play(.programChange(1, channel: 15))
        play(.programChange(0, channel: 15))
        play(.noteOn(62, velocity: 100, channel: 0))                  // its new chain: D4 alone, toggled on
        play(.noteOff(62, channel: 0))
        #expect(notes().suffix(1) == ["91 3E 64"] && notes().count == 9, "\(notes())")
        play(.programChange(1, channel: 15))                          // scene Plain: the toggled D4 ends
        #expect(notes().suffix(1) == ["81 3E 00"], "\(notes())")
        play(.noteOn(64, velocity: 100, channel: 0))
        #expect(notes().suffix(1) == ["92 40 64"], "\(notes())")
        play(.noteOff(64, channel: 0))
        #expect(keyboard.heldNotes == 0)
        withExtendedLifetime(plugins) {}
    }
}
