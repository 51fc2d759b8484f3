import Testing
import Sampling
import Hosting
import CAllocationCounter
import Engine
import FluidSynth
import Parameters

/// The block loop with the real FluidSynth sampler makes no heap call.
@Suite struct RealTimeRuleTests {
    /// Debian's libfluidsynth is built with OpenMP: its reverb/chorus pass runs in
    /// an `omp parallel` region (even with one thread), and libgomp frees a
    /// team structure on each. With effects off the loop must make no heap
    /// call at all; with effects on, every call it makes is libgomp's (the
    /// `fluidsynth` command line pays the same), which this test reports.
    @Test(arguments: [false, true])
    func renderLoop_withFluidSynth_allocatesNothing(effects: Bool) throws {
        let synth = try Synth(settings: Settings.forRendering(sampleRate: 44_100))
        try synth.setReverb(on: effects)
        try synth.setChorus(on: effects)
        let font = try synth.loadSoundFont(at: timGM)
        defer { withExtendedLifetime(font) {} }
        let instrument = FluidSynthInstrument(synth: synth)
        let renderer = Renderer(instrument: instrument)
        renderer.prepare(sampleRate: 44_100, maxFrames: 512)
        renderer.schedule(try Score(contentsOf: "\(openmsx)/train_filled_with_cash.mid"))
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1024)
        defer { output.deallocate() }
        // Steady state: a first block may instantiate Swift runtime metadata
        // (a one-time, process-wide cost, seen in debug builds).
        renderer.render(frames: 512, into: output)
        var blocks = 1, calls: Int64 = 0
        while !renderer.isScoreFinished && blocks < 3_000 {
            carillon_allocations_arm()
            renderer.render(frames: 512, into: output)
            if blocks % 50 == 0 { renderer.events.push(.now(.controlChange(10, value: 64, channel: 1))) }
            calls += carillon_allocations_disarm()
            blocks += 1
        }
        print("real-time rule: \(blocks) blocks of 512 frames with FluidSynth, effects \(effects ? "on" : "off"): \(calls) heap calls")
        #expect(blocks == 3_000)
        if !effects { #expect(calls == 0) }
    }

    /// An LV2 insert on the master (mda Delay) and LV2 instruments on channels
    /// 1 and 11 (mda Piano, EPiano: both play notes of the file) run in the same loop, their controls moved
    /// every 10 blocks: still no heap call.
    @Test func renderLoop_withLV2InstrumentsAndAMasterInsert_allocatesNothing() throws {
        let synth = try Synth(settings: Settings.forRendering(sampleRate: 44_100))
        try synth.setReverb(on: false)
        try synth.setChorus(on: false)
        let font = try synth.loadSoundFont(at: timGM)
        defer { withExtendedLifetime(font) {} }
        var options = HostOptions()
        options.inserts = [InsertSpec(strip: .master, uri: "http://drobilla.net/plugins/mda/Delay")]
        options.instruments = [InstrumentSpec(channel: 0, uri: "http://drobilla.net/plugins/mda/Piano"),
                               InstrumentSpec(channel: 10, uri: "http://drobilla.net/plugins/mda/EPiano")]
        let assembly = HostAssembly(options: options)
        let plugins = try assembly.makePluginHost()
        let renderer = try assembly.makeRenderer(instrument: FluidSynthInstrument(synth: synth), tracks: [], sampleRate: 44_100,
                                                 maxFrames: 512, plugins: plugins, offline: true)
        renderer.schedule(try Score(contentsOf: "\(openmsx)/train_filled_with_cash.mid"))
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1024)
        defer { output.deallocate() }
        renderer.render(frames: 512, into: output)
        let feedback = try #require(ParameterAddress("insert.master.1.feedback"))
        let hardness = try #require(ParameterAddress("plugin.11.hardness"))
        var blocks = 1, calls: Int64 = 0
        while blocks < 1_000 {
            if blocks % 10 == 0 {
                renderer.parameters.set(feedback, Double(blocks % 100) / 100)
                renderer.parameters.set(hardness, Double(blocks % 70) / 70)
            }
            carillon_allocations_arm()
            renderer.render(frames: 512, into: output)
            calls += carillon_allocations_disarm()
            blocks += 1
        }
        print("real-time rule: \(blocks) blocks of 512 frames with LV2 instruments and a master insert: \(calls) heap calls")
        #expect(calls == 0)
        #expect(renderer.peak > 0.01)
        withExtendedLifetime(plugins) {}
    }
}
