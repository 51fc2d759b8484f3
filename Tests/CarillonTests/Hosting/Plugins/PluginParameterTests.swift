import MappingFiles
import Sampling
import Hosting
import Controls
import Engine
import Foundation
import LV2
import MIDI
import Parameters
import Testing

/// A plugin's controls as parameters like any other: a mapping names them
/// (checked with "did you mean"), a knob on a controller moves them through
/// the hub, and the plugin hears the value from the next block, as if it
/// had been set on the plugin itself.
@Suite struct PluginParameterTests {
    static let delay = "http://drobilla.net/plugins/mda/Delay"
    static let jx10 = "http://drobilla.net/plugins/mda/JX10"

    /// A click every 4,800 frames in every strip: something for a delay to repeat.
    final class Clicks: Instrument {
        let stripCount = 16
        private var frame = 0
        func prepare(sampleRate: Double, maxFrames: Int) { frame = 0 }
        func receive(_ message: ChannelMessage) {}
        func render(frames: Int, dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                    effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {
            for i in 0..<frames where (frame + i) % 4800 == 0 {
                dry[0]![i] += 0.5; dry[1]![i] += 0.25
            }
            frame += frames
        }
        func silence() {}
    }

    static let yaml = """
        controls:
          - name: Feedback
            kind: knob
            source: { cc: 20 }
            soft-takeover: false
            targets: [insert.master.1.feedback]
          - name: Cutoff
            kind: fader
            source: { cc: 21 }
            targets: [plugin.3.vcf_freq]
        """

    @Test func aKnob_movesTheInsertsControl_asSettingItOnThePluginDoes() throws {
        var options = HostOptions()
        options.inserts = [InsertSpec(strip: .master, uri: Self.delay)]
        options.instruments = [InstrumentSpec(channel: 2, uri: Self.jx10)]
        let assembly = HostAssembly(options: options)
        let plugins = try #require(try assembly.makePluginHost())
        #expect(plugins.parameters(instrument: options.instruments[0]).map(\.description).contains("plugin.3.vcf_freq"))
        let mapping = try ControlMapping.parse(yaml: Self.yaml, file: "m.yaml")
        let hub = assembly.makeHub(mapping: mapping)
        let info = ParameterRegistry.standard.info(for: try #require(ParameterAddress("insert.master.1.feedback")))
        #expect(info.range == 0...1 && info.defaultValue == Double(Float(0.7)) && info.kind == .continuous)
        #expect(info.address.drives == "MDA Delay, insert master: Feedback")

        let frames = 48_000, block = 480
        func render(feedback cc: UInt8?) throws -> [Float] {
            let renderer = try assembly.makeRenderer(instrument: Clicks(), tracks: [], sampleRate: 48_000, maxFrames: block,
                                                     plugins: plugins, offline: true)
            assembly.connect(hub, to: renderer, events: nil, transport: nil)
            if let cc { #expect(hub.receive(.cc(20, value: UInt7(cc), channel: 0))) }
            var out = [Float](repeating: 0, count: 2 * frames)
            out.withUnsafeMutableBufferPointer { all in
                for start in stride(from: 0, to: frames, by: block) {
                    renderer.render(frames: block, into: UnsafeMutableBufferPointer(rebasing: all[2 * start..<2 * (start + block)]))
                }
            }
            return out
        }
        let turned = try render(feedback: 127)
        #expect(hub.value(of: ParameterAddress("insert.master.1.feedback")!) == 1)

        // The same clicks through the plugin itself, feedback set on its port.
        let direct = try LV2Instance(world: plugins.world, uri: Self.delay, sampleRate: 48_000, maxFrames: block, urids: URIDMap())
        direct.setControl(at: try #require(direct.info.controls.firstIndex { $0.symbol == "feedback" }), to: 1)
        direct.activate()
        var expected: [Float] = []
        for start in stride(from: 0, to: frames, by: block) {
            for i in 0..<block {
                direct.audioInputs[0][i] = (start + i) % 4800 == 0 ? 0.5 : 0
                direct.audioInputs[1][i] = (start + i) % 4800 == 0 ? 0.25 : 0
            }
            direct.run(frames: block)
            for i in 0..<block { expected += [direct.audioOutputs[0][i], direct.audioOutputs[1][i]] }
        }
        let worst = zip(turned, expected).map { abs($0 - $1) }.max() ?? 1
        #expect(worst == 0 || 20 * log10(Double(worst)) <= -90, "the knob's render is \(worst) from the plugin's own")
        // And the knob did something: the render at the default feedback (0.7) is another.
        #expect(hub.set(ParameterAddress("insert.master.1.feedback")!, to: 0.7))
        let standard = try render(feedback: nil)
        #expect(zip(turned, standard).map { abs($0 - $1) }.max()! > 0.01)
    }

    /// `--plugin-state DIR`: a session's plugin states written at its end come
    /// back in the next: the saved control values as the parameters' start
    /// values (the hub shows them, the plugin plays them), `--set` still winning.
    @Test func pluginState_savedAndRestored_roundTrips() throws {
        let dir = NSTemporaryDirectory() + "carillon-state-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = HostOptions()
        options.inserts = [InsertSpec(strip: .master, uri: Self.delay)]
        options.instruments = [InstrumentSpec(channel: 2, uri: Self.jx10)]
        _ = try PluginHost(instruments: options.instruments, inserts: options.inserts)   // the rows, so the names below exist
        options.pluginState = dir
        let feedback = try #require(ParameterAddress("insert.master.1.feedback"))
        let cutoff = try #require(ParameterAddress("plugin.3.vcf_freq"))
        func session(_ options: HostOptions, set: [(ParameterAddress, Double)] = []) throws -> (ControlHub, [Float], PluginHost, Renderer) {
            let assembly = HostAssembly(options: options)
            let plugins = try #require(try assembly.makePluginHost())
            let hub = assembly.makeHub(mapping: nil, plugins: plugins)
            let renderer = try assembly.makeRenderer(instrument: Clicks(), tracks: [], sampleRate: 48_000, maxFrames: 480,
                                                     plugins: plugins, offline: true)
            assembly.connect(hub, to: renderer, events: nil, transport: nil)
            for (address, value) in set { #expect(hub.set(address, to: value)) }
            var out = [Float](repeating: 0, count: 2 * 48_000)
            out.withUnsafeMutableBufferPointer { all in
                for start in stride(from: 0, to: 48_000, by: 480) {
                    renderer.render(frames: 480, into: UnsafeMutableBufferPointer(rebasing: all[2 * start..<2 * (start + 480)]))
                }
            }
            return (hub, out, plugins, renderer)
        }
        // First session: no state yet; two controls moved, then the end writes both plugins' states.
        let (_, first, plugins, renderer) = try session(options, set: [(feedback, 0.35), (cutoff, 0.25)])
        let files = try withExtendedLifetime(renderer) { try plugins.saveStates() }   // the renderer owns the instances
        #expect(files.sorted() == ["\(dir)/insert.master.1.ttl", "\(dir)/plugin.3.ttl"])
        let text = try String(contentsOfFile: "\(dir)/insert.master.1.ttl", encoding: .utf8)
        #expect(text.contains("lv2:symbol \"feedback\"") && text.contains("pset:value 0.34999"), "\(text)")
        // Second session: the values come back as start values, and the plugin plays them.
        let (hub, second, _, _) = try session(options)
        #expect(abs(hub.value(of: feedback) - 0.35) < 1e-6 && abs(hub.value(of: cutoff) - 0.25) < 1e-6)
        #expect(second == first)
        // --set wins over the saved state.
        var overridden = options
        overridden.settings = [ParameterChange(feedback, 0.6)]
        let (hub3, _, _, _) = try session(overridden)
        #expect(abs(hub3.value(of: feedback) - 0.6) < 1e-6 && abs(hub3.value(of: cutoff) - 0.25) < 1e-6)
        // A file that is not a state is one clear error.
        try "not turtle".write(toFile: "\(dir)/insert.master.1.ttl", atomically: true, encoding: .utf8)
        #expect { _ = try HostAssembly(options: options).makePluginHost() } throws: {
            "\($0)".contains("insert.master.1.ttl is not a plugin state lilv can read")
        }
    }

    @Test func aMisspeltPluginControl_isAMappingError_withDidYouMean() throws {
        var options = HostOptions()
        options.inserts = [InsertSpec(strip: .master, uri: Self.delay)]
        _ = try HostAssembly(options: options).makePluginHost()
        let yaml = "controls:\n  - name: F\n    kind: knob\n    source: { cc: 20 }\n    targets: [insert.master.1.feedbak]\n"
        #expect { _ = try ControlMapping.parse(yaml: yaml, file: "m.yaml") } throws: {
            let text = "\($0)"
            return text.contains("m.yaml:5:") && text.contains("insert.master.1.feedbak") && text.contains("insert.master.1.feedback")
        }
    }

    /// A state file written for another plugin (the insert was changed between
    /// sessions) is not restored into this one: said once, written over at the end.
    @Test func pluginState_ofAnotherPlugin_isNotRestored() throws {
        let dir = NSTemporaryDirectory() + "carillon-state-other-\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let before = try PluginHost(instruments: [], inserts: [InsertSpec(strip: .master, uri: Self.delay)], stateDirectory: dir)
        let insert = try before.makeInsert(0, sampleRate: 48_000, maxFrames: 256, offline: true, parameters: ParameterStore())
        #expect(try before.saveStates() == ["\(dir)/insert.master.1.ttl"])
        withExtendedLifetime(insert) {}
        let overdrive = "http://drobilla.net/plugins/mda/Overdrive"
        let after = try PluginHost(instruments: [], inserts: [InsertSpec(strip: .master, uri: overdrive)], stateDirectory: dir)
        #expect(after.notes == ["\(dir)/insert.master.1.ttl holds the state of \(Self.delay), not of \(overdrive) (insert.master.1): not restored, and written over at the end"])
        #expect(after.stateValues.isEmpty)
    }
}
