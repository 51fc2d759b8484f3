import OfflineRender
import RenderBatch
import Foundation
import Testing

/// The manifest after a rerun: one final line per input.
@Suite struct ManifestTests {
    static func line(_ input: String, _ status: ManifestEntry.Status, output: String? = nil) -> String {
        ManifestEntry(input: input, output: output ?? "out/\(input).wav", status: status, carillonVersion: "1",
                      soundFont: "f.sf2", soundFontBytes: 1).jsonLine
    }

    static func item(_ input: String) -> BatchItem { BatchItem(input: input, key: input, output: "out/\(input).wav") }

    /// A requeued task: a and b were done (b's output since removed), c failed,
    /// x belongs to another batch. The skipped a keeps its ok line; b and c get
    /// new lines, so theirs go; x's stays.
    @Test func reconcile_keepsTheLineOfASkippedFile_andDropsThoseToBeRewritten() {
        let text = [Self.line("a", .ok), Self.line("x", .ok), Self.line("b", .ok), Self.line("c", .failed)]
            .joined(separator: "\n") + "\n"
        let r = ManifestWriter.reconcile(text, items: ["a", "b", "c"].map(Self.item), skipped: { $0.input == "a" })
        #expect(r.lines == [Self.line("a", .ok), Self.line("x", .ok)])
        #expect(r.recorded == ["a"] && r.unreadable == 0 && r.changed)
    }

    /// A manifest from before this rule (ok, then skipped after a requeue):
    /// the ok line is the one kept, whatever the order.
    @Test func reconcile_okAndSkippedForOneFile_keepsTheOkLineOnly() {
        for lines in [[Self.line("a", .ok), Self.line("a", .skipped)], [Self.line("a", .skipped), Self.line("a", .ok)]] {
            let r = ManifestWriter.reconcile(lines.joined(separator: "\n") + "\n", items: [Self.item("a")], skipped: { _ in true })
            #expect(r.lines == [Self.line("a", .ok)] && r.recorded == ["a"] && r.changed)
        }
        // Only a skipped line (the output was there before any manifest): it stays.
        let r = ManifestWriter.reconcile(Self.line("a", .skipped) + "\n", items: [Self.item("a")], skipped: { _ in true })
        #expect(r.lines == [Self.line("a", .skipped)] && r.recorded == ["a"] && !r.changed)
    }

    @Test func reconcile_withoutSkipping_replacesEveryLineOfTheBatch() {
        let text = [Self.line("a", .ok), Self.line("a", .skipped), Self.line("b", .failed)].joined(separator: "\n") + "\n"
        let r = ManifestWriter.reconcile(text, items: ["a", "b"].map(Self.item), skipped: { _ in false })
        #expect(r.lines.isEmpty && r.recorded.isEmpty && r.changed)
    }

    /// A line about another output (another --output-dir) is no record of this one.
    @Test func reconcile_aLineForAnotherOutput_isNotKept() {
        let r = ManifestWriter.reconcile(Self.line("a", .ok, output: "elsewhere/a.wav") + "\n", items: [Self.item("a")],
                                         skipped: { _ in true })
        #expect(r.lines.isEmpty && r.recorded.isEmpty)
    }

    /// `--soundfont-pick all`: an input has a rendering, and a line, per font.
    /// A rerun that skips one rendering (its output there) keeps that line
    /// only; the other renderings' lines go, whichever font wrote them.
    @Test func reconcile_severalRenderingsOfOneInput_keepsTheLineOfEachSkippedOne() {
        func rendering(_ font: String) -> BatchItem { BatchItem(input: "a", key: "a", output: "out/a.\(font).wav") }
        let items = [rendering("F"), rendering("T")]
        let earlier = [Self.line("a", .ok, output: "out/a.F.wav"), Self.line("x", .ok), Self.line("a", .ok, output: "out/a.T.wav"),
                       Self.line("a", .ok, output: "out/a.wav")]   // a run with one font
        let r = ManifestWriter.reconcile(earlier.joined(separator: "\n") + "\n", items: items, skipped: { $0.output == "out/a.T.wav" })
        #expect(r.lines == [Self.line("x", .ok), Self.line("a", .ok, output: "out/a.T.wav")])
        #expect(r.recordedOutputs == ["out/a.T.wav"] && r.recorded == ["a"])
        let both = ManifestWriter.reconcile(earlier.joined(separator: "\n") + "\n", items: items, skipped: { _ in true })
        #expect(both.lines == [earlier[0], earlier[1], earlier[2]] && both.recordedOutputs == ["out/a.F.wav", "out/a.T.wav"])
    }

    /// Inputs are matched after reading the JSON string back: escapes, \u
    /// escapes and surrogate pairs included. A torn line is dropped and counted.
    @Test func reconcile_readsEscapedInputs_andDropsUnreadableLines() {
        let odd = "dir \"q\"\\é\t🎵.mid"
        let handWritten = #"{ "input" : "dir \"q\"\\\u00e9\u0009\ud83c\udfb5.mid", "n": [1, {"s": "]}"}], "output":"out/x.wav","status":"ok"}"#
        let text = Self.line(odd, .ok) + "\n" + "{\"input\":\"torn" + "\n" + "[1]\n" + handWritten
        let ours = BatchItem(input: odd, key: "k", output: "out/\(odd).wav")
        let r = ManifestWriter.reconcile(text, items: [ours], skipped: { _ in true })
        #expect(r.lines == [Self.line(odd, .ok)] && r.recorded == [odd], "\(r.lines)")
        #expect(r.unreadable == 2)
        let other = BatchItem(input: odd, key: "k", output: "out/x.wav")
        #expect(ManifestWriter.reconcile(handWritten, items: [other], skipped: { _ in true }).lines == [handWritten])
    }

    /// The writer rewrites the file before appending: after the rerun's lines,
    /// one line per input.
    @Test func writer_rewritesTheEarlierManifest_thenAppends() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/m.jsonl"
        try ([Self.line("a", .ok), Self.line("b", .failed), Self.line("x", .ok)].joined(separator: "\n") + "\n")
            .write(toFile: path, atomically: false, encoding: .utf8)
        let writer = try ManifestWriter(path: path, items: ["a", "b"].map(Self.item), skipped: { $0.input == "a" })
        #expect(writer.recorded == ["a"])
        try writer.append(ManifestEntry(input: "b", output: "out/b.wav", status: .ok, carillonVersion: "1",
                                        soundFont: "f.sf2", soundFontBytes: 1))
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines == [Self.line("a", .ok), Self.line("x", .ok), Self.line("b", .ok)])
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["m.jsonl"])   // no temporary left
    }

    /// `--manifest song.mid other.mid …` takes the first input as the manifest's
    /// path: a file with text but no manifest line is refused and left as it was.
    @Test func writer_refusesAFileThatIsNotAManifest_andLeavesItAlone() throws {
        let dir = scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/song.mid"
        let midi = Data(try Data(contentsOf: URL(fileURLWithPath: "/usr/share/games/openttd/baseset/openmsx/5432gone_redfarn.mid")))
        try midi.write(to: URL(fileURLWithPath: path))
        #expect(throws: ManifestError.self) { try ManifestWriter(path: path, items: [Self.item("a")]) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == midi)
        // A manifest whose last line was cut short is still a manifest.
        let cut = "\(dir)/cut.jsonl"
        try (Self.line("a", .ok) + "\n{\"inp").write(toFile: cut, atomically: false, encoding: .utf8)
        #expect(try ManifestWriter(path: cut).unreadableLines == 1)
    }
}
