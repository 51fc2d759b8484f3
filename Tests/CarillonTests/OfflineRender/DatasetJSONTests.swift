import Foundation
import Testing
@testable import OfflineRender
@testable import RenderBatch

/// The one JSON encoder and decoder (`DatasetJSON`) of the manifest, the stems
/// report and the JSON labels: text that needs escaping comes out escaped, a
/// value comes back as it went, and the same value gives the same bytes.
@Suite struct DatasetJSONTests {
    /// A file name with everything JSON must escape, and what must pass as it is:
    /// quotes, backslashes, control characters, `/`, non-ASCII (two bytes, and a
    /// surrogate pair in UTF-16).
    static let odd = "dir/\"q\" \\x\u{01}\n\t\u{1F}é 🎵 名.mid"
    /// How it must appear between the quotes.
    static let oddEscaped = #"dir/\"q\" \\x\u0001\n\t\u001fé 🎵 名.mid"#

    /// True when `line` is one line of JSON text with no raw control character in it.
    static func isOneCleanLine(_ line: String) -> Bool {
        !line.utf8.contains { $0 < 0x20 }
    }

    /// Read back by a reader that is not ours.
    static func object(_ line: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }

    @Test func manifestLine_escapesQuotesBackslashesControlCharacters_andKeepsNonASCII() throws {
        var e = ManifestEntry(input: Self.odd, output: "out/\(Self.odd).wav", status: .ok, carillonVersion: "1",
                              soundFont: "Font \"β\".sf2", soundFontBytes: 1)
        e.error = "cannot read \(Self.odd):\r\nbad header"
        e.stemReport = "out/\(Self.odd).stems.json"
        e.stems = ["stems/\(Self.odd)/drums.wav"]
        let line = e.jsonLine
        #expect(Self.isOneCleanLine(line))
        #expect(line.contains(#""input":""# + Self.oddEscaped + #"""#))
        #expect(line.contains(#""error":"cannot read "# + Self.oddEscaped + #":\r\nbad header""#))
        let object = try Self.object(line)
        #expect(object["input"] as? String == Self.odd)
        #expect(object["output"] as? String == "out/\(Self.odd).wav")
        #expect(object["error"] as? String == e.error)
        #expect(object["soundfont"] as? String == "Font \"β\".sf2")
        #expect(object["stems"] as? [String] == ["stems/\(Self.odd)/drums.wav"])
        // Resuming reads the input back as it was.
        let kept = ManifestWriter.reconcile(line + "\n", items: [BatchItem(input: Self.odd, key: "k", output: e.output)],
                                            skipped: { _ in true })
        #expect(kept.lines == [line] && kept.recorded == [Self.odd] && kept.unreadable == 0)
    }

    @Test func labelRows_andStemReport_escapeTheirText() throws {
        let row = RenderLabels.lines(["track_name", "preset", "onset", "drum"],
                                     [[.text(Self.odd), .text("Piano, \"left\""), .number(0.5), .bool(false)]], .jsonl)
        #expect(row == [#"{"drum":false,"onset":0.5,"preset":"Piano, \"left\"","track_name":""# + Self.oddEscaped + #""}"#])
        var stem = StemReport.Stem(name: Self.odd, file: "stems/\(Self.odd).wav")
        stem.trackNames = [Self.odd]
        let report = StemReport(grouping: .track, stems: [stem, StemReport.Stem(name: "b\\", file: nil)],
                                kept: [StemReport.Kept(group: "g\"", channel: 10, stem: Self.odd, notes: 1, reason: "a\nb")])
        let json = report.json
        #expect(Self.isOneCleanLine(json))
        let object = try Self.object(json)
        let stems = try #require(object["stems"] as? [[String: Any]])
        #expect(stems.map { $0["name"] as? String } == [Self.odd, "b\\"])
        #expect(stems[0]["track_names"] as? [String] == [Self.odd])
        #expect(object["silent"] as? [String] == ["b\\"])
        #expect((object["kept"] as? [[String: Any]])?.first?["reason"] as? String == "a\nb")
        #expect(OutputSet.stemFiles(inReport: json) == ["stems/\(Self.odd).wav"])
    }

    /// Written, then read back with the decoder: the same entry (−∞ loudness is
    /// null, and nil read back; the draw keeps its program map's name only).
    @Test func manifestEntry_roundTrips() throws {
        var e = ManifestEntry(input: Self.odd, output: "out/a.wav", status: .ok, carillonVersion: "0.1.0",
                              soundFont: "TimGM6mb.sf2", soundFontBytes: 6_039_716)
        e.pieceDuration = 183.42134; e.duration = 184.5; e.peakDBFS = -0.123456789012345; e.clippedSamples = 0
        e.loudness = -23.0; e.truePeak = -1e-05; e.gain = 3.2; e.normalizedLoudness = -23.000000000000004
        e.truncated = true; e.shortenedGaps = 2; e.secondsCut = 12.75; e.renderSeconds = 0.1 + 0.2
        e.augmentation = Augmentation.Draw(seed: .max, transpose: -3, tempo: 1.083, velocityScale: 0.9, programMapName: "pianos.yaml")
        e.notesDropped = 4
        e.stemReport = "out/a.stems.json"; e.stems = ["stems/a/drums.wav", "stems/a/ä.wav"]
        let line = e.jsonLine
        #expect(DatasetJSON.decode(ManifestEntry.self, from: line) == e)
        #expect(DatasetJSON.line(try #require(DatasetJSON.decode(ManifestEntry.self, from: line))) == line)

        var silent = ManifestEntry(input: "in/s.mid", output: "out/s.wav", status: .skipped, carillonVersion: "1", soundFont: "f", soundFontBytes: 1)
        silent.loudness = -.infinity
        silent.peakDBFS = .nan
        let back = try #require(DatasetJSON.decode(ManifestEntry.self, from: silent.jsonLine))
        #expect(back.loudness == nil && back.peakDBFS == nil && back.augmentation == nil && back.stems == nil)
        #expect(!silent.jsonLine.contains("augment") && !silent.jsonLine.contains("stems"))
    }

    /// Lines written by `carillon render` before the manifest's Codable was the
    /// compiler's (a silent damaged file: nulls and a warning; an augmented song):
    /// read back and written again, the same bytes.
    @Test func manifestLines_writtenBeforeTheSynthesisedCodable_comeBackByteIdentical() throws {
        let lines = [
            #"{"carillon_version":"0.1.0","clipped_samples":0,"dead_air_seconds":0,"error":null,"gain_db":null,"gaps_cut":0,"input":"Tests/Fixtures/DamagedMIDI/arkanoid-zero-tracks-declared.mid","limit_seconds_cut":0,"limits":[],"loudness_lufs":null,"normalized_lufs":null,"output":"out/arkanoid-zero-tracks-declared.wav","peak_dbfs":null,"piece_seconds":0,"render_seconds":0.038110984,"rendered_seconds":0.288,"seconds_cut":0,"soundfont":"/usr/share/sounds/sf2/TimGM6mb.sf2","soundfont_bytes":5969788,"status":"ok","true_peak_dbtp":null,"truncated":false,"warnings":["header declares 0 tracks: 1 track chunk not read at byte 14"]}"#,
            #"{"augment":{"notes_dropped":0,"program_map":null,"seed":1,"tempo":1,"transpose":-2,"velocity_scale":1},"carillon_version":"0.1.0","clipped_samples":0,"dead_air_seconds":18.4889412375,"error":null,"gain_db":null,"gaps_cut":0,"input":"/usr/share/games/openttd/baseset/openmsx/tttheme2.mid","limit_seconds_cut":0,"limits":[],"loudness_lufs":-34.35286740136015,"normalized_lufs":null,"output":"out/tttheme2.wav","peak_dbfs":-16.68164906310284,"piece_seconds":103.2569412375,"render_seconds":5.291420693,"rendered_seconds":84.768,"seconds_cut":0,"soundfont":"/usr/share/sounds/sf2/TimGM6mb.sf2","soundfont_bytes":5969788,"status":"ok","true_peak_dbtp":null,"truncated":false,"warnings":[]}"#,
        ]
        for line in lines {
            let entry = try #require(DatasetJSON.decode(ManifestEntry.self, from: line))
            #expect(entry.jsonLine == line)
        }
        let augmented = try #require(DatasetJSON.decode(ManifestEntry.self, from: lines[1]))
        #expect(augmented.augmentation?.transpose == -2 && augmented.notesDropped == 0)
    }

    /// A line without its optional keys (an older writer) reads them as nil, not as an error.
    @Test func manifestLine_withoutOptionalKeys_readsThemAsNil() throws {
        let line = #"{"carillon_version":"1","input":"a.mid","output":"a.wav","soundfont":"f","soundfont_bytes":1,"status":"failed","truncated":false}"#
        let entry = try #require(DatasetJSON.decode(ManifestEntry.self, from: line))
        #expect(entry.error == nil && entry.loudness == nil && entry.warnings == nil && entry.augmentation == nil)
        #expect(entry.jsonLine.contains(#""error":null"#) && entry.jsonLine.contains(#""loudness_lufs":null"#))
    }

    @Test func stemReport_roundTrips() throws {
        var drums = StemReport.Stem(name: "drums", file: "stems/a/drums.wav")
        drums.channels = [10]; drums.programs = [0]; drums.presets = ["Standard"]; drums.tracks = [3]; drums.trackNames = ["Drums"]
        drums.notes = 812; drums.drums = true; drums.peakDBFS = -6.2; drums.loudness = -21.3
        var strings = StemReport.Stem(name: "prog048-string-ensemble-1", file: nil)
        strings.gmClasses = ["Ensemble"]; strings.notes = 3
        let report = StemReport(grouping: .program, stems: [drums, strings],
                                moves: [StemReport.Move(group: "prog033", fromChannel: 2, toChannel: 12, notes: 40)],
                                kept: [StemReport.Kept(group: "x", channel: 10, stem: "drums", notes: 3, reason: "channel 10 is a drum channel")])
        #expect(DatasetJSON.decode(StemReport.self, from: report.json) == report)
        #expect(DatasetJSON.decode(StemReport.self, from: "[1]") == nil)
    }

    /// The same value, the same bytes: keys sorted, numbers in their shortest form.
    @Test func bytesRepeat_keysSorted_numbersShortest() {
        let row = RenderLabels.lines(["time", "tick", "bpm"], [[.number(1.5), .int(480), .number(120)],
                                                                [.number(-.infinity), .int(0), .number(1e-05)]], .jsonl)
        #expect(row == [#"{"bpm":120,"tick":480,"time":1.5}"#, #"{"bpm":1e-05,"tick":0,"time":null}"#])
        let e = ManifestEntry(input: "a", output: "b", status: .ok, carillonVersion: "1", soundFont: "f", soundFontBytes: 1)
        #expect(Set((0..<20).map { _ in e.jsonLine }).count == 1)
    }
}
