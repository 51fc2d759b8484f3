import Foundation
import OfflineRender
import RenderBatch
import Testing
import Threads

/// A rendering's files as one set (`OutputSet`): moved onto their names
/// together, the audio last; all gone on a failure; `--skip-existing` asks for all of them.
@Suite(.serialized) struct OutputSetTests {
    /// A batch of real openmsx files with labels, stems by track and their report, in `dir`.
    static func batch(in dir: String, names: [String], skipExisting: Bool = false, manifestLines: Bool = false) throws
        -> (BatchRenderer, [BatchItem]) {
        let fonts = try SoundFontSet(paths: [timGM], pick: .hash)
        let items = names.map {
            BatchItem(input: "\(openmsx)/\($0).mid", key: "\($0).mid", output: "\(dir)/out/\($0).wav",
                      stems: "\(dir)/stems/\($0)")
        }
        var settings = BatchRenderer.Settings()
        settings.job.maxDuration = 2
        settings.job.sampleRate = 8_000
        settings.job.stems = true
        settings.job.stemsBy = .track
        settings.job.labels = true
        settings.labels = .csv
        settings.skipExisting = skipExisting
        settings.manifestLines = manifestLines
        try BatchPlan.createFolders(for: items)
        return (try BatchRenderer(soundFonts: fonts, settings: settings), items)
    }

    static func run(_ batch: BatchRenderer, _ items: [BatchItem]) throws -> [BatchRenderer.Outcome] {
        var outcomes: [BatchRenderer.Outcome] = []
        _ = try batch.run(items, cancel: CancellationFlag()) { _, done in outcomes += done }
        return outcomes
    }

    /// Every file under `dir`, by path relative to it, with its bytes.
    static func tree(_ dir: String) -> [String: Data] {
        var files: [String: Data] = [:]
        let walker = FileManager.default.enumerator(atPath: dir)
        while let path = walker?.nextObject() as? String {
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: "\(dir)/\(path)", isDirectory: &isFolder), !isFolder.boolValue {
                files[path] = FileManager.default.contents(atPath: "\(dir)/\(path)")
            }
        }
        return files
    }

    /// The beats file's name taken by a folder: the set's move fails after the
    /// stems folder and the notes went into place. Nothing of the set stays:
    /// no audio, no stems folder, no labels, no report, no staged file.
    @Test func commit_failureMidSet_removesEverything() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (batch, items) = try Self.batch(in: dir, names: ["chemistry_lab"])
        let set = batch.outputSet(items[0])
        #expect(set.labels.count == 3 && set.stemReport != nil && set.stems != nil)
        let beats = set.labels[1].final
        #expect(beats.hasSuffix(".beats.csv"))
        try FileManager.default.createDirectory(atPath: beats, withIntermediateDirectories: true)
        try Data("in the way".utf8).write(to: URL(fileURLWithPath: "\(beats)/x"))

        let outcomes = try Self.run(batch, items)
        #expect(outcomes.count == 1 && outcomes[0].entry.status == .failed)
        #expect(outcomes[0].entry.error?.contains(beats) == true, "\(outcomes[0].entry.error ?? "")")
        // Only the obstacle is left.
        try FileManager.default.removeItem(atPath: beats)
        #expect(Self.tree(dir).isEmpty, "left behind: \(Self.tree(dir).keys.sorted())")
        #expect(!set.isComplete())
    }

    /// A finished batch, then one input's tempo labels, another's stems report
    /// and a third's stem file removed: `--skip-existing` renders those three
    /// again (the same bytes as before) and skips the untouched one.
    @Test func skipExisting_missingCompanion_rendersAgain() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let names = ["chemistry_lab", "coconut_run2", "busy_schedule", "train_filled_with_cash"]
        let (first, items) = try Self.batch(in: dir, names: names)
        let done = try Self.run(first, items)
        #expect(done.count == 4 && done.allSatisfy { $0.entry.status == .ok })
        let before = Self.tree(dir)
        for item in items { #expect(first.outputSet(item).isComplete(), "\(item.output)") }

        let sets = items.map(first.outputSet)
        try FileManager.default.removeItem(atPath: sets[0].labels[2].final)
        try FileManager.default.removeItem(atPath: sets[1].stemReport!.final)
        let stemFiles = try FileManager.default.contentsOfDirectory(atPath: sets[2].stems!.final)
        #expect(!stemFiles.isEmpty)
        try FileManager.default.removeItem(atPath: "\(sets[2].stems!.final)/\(stemFiles.sorted()[0])")
        for set in sets.prefix(3) { #expect(!set.isComplete()) }

        let (again, _) = try Self.batch(in: dir, names: names, skipExisting: true)
        let outcomes = try Self.run(again, items)
        var status: [String: ManifestEntry.Status] = [:]
        for o in outcomes { status[o.item.output] = o.entry.status }
        #expect(items.map { status[$0.output] } == [.ok, .ok, .ok, .skipped])
        #expect(Self.tree(dir) == before, "the set rendered again differs from the first")
    }

    /// With a manifest, each rendering's line is a member of its set: written
    /// with it (the outcome's line, byte for byte), wanted by `isComplete`
    /// (missing or not a manifest line: not complete), and what a skipped
    /// rendering hands the manifest (`Outcome.storedLine`).
    @Test func manifestLine_isAMemberOfTheSet() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let names = ["chemistry_lab", "coconut_run2"]
        let (first, items) = try Self.batch(in: dir, names: names, manifestLines: true)
        let done = try Self.run(first, items)
        #expect(done.count == 2 && done.allSatisfy { $0.entry.status == .ok })
        let sets = items.map(first.outputSet)
        for (set, item) in zip(sets, items) {
            let line = try #require(set.manifestLine)
            #expect(line.final == "\(dir)/out/\(item.key.dropLast(4)).manifest.json")
            let outcome = try #require(done.first { $0.item == item })
            #expect(set.storedManifestLine() == outcome.entry.jsonLine)
            #expect(set.isComplete())
        }
        // Without its line, or with a line cut short, a set is not finished.
        try FileManager.default.removeItem(atPath: sets[0].manifestLine!.final)
        try Data("{\"input\":\"a".utf8).write(to: URL(fileURLWithPath: sets[1].manifestLine!.final))
        for set in sets { #expect(!set.isComplete() && set.storedManifestLine() == nil) }
        // Rendered again, then skipped: the skipped outcome carries the line of the run that rendered it.
        let again = try Self.run(try Self.batch(in: dir, names: names, manifestLines: true).0, items)
        #expect(again.allSatisfy { $0.entry.status == .ok })
        let skipped = try Self.run(try Self.batch(in: dir, names: names, skipExisting: true, manifestLines: true).0, items)
        for o in skipped {
            #expect(o.entry.status == .skipped)
            let rendered = try #require(again.first { $0.item == o.item })
            #expect(o.storedLine == rendered.entry.jsonLine)
        }
        // Without a manifest the set has no line and does not ask for one.
        #expect(try Self.batch(in: dir, names: names).0.outputSet(items[0]).manifestLine == nil)
    }

    /// Staged names a killed run left (audio, a label, a stems folder) are no
    /// final name: the set is not complete, and the next rendering sweeps them.
    @Test func sweep_stagedLeftovers_removedBeforeRendering() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (batch, items) = try Self.batch(in: dir, names: ["chemistry_lab"])
        let set = batch.outputSet(items[0])
        try FileManager.default.createDirectory(atPath: set.stems!.staged, withIntermediateDirectories: true)
        for path in [set.audio.staged, set.labels[0].staged, "\(set.stems!.staged)/drums.wav"] {
            try Data("left by a kill".utf8).write(to: URL(fileURLWithPath: path))
        }
        #expect(!set.isComplete())
        let outcomes = try Self.run(batch, items)
        #expect(outcomes.map(\.entry.status) == [.ok])
        #expect(set.isComplete())
        let left = Self.tree(dir).keys.filter { $0.contains(OutputSet.stagedSuffix) }
        #expect(left.isEmpty, "staged names left: \(left)")
    }
}
