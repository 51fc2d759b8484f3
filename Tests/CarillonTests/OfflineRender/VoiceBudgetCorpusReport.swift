import Foundation
import OfflineRender
import Testing

/// How often a split render (`--threads 2`) goes over one synth's voice budget
/// and is rendered again on one synth, and what the wasted first pass costs,
/// on real files: the figures behind keeping that decision in the render
/// (DESIGN.md, "One voice budget"). Off unless `CARILLON_VOICE_BUDGET_CORPUS`
/// names folders (`:`-separated; every *.mid under them); each file renders
/// on two synths and on one, with TimGM6mb at `CARILLON_VOICE_BUDGET_RATE`
/// (default 16000) Hz. One line per file and the totals go to standard output.
///
///     CARILLON_VOICE_BUDGET_CORPUS=/usr/share/games/openttd/baseset/openmsx:Tests/Fixtures/MusicMIDI \
///         swift test --skip-build --filter VoiceBudgetCorpusReport
@Suite struct VoiceBudgetCorpusReport {
    static let corpus = ProcessInfo.processInfo.environment["CARILLON_VOICE_BUDGET_CORPUS"]

    @Test(.enabled(if: corpus != nil)) func splitRendersOverTheBudget() throws {
        let rate = Int(ProcessInfo.processInfo.environment["CARILLON_VOICE_BUDGET_RATE"] ?? "") ?? 16_000
        var files: [String] = []
        for folder in (Self.corpus ?? "").split(separator: ":").map(String.init) {
            let names = try FileManager.default.subpathsOfDirectory(atPath: folder)
            files += names.filter { $0.lowercased().hasSuffix(".mid") }.sorted().map { "\(folder)/\($0)" }
        }
        let dir = NSTemporaryDirectory() + "voice-budget-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func job(_ threads: Int) throws -> RenderJob {
            var options = RenderJob.Options()
            options.sampleRate = rate
            options.threads = threads
            return try RenderJob(soundFont: "/usr/share/sounds/sf2/TimGM6mb.sf2", options: options)
        }
        let split = try job(2), one = try job(1)
        var again = 0, splitSeconds = 0.0, oneSeconds = 0.0, wasted = 0.0, audio = 0.0
        for file in files {
            let a = try split.render(input: file, to: .file("\(dir)/split.wav", format: .wav, encoding: .float32))
            let b = try one.render(input: file, to: .file("\(dir)/one.wav", format: .wav, encoding: .float32))
            splitSeconds += a.elapsed; oneSeconds += b.elapsed; audio += b.duration
            if a.renderedOnOneSynth { again += 1; wasted += max(0, a.elapsed - b.elapsed) }
            print("\(file)\t\(a.renderedOnOneSynth ? "again" : "split")\tsplit " + String(format: "%.2f s\tone %.2f s", a.elapsed, b.elapsed))
        }
        print("voice budget: \(again) of \(files.count) files rendered again on one synth; "
              + String(format: "%.0f s of audio; split %.1f s, one synth %.1f s, first passes thrown away %.1f s",
                       audio, splitSeconds, oneSeconds, wasted))
        #expect(!files.isEmpty)
    }
}
