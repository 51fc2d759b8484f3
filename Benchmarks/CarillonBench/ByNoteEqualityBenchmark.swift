import Foundation
import OfflineRender

/// Whether loading a font by note sounds exactly as loading it whole: each
/// file is rendered twice through `RenderJob` as `carillon render` renders it
/// (float WAV, one synth, every default), once by one job selecting samples by
/// note (a view of the font per piece) and once by another loading the font
/// whole (every sample read or decoded at load), and the two WAVs are
/// compared byte for byte. The corpus form of `SampleSelectionTests`'
/// `sf3_everyOpenmsxPiece`, in a release build (the debug test takes hours on
/// a loaded machine). Prints one line per file; exits 1 if any differs.
///
///   CarillonBench by-note-equality SOUNDFONT FILE.mid...
enum ByNoteEqualityBenchmark {
    static func run(arguments: [String]) throws {
        guard arguments.count >= 2 else { throw BenchError("usage: CarillonBench by-note-equality SOUNDFONT FILE.mid...") }
        let font = arguments[0]
        func job(byNotes: Bool) throws -> RenderJob {
            var options = RenderJob.Options()
            options.loadsSamplesOnDemand = byNotes
            options.selectsSamplesByNotes = byNotes
            return try RenderJob(soundFont: font, options: options)
        }
        let byNotes = try job(byNotes: true), whole = try job(byNotes: false)
        let directory = NSTemporaryDirectory() + "carillon-by-note-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        print("file  result  bytes  by_note_s  whole_s")
        var differing = 0
        for file in arguments.dropFirst() {
            func render(_ job: RenderJob, _ name: String) throws -> (bytes: Data, seconds: Double) {
                let path = "\(directory)/\(name).wav"
                let summary = try job.render(input: file, to: .file(path, format: .wav, encoding: .float32))
                defer { unlink(path) }
                return (try Data(contentsOf: URL(fileURLWithPath: path)), summary.elapsed)
            }
            let a = try render(byNotes, "notes"), b = try render(whole, "whole")
            let name = (file as NSString).lastPathComponent
            let silent = a.bytes.count <= 10_000 || !a.bytes.dropFirst(100).contains { $0 != 0 }
            let result: String
            if a.bytes != b.bytes {
                let first = zip(a.bytes, b.bytes).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                    ?? min(a.bytes.count, b.bytes.count)
                result = "DIFFERS(from byte \(first); sizes \(a.bytes.count), \(b.bytes.count))"
            } else {
                result = silent ? "SILENT" : "same"
            }
            if result != "same" { differing += 1 }
            print("\(name)  \(result)  \(a.bytes.count)  \(String(format: "%.2f", a.seconds))  \(String(format: "%.2f", b.seconds))")
        }
        let notes = byNotes.log.take()
        if !notes.isEmpty { print("by-note job's log: \(notes)") }
        print("\(arguments.count - 1 - differing) of \(arguments.count - 1) files by note byte for byte the font loaded whole (\(font))")
        if differing > 0 || !notes.isEmpty { exit(1) }
    }
}
