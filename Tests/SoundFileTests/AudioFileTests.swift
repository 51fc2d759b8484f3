import Testing
import SoundFile
#if canImport(Glibc)
import Glibc
#endif

func scratchDirectory() -> String {
    let path = "/tmp/carillon-sf-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    mkdir(path, 0o755)
    return path
}

func files(in directory: String) -> [String] {
    guard let dir = opendir(directory) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.baseAddress!.assumingMemoryBound(to: CChar.self)) }
        if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
}

/// A 440 Hz sine at -6 dBFS, interleaved stereo.
func sine(frames: Int, rate: Int) -> [Float] {
    var out = [Float](repeating: 0, count: 2 * frames)
    for i in 0..<frames {
        let v = Float(0.5 * sin(2 * Double.pi * 440 * Double(i) / Double(rate)))
        out[2 * i] = v; out[2 * i + 1] = -v
    }
    return out
}

@Suite struct AudioFileWriterTests {
    @Test(arguments: [
        (AudioFileFormat.wav, SampleEncoding.pcm16, Float(1e-4)),
        (.wav, .pcm24, 1e-6),
        (.wav, .float32, 0),
        (.flac, .pcm16, 1e-4),
        (.flac, .pcm24, 1e-6),
        (.ogg, .vorbis, 0.05),
    ])
    func write_thenRead_roundTrips(format: AudioFileFormat, encoding: SampleEncoding, tolerance: Float) throws {
        let dir = scratchDirectory()
        let path = "\(dir)/out.\(format.fileExtension)"
        let samples = sine(frames: 22_050, rate: 44_100)
        let writer = try AudioFileWriter(path: path, format: format, encoding: encoding, sampleRate: 44_100)
        try samples.withUnsafeBufferPointer { try writer.write($0, frames: 22_050) }
        #expect(files(in: dir).count == 1 && files(in: dir)[0].hasPrefix(".out."))   // only the temporary file so far
        try writer.finish()
        #expect(files(in: dir) == ["out.\(format.fileExtension)"])
        let read = try AudioFileReader(path: path)
        #expect(read.sampleRate == 44_100 && read.channels == 2 && read.format == format && read.encoding == encoding)
        #expect(abs(read.frames - 22_050) <= (format == .ogg ? 1024 : 0))
        if format != .ogg {
            let worst = zip(read.samples, samples).map { abs($0 - $1) }.max() ?? 1
            #expect(worst <= tolerance)
        } else {
            let rms = { (x: ArraySlice<Float>) in (x.map { $0 * $0 }.reduce(0, +) / Float(x.count)).squareRoot() }
            #expect(abs(rms(read.samples[4000..<40000]) - rms(samples[4000..<40000])) < tolerance)
        }
        unlink(path); rmdir(dir)
    }

    @Test func discard_leavesNothing() throws {
        let dir = scratchDirectory()
        let writer = try AudioFileWriter(path: "\(dir)/x.wav", format: .wav, sampleRate: 44_100)
        let samples = sine(frames: 1000, rate: 44_100)
        try samples.withUnsafeBufferPointer { try writer.write($0, frames: 1000) }
        writer.discard()
        #expect(files(in: dir).isEmpty)
        rmdir(dir)
    }

    @Test func releasedUnfinished_leavesNothing() throws {
        let dir = scratchDirectory()
        do {
            let writer = try AudioFileWriter(path: "\(dir)/x.flac", format: .flac, sampleRate: 48_000)
            _ = writer
        }
        #expect(files(in: dir).isEmpty)
        rmdir(dir)
    }

    @Test func finish_replacesAnExistingFileOnlyAtTheEnd() throws {
        let dir = scratchDirectory()
        let path = "\(dir)/x.wav"
        let old = try AudioFileWriter(path: path, format: .wav, sampleRate: 44_100)
        try sine(frames: 100, rate: 44_100).withUnsafeBufferPointer { try old.write($0, frames: 100) }
        try old.finish()
        let new = try AudioFileWriter(path: path, format: .wav, sampleRate: 44_100)
        try sine(frames: 500, rate: 44_100).withUnsafeBufferPointer { try new.write($0, frames: 500) }
        #expect(try AudioFileReader(path: path).frames == 100)
        try new.finish()
        #expect(try AudioFileReader(path: path).frames == 500)
        unlink(path); rmdir(dir)
    }

    @Test func unwritableDirectory_throwsCannotCreate() {
        #expect(throws: SoundFileError.self) {
            try AudioFileWriter(path: "/nonexistent-dir/x.wav", format: .wav, sampleRate: 44_100)
        }
    }

    @Test func flacWithFloat_isUnsupported() {
        #expect(throws: SoundFileError.unsupported(format: .flac, encoding: .float32)) {
            try AudioFileWriter(path: "/tmp/never.flac", format: .flac, encoding: .float32, sampleRate: 44_100)
        }
    }

    @Test func format_fromExtension() {
        #expect(AudioFileFormat(pathExtensionOf: "a/b/song.WAV") == .wav)
        #expect(AudioFileFormat(pathExtensionOf: "x.flac") == .flac)
        #expect(AudioFileFormat(pathExtensionOf: "x.oga") == .ogg)
        #expect(AudioFileFormat(pathExtensionOf: "x.mp4") == nil)
        #expect(AudioFileFormat(pathExtensionOf: ".wav") == nil)
    }
}
