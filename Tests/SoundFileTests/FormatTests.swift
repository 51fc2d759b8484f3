import Foundation
import Testing
import SoundFile

/// What ffprobe (an independent reader: FFmpeg) says a file holds: codec, rate, channels, seconds.
func ffprobe(_ path: String) -> (codec: String, rate: Int, channels: Int, duration: Double)? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
    process.arguments = ["-v", "error", "-select_streams", "a:0", "-show_entries",
                         "stream=codec_name,sample_rate,channels:format=duration", "-of", "default=nw=1", path]
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    var fields: [String: String] = [:]
    for line in text.split(separator: "\n") {
        let parts = line.split(separator: "=", maxSplits: 1)
        if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
    }
    guard let codec = fields["codec_name"], let rate = fields["sample_rate"].flatMap(Int.init),
          let channels = fields["channels"].flatMap(Int.init), let duration = fields["duration"].flatMap(Double.init)
    else { return nil }
    return (codec, rate, channels, duration)
}

func rms(_ x: ArraySlice<Float>) -> Float { (x.map { $0 * $0 }.reduce(0, +) / Float(x.count)).squareRoot() }

@Suite struct AudioFileFormatTests {
    /// Every container and encoding that holds PCM, written and read back sample for sample.
    @Test(arguments: [AudioFileFormat.aiff, .caf, .w64, .rf64], [SampleEncoding.pcm16, .pcm24, .float32])
    func pcmContainer_roundTrips(format: AudioFileFormat, encoding: SampleEncoding) throws {
        let dir = scratchDirectory()
        let path = "\(dir)/out.\(format.fileExtension)"
        defer { unlink(path); rmdir(dir) }
        let samples = sine(frames: 12_000, rate: 48_000)
        let writer = try AudioFileWriter(path: path, format: format, encoding: encoding, sampleRate: 48_000)
        try samples.withUnsafeBufferPointer { try writer.write($0, frames: 12_000) }
        try writer.finish()
        let read = try AudioFileReader(path: path)
        #expect(read.format == format && read.encoding == encoding)
        #expect(read.sampleRate == 48_000 && read.channels == 2 && read.frames == 12_000)
        let tolerance: Float = encoding == .pcm16 ? 1e-4 : encoding == .pcm24 ? 1e-6 : 0
        #expect((zip(read.samples, samples).map { abs($0 - $1) }.max() ?? 1) <= tolerance)
        // FFmpeg agrees on what the file is.
        let probe = try #require(ffprobe(path))
        #expect(probe.rate == 48_000 && probe.channels == 2 && abs(probe.duration - 0.25) < 0.001)
    }

    /// Lossy codecs: the read-back has the same loudness and length (the codecs add a little padding).
    @Test(arguments: [(AudioFileFormat.mp3, "mp3"), (.opus, "opus")])
    func lossy_roundTrips(format: AudioFileFormat, codec: String) throws {
        try #require(format.isAvailable, "this libsndfile lacks \(format)")
        let dir = scratchDirectory()
        let path = "\(dir)/out.\(format.fileExtension)"
        defer { unlink(path); rmdir(dir) }
        let samples = sine(frames: 48_000, rate: 48_000)
        let writer = try AudioFileWriter(path: path, format: format, sampleRate: 48_000)
        try samples.withUnsafeBufferPointer { try writer.write($0, frames: 48_000) }
        try writer.finish()
        let read = try AudioFileReader(path: path)
        #expect(read.format == format && read.sampleRate == 48_000 && read.channels == 2)
        #expect(abs(read.frames - 48_000) <= 2_400)
        #expect(abs(rms(read.samples[20_000..<80_000]) - rms(samples[20_000..<80_000])) < 0.02)
        let probe = try #require(ffprobe(path))
        #expect(probe.codec == codec && probe.channels == 2 && abs(probe.duration - 1) < 0.06)
    }

    @Test func opus_at44100_isRefusedWithTheRatesItTakes() {
        #expect(throws: SoundFileError.unsupportedRate(format: .opus, rate: 44_100)) {
            try AudioFileWriter(path: "/tmp/never.opus", format: .opus, sampleRate: 44_100)
        }
        #expect(SoundFileError.unsupportedRate(format: .opus, rate: 44_100).description.contains("48000"))
    }

    /// Raw PCM is headerless, little-endian, interleaved: read the bytes back by hand.
    @Test(arguments: [SampleEncoding.pcm16, .float32])
    func raw_isLittleEndianInterleaved(encoding: SampleEncoding) throws {
        let dir = scratchDirectory()
        let path = "\(dir)/out.raw"
        defer { unlink(path); rmdir(dir) }
        let samples = sine(frames: 1000, rate: 44_100)
        let writer = try AudioFileWriter(path: path, format: .raw, encoding: encoding, sampleRate: 44_100)
        try samples.withUnsafeBufferPointer { try writer.write($0, frames: 1000) }
        try writer.finish()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let decoded = decodeRaw(bytes, encoding: encoding)
        #expect(decoded.count == 2000)
        #expect((zip(decoded, samples).map { abs($0 - $1) }.max() ?? 1) <= (encoding == .pcm16 ? 1e-4 : 0))
    }

    @Test func wav_underFourGigabytes_isPlainWAV() throws {
        // Written as RF64 with auto-downgrade: a short file must come out as ordinary RIFF/WAVE.
        let dir = scratchDirectory()
        let path = "\(dir)/out.wav"
        defer { unlink(path); rmdir(dir) }
        let writer = try AudioFileWriter(path: path, format: .wav, sampleRate: 44_100)
        try sine(frames: 100, rate: 44_100).withUnsafeBufferPointer { try writer.write($0, frames: 100) }
        try writer.finish()
        let head = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).prefix(12))
        #expect(String(decoding: head[0..<4], as: UTF8.self) == "RIFF" && String(decoding: head[8..<12], as: UTF8.self) == "WAVE")
        #expect(try AudioFileReader(path: path).format == .wav)
    }

    @Test func fileFormats_areNotStreamable() {
        #expect(throws: SoundFileError.notStreamable(format: .wav)) {
            try AudioFileWriter(path: AudioFileWriter.standardOutput, format: .wav, sampleRate: 44_100)
        }
    }

    @Test func format_fromNewExtensions() {
        #expect(AudioFileFormat(pathExtensionOf: "a.mp3") == .mp3)
        #expect(AudioFileFormat(pathExtensionOf: "a.opus") == .opus)
        #expect(AudioFileFormat(pathExtensionOf: "a.AIF") == .aiff)
        #expect(AudioFileFormat(pathExtensionOf: "a.aiff") == .aiff)
        #expect(AudioFileFormat(pathExtensionOf: "a.caf") == .caf)
        #expect(AudioFileFormat(pathExtensionOf: "a.w64") == .w64)
        #expect(AudioFileFormat(pathExtensionOf: "a.rf64") == .rf64)
        #expect(AudioFileFormat(pathExtensionOf: "a.raw") == .raw)
    }

    @Test func everyFormat_isAvailableInDebiansLibsndfile() {
        // Debian 12's libsndfile 1.2 links LAME, mpg123 and libopus; a build without them fails here.
        for format in AudioFileFormat.allCases { #expect(format.isAvailable, "\(format)") }
    }
}

/// Little-endian interleaved samples to floats.
func decodeRaw(_ bytes: [UInt8], encoding: SampleEncoding) -> [Float] {
    switch encoding {
    case .pcm16:
        return stride(from: 0, to: bytes.count - 1, by: 2).map {
            Float(Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)) / 32768
        }
    case .float32:
        return stride(from: 0, to: bytes.count - 3, by: 4).map { i in
            Float(bitPattern: UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24)
        }
    default: return []
    }
}
