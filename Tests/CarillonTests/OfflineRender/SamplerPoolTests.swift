import Testing
import Foundation
import Sampling
import OfflineRender
import CAllocationCounter
import Engine
import FluidSynth
import SoundFile

let fluidR3 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"

/// The parallel render of one piece (`SamplerPool`): the same sound as one
/// synth, the same bytes run to run, and a block loop that never allocates.
@Suite(.serialized) struct SamplerPoolTests {
    /// Real General MIDI files, all with drums (channel 10), melodic leads and chords.
    static let files = ["ultimate_run.mid", "train_filled_with_cash.mid", "chuggachugga.mid", "harp_harmony.mid"]

    static func render(_ file: String, threads: Int, to path: String, effects: Bool = true) throws -> RenderJob.Summary {
        var options = RenderJob.Options()
        options.threads = threads
        options.host.sampler.reverb = effects
        options.host.sampler.chorus = effects
        let job = try RenderJob(soundFont: fluidR3, options: options)
        return try job.render(input: "\(openmsx)/\(file)", to: .file(path, format: .wav, encoding: .float32))
    }

    /// Residual RMS over signal RMS, in dB, over the common length.
    static func residualDB(_ a: [Float], _ b: [Float]) -> Double {
        let n = min(a.count, b.count)
        var signal = 0.0, residual = 0.0
        for i in 0..<n {
            signal += Double(a[i]) * Double(a[i])
            let d = Double(a[i]) - Double(b[i])
            residual += d * d
        }
        return 10 * log10(residual / signal)
    }

    /// The two-synth mixdown against a one-synth render: reverb and chorus are
    /// linear and alike in both synths, every event reaches its synth at the
    /// same frame. What is left is FluidSynth's own voice-slot history: a
    /// voice's first 64 frames ramp its pan gain from what the slot's previous
    /// voice left (rvoice `current_amp`, FluidSynth 2.3 and later), and which
    /// slot a voice takes differs when the notes are spread (the test below
    /// shows the mix exact, −137 dB, where every slot is fresh). Measured
    /// here: −44…−53 dB (linns_basket: −65 dB); a defect (an event at another
    /// frame, a note-off on the wrong synth, a lost effect return) gives −20 dB or worse.
    @Test(arguments: files)
    func parallelRender_matchesOneSynth(file: String) throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let one = try Self.render(file, threads: 1, to: "\(dir)/one.wav")
        let two = try Self.render(file, threads: 2, to: "\(dir)/two.wav")
        let a = try AudioFileReader(path: "\(dir)/one.wav"), b = try AudioFileReader(path: "\(dir)/two.wav")
        let db = Self.residualDB(a.samples, b.samples)
        print("pool residual \(file): \(db) dB re signal RMS; \(one.duration) s vs \(two.duration) s; refused \(one.refusedSynthCalls) vs \(two.refusedSynthCalls)")
        #expect(abs(one.duration - two.duration) < 0.3)
        #expect(one.refusedSynthCalls == two.refusedSynthCalls)
        #expect(db < -40)
    }

    /// Where FluidSynth's voice-slot history plays no part (every voice starts
    /// in a fresh slot), the spread render matches one synth to rounding.
    @Test(arguments: [false, true])
    func parallelRender_freshVoices_matchesToRounding(effects: Bool) throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Chords on two channels and drums, all started at once: no voice slot used twice.
        var events: [Score.Event] = [
            .init(seconds: 0, message: .programChange(80, channel: 0)),
            .init(seconds: 0, message: .programChange(48, channel: 1)),
            .init(seconds: 0, message: .controlChange(91, value: 100, channel: 0)),
            .init(seconds: 0, message: .controlChange(93, value: 100, channel: 1)),
        ]
        for (i, key) in [48, 52, 55, 60, 64].enumerated() {
            events.append(.init(seconds: 0.01, message: .noteOn(UInt8(key), velocity: 100, channel: 0)))
            events.append(.init(seconds: 0.01, message: .noteOn(UInt8(key + 7), velocity: 90, channel: 1)))
            events.append(.init(seconds: 0.01, message: .noteOn(UInt8(36 + i), velocity: 110, channel: 9)))
        }
        for key in [48, 52, 55, 60, 64] {
            events.append(.init(seconds: 2, message: .noteOff(UInt8(key), channel: 0)))
            events.append(.init(seconds: 2.2, message: .noteOff(UInt8(key + 7), channel: 1)))
        }
        let score = Score(events: events, duration: 4)
        let one = try renderScore(score, threads: 1, effects: effects)
        let two = try renderScore(score, threads: 2, effects: effects)
        let db = Self.residualDB(one, two)
        print("pool residual, fresh voices, effects \(effects): \(db) dB")
        #expect(db < -100)
    }

    /// The same input gives the same samples, run to run (sums in a fixed
    /// order, notes placed from the synths' own deterministic state). Samples,
    /// not file bytes: libsndfile stamps a float WAV's PEAK chunk with the time.
    @Test func parallelRender_twice_isByteIdentical() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = try Self.render("ultimate_run.mid", threads: 2, to: "\(dir)/a.wav")
        _ = try Self.render("ultimate_run.mid", threads: 2, to: "\(dir)/b.wav")
        let a = try AudioFileReader(path: "\(dir)/a.wav"), b = try AudioFileReader(path: "\(dir)/b.wav")
        #expect(a.samples.count > 1_000_000)
        #expect(a.samples == b.samples)
        // The files too, byte for byte (no PEAK chunk with its time of writing).
        #expect(FileManager.default.contents(atPath: "\(dir)/a.wav") == FileManager.default.contents(atPath: "\(dir)/b.wav"))
    }

    /// The render thread and the workers make no heap call in steady state
    /// (effects off: see RealTimeRuleTests for libgomp's calls with effects on),
    /// in live-sized blocks and in the 2048-frame blocks `render` uses for a
    /// pool, block by block and with blocks in flight.
    @Test(arguments: [(512, 0), (2048, 0), (2048, 4)])
    func blockLoop_withPool_allocatesNothing(frames: Int, ahead: Int) throws {
        let score = try Score(contentsOf: "\(openmsx)/ultimate_run.mid")
        // Warm-up with the pool's own threads: one-time runtime metadata is process-wide.
        _ = try renderScore(Score(events: Array(score.events.prefix(200)), duration: 1), threads: 2)

        let members = try (0..<2).map { _ in try poolMember(effects: false) }
        let pool = try SamplerPool(members: members.map(\.0), keepingAlive: members.map(\.1),
                                   blocksInFlight: ahead, startsWorkers: false)
        let workerCalls = [Counter(), Counter()]
        let finished = DispatchSemaphore(value: 0)
        for w in 0..<2 {
            Thread {
                carillon_allocations_arm()
                pool.serveWorker(w)
                workerCalls[w].value = carillon_allocations_disarm()
                finished.signal()
            }.start()
        }
        for m in members { _ = try m.0.pinPresets(selectedBy: score) }
        pool.reset()
        let renderer = Renderer(instrument: pool)
        renderer.prepare(sampleRate: 44_100, maxFrames: frames)
        renderer.schedule(score)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * frames)
        defer { output.deallocate() }
        renderer.render(frames: frames, into: output)
        // 23 s of the piece whatever the block size.
        let limit = 2_000 * 512 / frames
        var blocks = 1, calls: Int64 = 0, peak: Float = 0
        while blocks < limit || renderer.pendingBlocks > 0 {
            carillon_allocations_arm()
            if blocks < limit && renderer.pendingBlocks <= ahead {
                renderer.dispatch(frames: frames)
                if blocks % (limit / 40) == 0 { renderer.events.push(.now(.controlChange(10, value: 64, channel: 1))) }
                blocks += 1
            } else {
                renderer.collect(into: output)
                peak = max(peak, renderer.blockPeak)
            }
            calls += carillon_allocations_disarm()
        }
        pool.stopWorkers()
        finished.wait(); finished.wait()
        print("real-time rule, pool of 2, \(ahead) blocks ahead: \(blocks) blocks of \(frames) frames; render thread \(calls), workers \(workerCalls[0].value), \(workerCalls[1].value) heap calls")
        #expect(blocks == limit)
        #expect(peak > 0.01)
        #expect(calls == 0)
        #expect(workerCalls[0].value == 0)
        #expect(workerCalls[1].value == 0)
    }

    /// Blocks in flight change only where notes are placed (from the synths'
    /// state a few blocks back): the same input still gives the same bytes,
    /// and the mixdown still matches one synth.
    @Test func blocksInFlight_renderRepeatablyAndMatchOneSynth() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func render(threads: Int, ahead: Int, to path: String) throws -> [Float] {
            var options = RenderJob.Options()
            options.threads = threads
            options.blocksInFlight = ahead
            let job = try RenderJob(soundFont: fluidR3, options: options)
            _ = try job.render(input: "\(openmsx)/chuggachugga.mid", to: .file(path, format: .wav, encoding: .float32))
            return try AudioFileReader(path: path).samples
        }
        let one = try render(threads: 1, ahead: 0, to: "\(dir)/one.wav")
        let a = try render(threads: 2, ahead: 6, to: "\(dir)/a.wav")
        let b = try render(threads: 2, ahead: 6, to: "\(dir)/b.wav")
        let lockstep = try render(threads: 2, ahead: 0, to: "\(dir)/c.wav")
        #expect(a == b)
        // The tail ends where the output falls silent: within a block of the one-synth render's end.
        #expect(abs(a.count - one.count) <= 2 * 4096)
        let db = Self.residualDB(one, a), lockstepDB = Self.residualDB(one, lockstep)
        print("pool residual, 6 blocks ahead: \(db) dB; block by block: \(lockstepDB) dB")
        #expect(db < -40)
    }

    private func poolMember(effects: Bool) throws -> (FluidSynthInstrument, SoundFont) {
        let settings = try Settings.forRendering(sampleRate: 44_100)
        try settings.set("synth.dynamic-sample-loading", true)
        let synth = try Synth(settings: settings)
        try synth.setReverb(on: effects)
        try synth.setChorus(on: effects)
        let font = try synth.loadSoundFont(at: timGM)
        return (FluidSynthInstrument(synth: synth), font)
    }

    private func renderScore(_ score: Score, threads: Int, effects: Bool = true) throws -> [Float] {
        let members = try (0..<threads).map { _ in try poolMember(effects: effects) }
        let instrument: any Instrument
        if threads == 1 {
            instrument = members[0].0
            _ = members[0].0.synth.systemReset()
        } else {
            let pool = try SamplerPool(members: members.map(\.0), keepingAlive: members.map(\.1))
            pool.reset()
            instrument = pool
        }
        let renderer = Renderer(instrument: instrument)
        renderer.prepare(sampleRate: 44_100, maxFrames: 512)
        renderer.schedule(score)
        var out: [Float] = []
        let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: 1024)
        defer { block.deallocate() }
        while !renderer.isScoreFinished {
            renderer.render(frames: 512, into: block)
            out.append(contentsOf: block)
        }
        withExtendedLifetime(members) {}
        return out
    }
}

final class Counter: @unchecked Sendable { var value: Int64 = -1 }
