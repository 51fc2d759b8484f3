import Foundation
import OfflineRender
import RenderBatch
import Testing
import Threads

/// The worker pool with several SoundFonts: each font is read once for the
/// process, and every worker's job with it shares that.
@Suite(.serialized) struct BatchRendererTests {
    /// Descriptors this process has open on `path`.
    static func openDescriptors(on path: String) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.count { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path }
    }

    /// Two workers render every input with each of two fonts (each worker
    /// makes a job per font): while they run, each font is open once — its
    /// layout read once, its samples read through that one descriptor. (The
    /// fonts are copies no other test opens: tests run side by side in this process.)
    @Test func twoWorkersWithTwoFonts_openEachFontOnce() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let paths = ["\(dir)/A.sf2", "\(dir)/B.sf2"]
        for path in paths { try FileManager.default.copyItem(atPath: timGM, toPath: path) }
        let fonts = try SoundFontSet(paths: paths, pick: .all)
        let names = ["coconut_run2", "train_filled_with_cash", "chemistry_lab", "busy_schedule"]
        let items = try fonts.renderings(of: names.map {
            BatchItem(input: "\(openmsx)/\($0).mid", key: "\($0).mid", output: "\(dir)/\($0).wav")
        })
        var settings = BatchRenderer.Settings()
        settings.jobs = 2
        settings.job.maxDuration = 3
        settings.job.sampleRate = 22_050
        let batch = try BatchRenderer(soundFonts: fonts, settings: settings)
        var most = [0, 0], outcomes: [BatchRenderer.Outcome] = []
        let final = try batch.run(items, cancel: CancellationFlag()) { _, done in
            outcomes += done
            for (i, font) in paths.enumerated() { most[i] = max(most[i], Self.openDescriptors(on: font)) }
        }
        #expect(final.done == 8 && final.failed == 0)
        #expect(most == [1, 1], "descriptors open on each font at most: \(most)")
        // Each rendering with its own font, named after it, as the manifest line says.
        for o in outcomes {
            let font = fonts.fonts[o.item.soundFont]
            #expect(o.entry.soundFont == font.path && o.item.output.hasSuffix(".\(font.name).wav"))
            #expect(o.entry.soundFontBytes == (try FileManager.default.attributesOfItem(atPath: font.path)[.size] as? Int))
        }
        #expect(Set(outcomes.map(\.item.output)) == Set(items.map(\.output)))
    }
}
