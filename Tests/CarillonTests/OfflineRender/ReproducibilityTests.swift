import OfflineRender
import Foundation
import Testing

/// A file's bytes depend only on the file, the font and the options: not on
/// what the job rendered before it.
@Suite(.serialized) struct ReproducibilityTests {
    static func bytes(_ path: String) -> Data { FileManager.default.contents(atPath: path) ?? Data() }

    @Test(arguments: [1, 2])
    func aFile_rendersTheSameBytes_aloneFirstOrAfterOthers(threads: Int) throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var options = RenderJob.Options()
        options.threads = threads
        options.maxDuration = 12
        let piece = "\(openmsx)/ultimate_run.mid"
        // Alone, in a job of its own.
        let alone = try RenderJob(soundFont: timGM, options: options)
        _ = try alone.render(input: piece, to: .file("\(dir)/alone.wav", format: .wav, encoding: .float32))
        // In one job: after two others (strings with chorus, drums), then again.
        let batch = try RenderJob(soundFont: timGM, options: options)
        _ = try batch.render(input: "\(openmsx)/harp_harmony.mid", to: .file("\(dir)/x.wav", format: .wav, encoding: .float32))
        _ = try batch.render(input: "\(openmsx)/careless_perc_redfarn.mid", to: .file("\(dir)/y.wav", format: .wav, encoding: .float32))
        _ = try batch.render(input: piece, to: .file("\(dir)/third.wav", format: .wav, encoding: .float32))
        _ = try batch.render(input: piece, to: .file("\(dir)/fourth.wav", format: .wav, encoding: .float32))
        let reference = Self.bytes("\(dir)/alone.wav")
        #expect(reference.count > 12 * 44_100 * 8)
        #expect(Self.bytes("\(dir)/third.wav") == reference)
        #expect(Self.bytes("\(dir)/fourth.wav") == reference)
    }
}
