import CAllocationCounter
import Hosting
import Foundation
import SoundFile
import Testing

/// Writes `frames` frames made by `sample(frame, channel)` as float WAV.
private func writeFile(_ path: String, rate: Int, channels: Int, frames: Int, format: AudioFileFormat = .wav,
                       encoding: SampleEncoding? = .float32, _ sample: (Int, Int) -> Float) throws {
    let writer = try AudioFileWriter(path: path, format: format, encoding: encoding, sampleRate: rate, channels: channels)
    var buffer = [Float](repeating: 0, count: frames * channels)
    for i in 0..<frames { for c in 0..<channels { buffer[i * channels + c] = sample(i, c) } }
    try buffer.withUnsafeBufferPointer { try writer.write($0, frames: frames) }
    try writer.finish()
}

/// Plays `track` from the piece's start for `seconds` in blocks of `block`
/// frames (the position advancing as a renderer's would); returns left and right.
/// `paced`: one block per block's duration, as a live output calls it (the decoder gets real time to seek).
private func play(_ track: FileTrack, seconds: Double, block: Int = 512, paced: Bool = false,
                  positions: ((Int, Double) -> Double)? = nil) -> (left: [Float], right: [Float]) {
    let total = Int(seconds * Double(track.sampleRate))
    var left = [Float](repeating: 0, count: total + block), right = left
    var done = 0, position = 0.0
    while done < total {
        let p = positions?(done, position) ?? position
        left.withUnsafeMutableBufferPointer { l in
            right.withUnsafeMutableBufferPointer { r in
                track.render(frames: block, position: p, playing: true, left: l.baseAddress! + done, right: r.baseAddress! + done)
            }
        }
        position = p + Double(block) / Double(track.sampleRate)
        done += block
        if paced { usleep(UInt32(1_000_000 * block / track.sampleRate)) }
    }
    return (Array(left[..<total]), Array(right[..<total]))
}

/// Frequency from upward zero crossings, interpolated between samples.
private func frequency(_ x: ArraySlice<Float>, rate: Int) -> Double {
    var first: Double?, last = 0.0, count = 0
    var previous = x.first!
    for (i, v) in zip(x.indices, x).dropFirst() {
        if previous < 0 && v >= 0 {
            let t = Double(i - 1) + Double(-previous / (v - previous))
            if first == nil { first = t } else { count += 1 }
            last = t
        }
        previous = v
    }
    return Double(count) / ((last - first!) / Double(rate))
}

@Suite(.serialized) struct FileTrackTests {
    @Test func resampled48kTo44k_keepsPitchAndLength() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/sine48k.wav"
        let seconds = 3.0, hz = 1_000.0
        try writeFile(path, rate: 48_000, channels: 2, frames: Int(seconds * 48_000)) { i, _ in
            Float(0.5 * sin(2 * .pi * hz * Double(i) / 48_000))
        }
        let track = try FileTrack(path: path, sampleRate: 44_100, waitsForDecoder: true)
        #expect(track.fileRate == 48_000 && abs(track.duration - seconds) < 1e-9)
        let (left, right) = play(track, seconds: seconds + 0.5)
        #expect(track.underruns == 0 && track.seekGapFrames == 0)
        let measured = frequency(left[4_410..<(left.count - 30_000)], rate: 44_100)
        #expect(abs(measured - hz) < 0.05, "measured \(measured) Hz")
        // Length: the last sounding frame is the file's end at 44.1 kHz (within the filter's reach).
        let last = left.lastIndex { abs($0) > 1e-3 }!
        #expect(abs(last + 1 - Int(seconds * 44_100)) < 40, "last sounding frame \(last)")
        #expect(left == right)
        // Offline: the same render twice gives the same samples.
        let again = try FileTrack(path: path, sampleRate: 44_100, waitsForDecoder: true)
        #expect(play(again, seconds: seconds + 0.5).left == left)
        // A loop back to the start past the preroll (2 s): the second pass is the first, sample for sample.
        let looped = try FileTrack(path: path, sampleRate: 44_100, waitsForDecoder: true)
        let pass = 216 * 512   // 2.51 s, past the preroll's 2 s
        let (twice, _) = play(looped, seconds: 4.5) { done, position in done == pass ? 0 : position }
        #expect(Array(twice[pass...]) == Array(left[0..<(twice.count - pass)]))
        #expect(looped.seekGapFrames == 0 && looped.underruns == 0)
    }

    /// A ramp file: frame i holds i / 2^20 (exact in float), so each output sample tells where in the file it came from.
    private func rampFile(_ dir: String, seconds: Double = 10) throws -> String {
        let path = "\(dir)/ramp.wav"
        try writeFile(path, rate: 44_100, channels: 2, frames: Int(seconds * 44_100)) { i, c in
            Float(i) / 1_048_576 * (c == 0 ? 1 : -1)
        }
        return path
    }

    @Test func seekAndLoop_followThePiece() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = try rampFile(dir)
        let block = 512
        // Offline: at 1 s the piece seeks to 6 s, at 8 s (piece time) it loops to 0.
        let track = try FileTrack(path: path, sampleRate: 44_100, waitsForDecoder: true)
        let (left, _) = play(track, seconds: 4, block: block) { done, position in
            if done == 44_032 { return 6.0 }                     // a seek
            if position >= 8.0 - 1e-9 && position < 8.02 { return 0 }   // a loop back to the start
            return position
        }
        var expected = [Float]()
        var frame = 0
        for start in stride(from: 0, to: left.count, by: block) {
            if start == 44_032 { frame = 6 * 44_100 }
            if Double(frame) / 44_100 >= 8.0 - 1e-9 && Double(frame) / 44_100 < 8.02 { frame = 0 }
            for k in 0..<block { expected.append(Float(frame + k) / 1_048_576) }
            frame += block
        }
        var mismatches = 0
        for i in 0..<left.count where left[i] != expected[i] { mismatches += 1 }
        #expect(mismatches == 0)
        #expect(track.seekGapFrames == 0 && track.underruns == 0)

        // Live: a seek past the preroll is silent until the decoder gets there, then in step with the piece.
        let live = try FileTrack(path: path, sampleRate: 44_100)
        let (liveLeft, _) = play(live, seconds: 2, block: block, paced: true) { done, position in done == 0 ? 5.0 : position }
        let firstSound = liveLeft.firstIndex { $0 != 0 }
        #expect(firstSound != nil)
        if let firstSound {
            #expect(live.seekGapFrames == firstSound)
            var offStep = 0
            for i in firstSound..<liveLeft.count where liveLeft[i] != Float(5 * 44_100 + i) / 1_048_576 { offStep += 1 }
            #expect(offStep == 0)
        }
        // Stopped: silence, and the position resumes where it was.
        var l = [Float](repeating: 1, count: block), r = l
        live.render(frames: block, position: 3, playing: false, left: &l, right: &r)
        #expect(l.allSatisfy { $0 == 0 } && r.allSatisfy { $0 == 0 })
    }

    @Test func loopToStart_playsAtOnceFromThePreroll() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = try rampFile(dir)
        let live = try FileTrack(path: path, sampleRate: 44_100)
        // Loop 0…1.5 s three times, in real time, so the decoder keeps up as it would live.
        let block = 512
        var gapsAtLoop = 0, checked = 0
        var position = 0.0
        var l = [Float](repeating: 0, count: block), r = l
        for _ in 0..<(3 * 130) {
            live.render(frames: block, position: position, playing: true, left: &l, right: &r)
            let frame = Int((position * 44_100).rounded())
            if l[0] != Float(frame) / 1_048_576 { gapsAtLoop += 1 }
            checked += 1
            position += Double(block) / 44_100
            if position >= 1.5 { position = 0 }
            usleep(2_000)
        }
        #expect(gapsAtLoop == 0 && live.seekGapFrames == 0 && live.underruns == 0, "of \(checked) blocks")
    }

    @Test func monoFile_playsCentred() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/mono.flac"
        try writeFile(path, rate: 44_100, channels: 1, frames: 44_100, format: .flac, encoding: .pcm16) { i, _ in
            Float(sin(Double(i) * 0.05)) * 0.5
        }
        let track = try FileTrack(path: path, sampleRate: 44_100, waitsForDecoder: true)
        #expect(track.fileChannels == 1)
        let (left, right) = play(track, seconds: 1.2)
        #expect(left == right)
        let source = try AudioFileReader(path: path)
        #expect(Array(left[..<44_100]) == source.samples)
        #expect(left[44_100...].allSatisfy { $0 == 0 })   // past its end: silent
    }

    @Test func missingCorruptOrSurroundFile_namesIt() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let missing = "\(dir)/nothere.wav"
        #expect { try FileTrack(path: missing, sampleRate: 44_100) } throws: { error in
            "\(error)".contains(missing) && "\(error)".contains("cannot open")
        }
        let corrupt = "\(dir)/corrupt.wav"
        try Data("RIFF\u{0}\u{0}\u{0}\u{0}WAVEjunk, not audio at all".utf8).write(to: URL(fileURLWithPath: corrupt))
        #expect { try FileTrack(path: corrupt, sampleRate: 44_100) } throws: { error in "\(error)".contains(corrupt) }
        let surround = "\(dir)/surround.wav"
        try writeFile(surround, rate: 44_100, channels: 6, frames: 100) { _, _ in 0 }
        #expect { try FileTrack(path: surround, sampleRate: 44_100) } throws: { error in
            "\(error)".contains(surround) && "\(error)".contains("6 channels")
        }
    }

    @Test func starvedDecoder_countsUnderruns_andRenderAllocatesNothing() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/long48k.wav"
        try writeFile(path, rate: 48_000, channels: 2, frames: 48_000 * 20) { i, _ in Float(sin(Double(i) * 0.01)) * 0.5 }
        // A tiny preroll and ring, rendered far faster than real time: the decoder cannot keep up.
        let track = try FileTrack(path: path, sampleRate: 44_100, prerollSeconds: 0.05, ringSeconds: 0.1)
        let block = 64
        let left = UnsafeMutablePointer<Float>.allocate(capacity: block), right = UnsafeMutablePointer<Float>.allocate(capacity: block)
        defer { left.deallocate(); right.deallocate() }
        var position = 0.0, silentBlocks = 0
        track.render(frames: block, position: position, playing: true, left: left, right: right)   // warm-up
        position += Double(block) / 44_100
        carillon_allocations_arm()
        for _ in 0..<10_000 {
            track.render(frames: block, position: position, playing: true, left: left, right: right)
            if left[block - 1] == 0 && right[block - 1] == 0 { silentBlocks += 1 }
            position += Double(block) / 44_100
        }
        let allocations = carillon_allocations_disarm()
        #expect(allocations == 0)
        #expect(track.underruns > 0 && track.underruns >= silentBlocks / 2, "underruns \(track.underruns), silent blocks \(silentBlocks)")
    }
}
