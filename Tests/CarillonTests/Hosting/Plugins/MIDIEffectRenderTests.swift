import CAllocationCounter
import Controls
import Engine
import Foundation
import FluidSynth
import Hosting
import MIDI
import MappingFiles
import Parameters
import Rig
import Sampling
import Testing

/// A zone's `midi-fx` on the render thread (live and play): the chain runs
/// each block, its input at the frames the queue gives, its output applied
/// at the frames the plugins send it — and the block loop makes no heap call.
@Suite(.serialized) struct MIDIEffectRenderTests {
    static let x42 = "http://gareus.org/oss/lv2/midifilter#"

    /// Records what it receives and at which frame of the stream (the renderer splits blocks at events).
    final class RecordingInstrument: Instrument {
        var stripCount: Int { 1 }
        private(set) var position = 0
        private let log = UnsafeMutableBufferPointer<(frame: Int, message: ChannelMessage)>.allocate(capacity: 4096)
        private(set) var count = 0
        var received: [(frame: Int, message: ChannelMessage)] { Array(log[0..<count]) }
        deinit { log.deallocate() }
        func prepare(sampleRate: Double, maxFrames: Int) {}
        func receive(_ message: ChannelMessage) {
            if count < log.count { log[count] = (position, message); count += 1 }
        }
        func render(frames: Int, dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                    effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) { position += frames }
        func silence() {}
    }

    static func renderer(_ uris: [String], channels: [Int], instrument: any Instrument, maxFrames: Int)
        throws -> (Renderer, PluginHost) {
        let spec = MIDIEffectSpec(zone: "Live", uris: uris, destinations: channels.map { .channel(Channel($0 - 1)) })
        let assembly = HostAssembly(options: HostOptions(), midiEffects: [spec])
        let plugins = try #require(try assembly.makePluginHost())
        let renderer = try assembly.makeRenderer(instrument: instrument, tracks: [], sampleRate: 48_000, maxFrames: maxFrames,
                                                 plugins: plugins, offline: false)
        #expect(renderer.midiEffectQueues.count == 1)
        return (renderer, plugins)
    }

    /// While a live output is down (`AudioSupervisor`), `drainWithoutSound` takes the event queue and the
    /// chain's queue without rendering: no note-on reaches the instrument, then or on the next blocks (the
    /// chord would make three of each), the controls and the program do, in order, and the clock stands.
    @Test func drainWithoutSound_dropsNoteOns_keepsTheRest_rendersNothing() throws {
        let instrument = RecordingInstrument()
        let (renderer, plugins) = try Self.renderer([Self.x42 + "midichord"], channels: [2], instrument: instrument, maxFrames: 256)
        let queue = renderer.midiEffectQueues[0]
        queue.push(TimedMessage(frame: 100, message: .noteOn(60, velocity: 100, channel: 1)))
        queue.push(TimedMessage(frame: 200, message: .controlChange(7, value: 40, channel: 1)))
        queue.push(TimedMessage(frame: 90_000, message: .noteOn(64, velocity: 100, channel: 1)))   // stamped ahead
        renderer.events.push(TimedMessage(frame: 50, message: .noteOn(62, velocity: 100, channel: 4)))
        renderer.events.push(TimedMessage(frame: 60, message: .programChange(12, channel: 4)))
        renderer.events.push(TimedMessage(frame: 70, message: .controlChange(64, value: 127, channel: 4)))
        renderer.events.push(TimedMessage(frame: 80_000, message: .controlChange(1, value: 9, channel: 4)))   // stamped ahead
        let dropped = renderer.drainWithoutSound()
        #expect(dropped == 3)
        #expect(renderer.sampleTime == 0)
        #expect(instrument.position == 0)
        #expect(renderer.events.count == 0 && queue.count == 0)
        #expect(!instrument.received.contains { $0.message.isNoteOn })
        #expect(instrument.received.map(\.message) == [.programChange(12, channel: 4), .controlChange(64, value: 127, channel: 4),
                                                       .controlChange(1, value: 9, channel: 4), .controlChange(7, value: 40, channel: 1)])
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 512)
        defer { output.deallocate() }
        for _ in 0..<400 { renderer.render(frames: 256, into: output) }   // past the frames stamped ahead
        #expect(!instrument.received.contains { $0.message.isNoteOn })
        _ = plugins
    }

    /// The chord's notes reach the instrument at the frame its key came in
    /// (mid-block), on each of the zone's channels, and end at the key's release.
    @Test func chord_playsAtTheKeysFrame_onEveryDestination() throws {
        let instrument = RecordingInstrument()
        let (renderer, plugins) = try Self.renderer([Self.x42 + "midichord"], channels: [2, 5], instrument: instrument, maxFrames: 256)
        let queue = renderer.midiEffectQueues[0]
        queue.push(TimedMessage(frame: 1000, message: .noteOn(60, velocity: 100, channel: 1)))
        queue.push(TimedMessage(frame: 5000, message: .noteOff(60, channel: 1)))
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 512)
        defer { output.deallocate() }
        for _ in 0..<30 { renderer.render(frames: 256, into: output) }
        let ons = instrument.received.filter { $0.message.isNoteOn }
        let offs = instrument.received.filter { !$0.message.isNoteOn && $0.message.kind & 0xE0 == 0x80 }
        let describe = instrument.received.map { "\($0.frame): \($0.message)" }
        // At its defaults (C major; prime, 3rd, 5th and octave on): C E G C.
        #expect(ons.count == 8 && ons.allSatisfy { $0.frame == 1000 }, "\(describe)")
        #expect(Set(ons.map { "\($0.message.channel):\($0.message.data1)" })
                == ["1:60", "1:64", "1:67", "1:72", "4:60", "4:64", "4:67", "4:72"])
        #expect(offs.count == 8 && offs.allSatisfy { $0.frame == 5000 }, "\(describe)")
        withExtendedLifetime(plugins) {}
    }

    /// Chord then N-Tap Delay on FluidSynth, keys every 40 blocks and the
    /// chord's scale moved every 10: no heap call in 1,000 blocks, and sound.
    @Test func renderLoop_withAMIDIEffectChain_allocatesNothing() throws {
        let synth = try Synth(settings: Settings.forRendering(sampleRate: 48_000))
        try synth.setReverb(on: false)
        try synth.setChorus(on: false)
        let font = try synth.loadSoundFont(at: timGM)
        defer { withExtendedLifetime(font) {} }
        let (renderer, plugins) = try Self.renderer([Self.x42 + "midichord", Self.x42 + "ntapdelay"], channels: [1],
                                                    instrument: FluidSynthInstrument(synth: synth), maxFrames: 512)
        let queue = renderer.midiEffectQueues[0]
        let scale = try #require(ParameterAddress("fx.live.1.scale"))
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1024)
        defer { output.deallocate() }
        // Steady state: a first block and a first note may make runtime metadata (once per process).
        queue.push(.now(.noteOn(48, velocity: 100, channel: 0)))
        renderer.render(frames: 512, into: output)
        queue.push(.now(.noteOff(48, channel: 0)))
        renderer.render(frames: 512, into: output)
        var blocks = 2, calls: Int64 = 0, sent = 0
        while blocks < 1_000 {
            let frame = renderer.sampleTime + 100
            if blocks % 10 == 0 { renderer.parameters.set(scale, Double(blocks % 120) / 10) }
            carillon_allocations_arm()
            if blocks % 40 == 0 { sent += queue.push(TimedMessage(frame: frame, message: .noteOn(UInt8(48 + blocks % 24), velocity: 100, channel: 0))) ? 1 : 0 }
            if blocks % 40 == 20 { queue.push(TimedMessage(frame: frame, message: .noteOff(UInt8(48 + (blocks - 20) % 24), channel: 0))) }
            renderer.render(frames: 512, into: output)
            calls += carillon_allocations_disarm()
            blocks += 1
        }
        print("real-time rule: \(blocks) blocks of 512 frames with a MIDI effect chain (chord, n-tap delay): \(calls) heap calls")
        #expect(calls == 0)
        #expect(sent == 24)
        #expect(renderer.peak > 0.01)
        #expect(renderer.fullEffectBlocks == 0)
        withExtendedLifetime(plugins) {}
    }

    /// `--plugin-state DIR`: a chain's plugin states are written as
    /// `fx.ZONE.K.ttl` and come back in the next session as start values, which the plugin plays.
    @Test func pluginState_ofAMIDIEffect_savedAndRestored() throws {
        let dir = NSTemporaryDirectory() + "carillon-fx-state-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let spec = MIDIEffectSpec(zone: "State", uris: [Self.x42 + "miditranspose"], destinations: [.channel(Channel(0))])
        _ = try PluginHost(instruments: [], inserts: [], midiEffects: [spec])   // the rows, so the name below exists
        let transpose = try #require(ParameterAddress("fx.state.1.transpose"))
        var options = HostOptions()
        options.pluginState = dir
        func session(set: Double? = nil) throws -> (ControlHub, PluginHost, Renderer, RecordingInstrument) {
            let assembly = HostAssembly(options: options, midiEffects: [spec])
            let plugins = try #require(try assembly.makePluginHost())
            let hub = assembly.makeHub(mapping: nil, plugins: plugins)
            let instrument = RecordingInstrument()
            let renderer = try assembly.makeRenderer(instrument: instrument, tracks: [], sampleRate: 48_000, maxFrames: 256,
                                                     plugins: plugins, offline: false)
            assembly.connect(hub, to: renderer, events: nil, transport: nil)
            if let set { #expect(hub.set(transpose, to: set)) }
            renderer.midiEffectQueues[0].push(TimedMessage(frame: 300, message: .noteOn(60, velocity: 100, channel: 0)))
            let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 512)
            defer { output.deallocate() }
            for _ in 0..<4 { renderer.render(frames: 256, into: output) }
            return (hub, plugins, renderer, instrument)
        }
        let (_, plugins, renderer, first) = try session(set: 7)
        #expect(first.received.map(\.message.data1) == [67])
        let files = try withExtendedLifetime(renderer) { try plugins.saveStates() }
        #expect(files == ["\(dir)/fx.state.1.ttl"])
        let text = try String(contentsOfFile: "\(dir)/fx.state.1.ttl", encoding: .utf8)
        #expect(text.contains("lv2:symbol \"transpose\"") && text.contains("pset:value 7"), "\(text)")
        let (hub, _, _, second) = try session()
        #expect(hub.value(of: transpose) == 7)
        #expect(second.received.map(\.message.data1) == [67] && second.received.first?.frame == 300)
    }

    /// A rig of two scenes switched by program change on channel 16: the first
    /// (`firstNamed`) has zone FX to channel 2 through x42's `plugin`, the second
    /// ("Plain") zone Plain to channel 3.
    static func twoScenes(firstNamed name: String, plugin: String) -> String {
        """
        controls:
          - { name: Scene, kind: selector, source: { program-change: true, channel: 16 }, values: [0, 1], targets: [scene.select] }
        scenes:
          - name: \(name)
            zones:
              - { name: FX, to: 2, midi-fx: ["\(x42)\(plugin)"] }
          - name: Plain
            zones:
              - { name: Plain, to: 3 }
        """
    }

    /// Live, end to end but for the ports: the keyboard's way (`KeyboardRouting`)
    /// into the render thread's chain. Note Toggle keeps D4 on after its key is
    /// up; switching to a scene without the zone ends it (All Notes Off into the
    /// chain, which sends the note-off); a held C4 ends at its release after the switch.
    @Test func keyboardRouting_sceneSwitchLive_releasesWhatTheChainHolds() throws {
        let mapping = try ControlMapping.parse(yaml: Self.twoScenes(firstNamed: "Toggle", plugin: "notetoggle"), file: "live.yaml")
        let specs = try MIDIEffectSpec.all(in: mapping)
        #expect(specs.map(\.key) == ["fx.toggle.fx"])
        let assembly = HostAssembly(options: HostOptions(), midiEffects: specs)
        let plugins = try #require(try assembly.makePluginHost())
        let hub = assembly.makeHub(mapping: mapping, plugins: plugins)
        let instrument = RecordingInstrument()
        let renderer = try assembly.makeRenderer(instrument: instrument, tracks: [], sampleRate: 48_000, maxFrames: 256,
                                                 plugins: plugins, offline: false)
        let events = EventQueueProducer(renderer.events, effects: renderer.midiEffectQueues)
        let keyboard = KeyboardRouting(hub: hub, events: events, effects: plugins.midiEffects)
        keyboard.start()
        defer { keyboard.stop() }
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 512)
        defer { output.deallocate() }
        func blocks(_ n: Int) { for _ in 0..<n { renderer.render(frames: 256, into: output) } }
        func play(_ message: MIDIMessage) { keyboard.route(message, from: 1, at: .afterLast); blocks(2) }
        play(.noteOn(62, velocity: 100, channel: 0))
        play(.noteOff(62, channel: 0))        // toggled on: the plugin keeps it
        play(.noteOn(60, velocity: 100, channel: 0))   // held across the switch
        let notes = { instrument.received.filter { $0.message.kind == 0x90 || $0.message.kind == 0x80 }.map { "\($0.message)" } }
        #expect(notes() == ["91 3E 64", "91 3C 64"])
        play(.programChange(1, channel: 15))  // scene Plain: the chain still holds C4's key
        #expect(notes() == ["91 3E 64", "91 3C 64"])
        play(.noteOff(60, channel: 0))        // C4's note-off into the chain (toggle: kept), then All Notes Off: both end
        #expect(Set(notes().suffix(2)) == ["81 3E 00", "81 3C 00"] && notes().count == 4, "\(notes())")
        play(.noteOn(64, velocity: 100, channel: 0))   // the new scene: plain, on channel 3
        #expect(notes().last == "92 40 64")
        #expect(keyboard.heldNotes == 1)
        withExtendedLifetime(plugins) {}
    }

    /// A keyboard that disconnects: what the chain holds ends (Note Toggle's note
    /// on after its key was up), and so does a key still held — at the session's end too.
    @Test func keyboardRouting_sourceDisconnects_releasesWhatTheChainHolds() throws {
        let mapping = try ControlMapping.parse(yaml: """
        zones:
          - { name: FX, to: 5, midi-fx: ["\(Self.x42)notetoggle"] }
        """, file: "disconnect.yaml")
        let assembly = HostAssembly(options: HostOptions(), midiEffects: try MIDIEffectSpec.all(in: mapping))
        let plugins = try #require(try assembly.makePluginHost())
        let hub = assembly.makeHub(mapping: mapping, plugins: plugins)
        let instrument = RecordingInstrument()
        let renderer = try assembly.makeRenderer(instrument: instrument, tracks: [], sampleRate: 48_000, maxFrames: 256,
                                                 plugins: plugins, offline: false)
        let keyboard = KeyboardRouting(hub: hub, events: EventQueueProducer(renderer.events, effects: renderer.midiEffectQueues),
                                       effects: plugins.midiEffects)
        keyboard.start()
        defer { keyboard.stop() }
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 512)
        defer { output.deallocate() }
        func blocks(_ n: Int) { for _ in 0..<n { renderer.render(frames: 256, into: output) } }
        let notes = { instrument.received.filter { $0.message.kind == 0x90 || $0.message.kind == 0x80 }.map { "\($0.message)" } }
        keyboard.route(.noteOn(62, velocity: 100, channel: 0), from: 1, at: .afterLast)
        keyboard.route(.noteOff(62, channel: 0), from: 1, at: .afterLast)
        keyboard.route(.noteOn(64, velocity: 100, channel: 0), from: 1, at: .afterLast)
        blocks(2)
        #expect(notes() == ["94 3E 64", "94 40 64"])
        keyboard.releaseAll(source: 1)
        blocks(2)
        #expect(Set(notes().dropFirst(2)) == ["84 3E 00", "84 40 00"] && notes().count == 4, "\(notes())")
        // The session's end: nothing left to release, nothing sent twice.
        keyboard.route(.noteOn(65, velocity: 100, channel: 0), from: 2, at: .afterLast)
        keyboard.releaseEverything()
        blocks(2)
        #expect(notes().suffix(2) == ["94 41 64", "84 41 00"] && notes().count == 6, "\(notes())")
        withExtendedLifetime(plugins) {}
    }
}

/// A zone with `midi-fx` that sends to an external port as well as a channel:
/// the chain's output reaches both — the port's through the queue the
/// control loop drains (`KeyboardRouting.sendEffectPortMessages`), never sent
/// from the render thread — and what the chain ends (a key's release, a
/// disconnect) ends on the port too.
@Suite(.serialized) struct MIDIEffectPortTests {
    /// An `ExternalMIDIOutput` that keeps what it is sent, and from which thread.
    final class PortLog: ExternalMIDIOutput, @unchecked Sendable {
        private let lock = NSLock()
        private var sent: [String] = []
        private(set) var prepared: [String] = []
        var lines: [String] { lock.withLock { sent } }
        func prepare(portNames names: [String]) { lock.withLock { prepared += names } }
        func send(_ message: MIDIMessage, portName name: String) {
            let c = ChannelMessage(message).map { "\($0)" } ?? "?"
            lock.withLock { sent.append("\(name): \(c)") }
        }
    }

    @Test func chainToAPort_sendsThere_andItsNotesEndThere() throws {
        let x42 = MIDIEffectRenderTests.x42
        let mapping = try ControlMapping.parse(yaml: """
        zones:
          - { name: Chords, keys: C-1..B5, to: [2, { port: "Synth", channel: 5 }], midi-fx: ["\(x42)midichord"] }
          - { name: Toggle, keys: C6..G9, to: { port: "Synth", channel: 6 }, midi-fx: ["\(x42)notetoggle"] }
        """, file: "ports.yaml")
        let specs = try MIDIEffectSpec.all(in: mapping)
        #expect(specs.map(\.ports) == [[.init(name: "Synth", channel: Channel(4))], [.init(name: "Synth", channel: Channel(5))]])
        let assembly = HostAssembly(options: HostOptions(), midiEffects: specs)
        let plugins = try #require(try assembly.makePluginHost())
        let hub = assembly.makeHub(mapping: mapping, plugins: plugins)
        let instrument = MIDIEffectRenderTests.RecordingInstrument()
        let renderer = try assembly.makeRenderer(instrument: instrument, tracks: [], sampleRate: 48_000, maxFrames: 256,
                                                 plugins: plugins, offline: false)
        let port = PortLog()
        let keyboard = KeyboardRouting(hub: hub, events: EventQueueProducer(renderer.events, effects: renderer.midiEffectQueues),
                                       external: port, effects: plugins.midiEffects)
        keyboard.start()
        defer { keyboard.stop() }
        #expect(port.prepared == ["Synth"] && keyboard.sendsEffectsToPorts)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 512)
        defer { output.deallocate() }
        var heapCalls: Int64 = 0
        func play(_ message: MIDIMessage?) {
            if let message { keyboard.route(message, from: 1, at: .afterLast) }
            for _ in 0..<2 {
                carillon_allocations_arm()
                renderer.render(frames: 256, into: output)
                heapCalls += carillon_allocations_disarm()
            }
        }
        let notes = { instrument.received.filter { $0.message.kind == 0x90 || $0.message.kind == 0x80 }.map { "\($0.message)" } }

        play(.noteOn(60, velocity: 100, channel: 0))
        #expect(port.lines.isEmpty, "nothing is sent from the render thread")
        keyboard.sendEffectPortMessages(from: plugins.effectPorts)
        #expect(Set(port.lines) == ["Synth: 94 3C 64", "Synth: 94 40 64", "Synth: 94 43 64", "Synth: 94 48 64"], "\(port.lines)")
        #expect(Set(notes()) == ["91 3C 64", "91 40 64", "91 43 64", "91 48 64"], "\(notes())")
        play(.noteOff(60, channel: 0))
        keyboard.sendEffectPortMessages(from: plugins.effectPorts)
        #expect(Set(port.lines.suffix(4)) == ["Synth: 84 3C 00", "Synth: 84 40 00", "Synth: 84 43 00", "Synth: 84 48 00"], "\(port.lines)")

        // Toggled on by a key of a source that then disconnects: its note-off reaches the port.
        play(.noteOn(86, velocity: 90, channel: 0))
        play(.noteOff(86, channel: 0))
        keyboard.sendEffectPortMessages(from: plugins.effectPorts)
        #expect(port.lines.last == "Synth: 95 56 5A", "\(port.lines)")
        keyboard.releaseAll(source: 1)
        play(nil)
        keyboard.sendEffectPortMessages(from: plugins.effectPorts)
        // The release's All Notes Off passes the plugins to the port's channels, then the chain's own note-off.
        #expect(port.lines.suffix(3) == ["Synth: B4 7B 00", "Synth: B5 7B 00", "Synth: 85 56 00"], "\(port.lines)")
        #expect(port.lines.count == 12 && plugins.effectPorts.dropped == 0, "\(port.lines)")
        #expect(heapCalls == 0, "the render thread made \(heapCalls) heap calls")
        withExtendedLifetime(plugins) {}
    }
}
