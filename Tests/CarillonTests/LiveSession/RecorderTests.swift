import ALSA
import CAllocationCounter
import Foundation
import Hosting
import LiveSession
import MIDI
import SoundFile
import Synchronization
import Testing
import Threads

/// Block `n`'s sample `k` (left; right is its negative): exact in 32-bit float, distinct for 65536 frames.
private func rampValue(block n: Int, frame k: Int, blockFrames: Int) -> Float {
    Float((n * blockFrames + k) % 65_536) / 65_536
}

/// Pushes `blocks` ramp blocks from a thread of its own (the output thread's
/// role), pausing `pauseMicros` after each. Returns the pushes refused and the heap calls made while pushing.
private func flood(_ recorder: Recorder, blocks: Int, pauseMicros: UInt32) throws -> (refused: Int, allocations: Int64) {
    let frames = recorder.blockFrames
    let result = Mutex<(Int, Int64)>((0, 0))
    let thread = try JoinableThread(name: "test-output") {
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: 2 * frames)
        defer { buffer.deallocate() }
        var refused = 0
        carillon_allocations_arm()
        for n in 0..<blocks {
            for k in 0..<frames {
                let v = rampValue(block: n, frame: k, blockFrames: frames)
                buffer[2 * k] = v; buffer[2 * k + 1] = -v
            }
            if !recorder.push(UnsafeBufferPointer(buffer), frames: frames) { refused += 1 }
            if pauseMicros > 0 { usleep(pauseMicros) }
        }
        let allocations = carillon_allocations_disarm()
        result.withLock { $0 = (refused, allocations) }
    }
    thread.join()
    return result.withLock { $0 }
}

@Suite(.serialized) struct RecorderTests {
    @Test func flood_whileTheWriterKeepsUp_losesNoBlock() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/out.wav"
        let blocks = 4_000   // 21 s of audio at 48 kHz, pushed at ~20× real time
        let recorder = try Recorder(path: path, format: .wav, encoding: .float32, sampleRate: 48_000, blockFrames: 256)
        try recorder.start()
        let pushed = try flood(recorder, blocks: blocks, pauseMicros: 250)
        try recorder.finish()
        #expect(pushed.refused == 0 && recorder.droppedBlocks == 0 && recorder.writtenBlocks == blocks)
        #expect(pushed.allocations == 0)   // push is real-time safe
        let read = try AudioFileReader(path: path)
        #expect(read.frames == blocks * 256)
        // Every block, in order, sample for sample.
        var mismatches = 0
        for i in 0..<read.frames where read.samples[2 * i] != rampValue(block: 0, frame: i, blockFrames: 256)
            || read.samples[2 * i + 1] != -read.samples[2 * i] { mismatches += 1 }
        #expect(mismatches == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["out.wav"])
    }

    @Test func stalledWriter_countsEveryDroppedBlock_andKeepsTheRest() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/out.flac"
        let recorder = try Recorder(path: path, format: .flac, sampleRate: 48_000, blockFrames: 256, seconds: 0.1)
        // The writer is not started: it is stalled, so the ring fills and then refuses.
        let pushed = try flood(recorder, blocks: 100, pauseMicros: 0)
        #expect(recorder.capacity == 19)   // 0.1 s of 256-frame blocks at 48 kHz, rounded up
        #expect(pushed.refused == 100 - recorder.capacity && recorder.droppedBlocks == 100 - recorder.capacity)
        try recorder.start()
        try recorder.finish()
        #expect(recorder.writtenBlocks == recorder.capacity)
        let read = try AudioFileReader(path: path)
        #expect(read.frames == recorder.capacity * 256)
        // What was kept is the first blocks, intact (16-bit FLAC: within a step).
        #expect(abs(read.samples[2 * 4000] - rampValue(block: 0, frame: 4000, blockFrames: 256)) < 1e-4)
    }

    @Test func discard_orAnUnfinishedRecording_leavesNoFile() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let recorder = try Recorder(path: "\(dir)/x.wav", format: .wav, sampleRate: 48_000, blockFrames: 64)
        try recorder.start()
        _ = try flood(recorder, blocks: 10, pauseMicros: 0)
        recorder.discard()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }

    @Test func wrongPathOrRate_failsAtOnce() {
        #expect(throws: SoundFileError.self) {
            try Recorder(path: "/nonexistent-dir/x.wav", format: .wav, sampleRate: 48_000, blockFrames: 256)
        }
        #expect(throws: SoundFileError.unsupportedRate(format: .opus, rate: 44_100)) {
            try Recorder(path: "/tmp/x.opus", format: .opus, sampleRate: 44_100, blockFrames: 256)
        }
    }
}

@Suite(.serialized) struct MIDIRecorderTests {
    /// Messages fed through the no-audio host at known times come back from the
    /// file at the same times (within 1 ms ticks plus scheduling jitter) and in the same order.
    @Test func recordMIDI_withoutAudio_keepsTheRealTiming() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/in.mid"
        var options = LiveHost.Options()
        options.audio = false
        options.clientName = "carillon-record-test"
        options.recordMIDI = path
        let host = try LiveHost(soundFont: nil, mapping: nil, options: options)
        try host.start()
        let t0 = OutputClock.now()
        let plan: [(Double, MIDIMessage)] = [
            (0.10, .noteOn(60, velocity: 100, channel: 0)),
            (0.25, .noteOn(64, velocity: 90, channel: 0)),
            (0.25, .cc(64, value: 127, channel: 0)),
            (0.60, .noteOff(60, channel: 0)),
            (0.61, .noteOff(64, velocity: 40, channel: 0)),
            (0.90, .pitchBend(9000, channel: 1)),
        ]
        var sent: [Double] = []
        for (at, message) in plan {
            let target = t0 + UInt64(at * 1e9)
            while OutputClock.now() < target { usleep(200) }
            sent.append(Double(OutputClock.now() - t0) / 1e9)
            host.receive(message)
        }
        usleep(100_000)
        host.stop()
        #expect(host.takeLog().contains { $0.contains("recorded MIDI \(path): 6 messages") })

        let file = try StandardMIDIFile(bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(file.format == .singleTrack && file.division == .ticksPerQuarterNote(480))
        let events = file.tracks[0].events.compactMap { e -> (UInt64, MIDIMessage)? in
            if case .midi(let m) = e.event { (e.tick, m) } else { nil }
        }
        #expect(events.map(\.1) == plan.map(\.1))
        // 960 ticks a second at 120 bpm: compare the gaps (time zero is the host's start, before t0).
        let first = Double(events[0].0) / 960
        for (i, (tick, _)) in events.enumerated() {
            let recorded = Double(tick) / 960 - first, expected = sent[i] - sent[0]
            #expect(abs(recorded - expected) < 0.003, "event \(i): \(recorded) s, sent at \(expected) s")
        }
        // The tempo is in the file, so any player replays it at the same times.
        #expect(file.tracks[0].events.first?.event == .meta(.tempo(microsecondsPerQuarterNote: 500_000)))
    }

    /// A tick is a frame at the output's rate: the SMF's division and tempo for each rate.
    @Test func frameDivision_oneTickPerFrame_within15Bits() {
        let cases: [(Int, UInt16, UInt32)] = [(8_000, 8_000, 1_000_000), (22_050, 22_050, 1_000_000), (44_100, 22_050, 500_000),
                                              (48_000, 24_000, 500_000), (96_000, 24_000, 250_000), (192_000, 24_000, 125_000)]
        for (rate, ticks, microseconds) in cases {
            let d = MIDIRecorder.frameDivision(sampleRate: rate)
            #expect(d?.ticksPerQuarterNote == ticks && d?.microsecondsPerQuarterNote == microseconds, "\(rate): \(String(describing: d))")
            if let d { #expect(Int(d.ticksPerQuarterNote) * 1_000_000 == rate * Int(d.microsecondsPerQuarterNote)) }
        }
        #expect(MIDIRecorder.frameDivision(sampleRate: 40_001) == nil)   // odd and over 15 bits: no tick is one frame
        #expect(MIDIRecorder.frameDivision(sampleRate: 0) == nil)
    }

    /// Messages recorded at frames come back from the file, read as any MIDI file is
    /// (its tempo map, seconds × rate, rounded as the sequencer does), at those frames,
    /// up to an hour in and in the order they were played at one frame.
    @Test(arguments: [22_050, 44_100, 48_000, 96_000])
    func framesRecorded_readBackAtTheSameFrames(rate: Int) throws {
        let recorder = MIDIRecorder(path: "/dev/null", sampleRate: rate)
        let frames: [UInt64] = [0, 1, 63, 64, 12_345, 12_345, 1_000_003, UInt64(rate) * 3_600 + 17]
        let messages: [MIDIMessage] = frames.indices.map { .noteOn(UInt7(exactly: 40 + $0)!, velocity: 100, channel: 0) }
        // Recorded out of order (two input threads), except the two at one frame.
        for i in [1, 0, 2, 4, 5, 3, 7, 6] { recorder.record(messages[i], at: 0, frame: frames[i]) }
        let file = try StandardMIDIFile(bytes: recorder.file().serialized())
        var read: [(UInt64, MIDIMessage)] = []
        file.forEachTimedEvent { timed in
            if case .midi(let m) = timed.event { read.append((UInt64((timed.seconds * Double(rate)).rounded()), m)) }
        }
        #expect(read.map(\.0) == frames)
        #expect(read.map(\.1) == messages)
    }

    /// One message without a frame (no clock placed it): the whole file keeps real time at 480 ticks a quarter.
    @Test func aMessageWithoutAFrame_theFileIsInMilliseconds() throws {
        let recorder = MIDIRecorder(path: "/dev/null", sampleRate: 48_000)
        let t0 = OutputClock.now()
        recorder.begin()
        recorder.record(.noteOn(60, velocity: 100, channel: 0), at: t0 + 500_000_000, frame: 24_000)
        recorder.record(.noteOff(60, channel: 0), at: t0 + 1_000_000_000)
        let file = recorder.file()
        #expect(file.division == .ticksPerQuarterNote(480))
        #expect(file.tracks[0].events.compactMap { if case .midi = $0.event { $0.tick } else { nil } }.count == 2)
    }

    @Test func unwritablePath_isLogged_notSilent() throws {
        var options = LiveHost.Options()
        options.audio = false
        options.clientName = "carillon-record-test"
        options.recordMIDI = "/nonexistent-dir/in.mid"
        let host = try LiveHost(soundFont: nil, mapping: nil, options: options)
        try host.start()
        host.receive(.noteOn(60, velocity: 100, channel: 0))
        host.stop()
        #expect(host.takeLog().contains { $0.hasPrefix("MIDI recording failed: cannot write /nonexistent-dir/in.mid") })
    }
}
