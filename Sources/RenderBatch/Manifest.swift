import OfflineRender
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One line of a batch manifest (JSON Lines): what became of one input.
///
/// Two parts, each Codable by the compiler, written into one JSON object:
/// what the line says of the rendering (`Head`: input, output, status, the
/// font, …) and what the render measured (`facts`: the summary's own
/// `RenderJob.Summary.Facts`, nulls when nothing rendered). Every optional
/// field is `@OrNull` (written as null when absent, and a non-finite number
/// too; a null or a missing key reads back as nil), except those written only
/// sometimes: `augment`, and `stems_json` and `stems`. Either part's fields
/// read and write as the entry's own (`entry.input`, `entry.loudness`).
@dynamicMemberLookup
public struct ManifestEntry: Sendable, Equatable, Codable {
    public enum Status: String, Sendable, Codable { case ok, failed, skipped }

    public var head: Head
    public var facts = RenderJob.Summary.Facts()

    /// What the line says of its rendering, besides the render's facts.
    public struct Head: Sendable, Equatable, Codable {
        public var input: String
        public var output: String
        public var status: Status
        @OrNull public var error: String? = nil
        public var carillonVersion: String
        public var soundFont: String
        public var soundFontBytes: Int
        /// `render --transpose` …: the `augment` object, written only when
        /// augmentation was asked for (see `augmentation`, `notesDropped`).
        public var augment: Augment? = nil
        /// With `--stems-by`: the stems' report (`NAME.stems.json`) and the stem
        /// files written; written only when set (older lines lack them), so set
        /// both or neither.
        public var stemReport: String? = nil
        public var stems: [String]? = nil
        /// With `--timbres`: what each track drew (`TimbrePick`); written only then.
        public var timbres: [TimbrePick]? = nil

        enum CodingKeys: String, CodingKey {
            case input, output, status, error
            case carillonVersion = "carillon_version", soundFont = "soundfont", soundFontBytes = "soundfont_bytes"
            case augment, stemReport = "stems_json", stems, timbres
        }
    }

    public subscript<Value>(dynamicMember field: WritableKeyPath<Head, Value>) -> Value {
        get { head[keyPath: field] }
        set { head[keyPath: field] = newValue }
    }

    public subscript<Value>(dynamicMember field: WritableKeyPath<RenderJob.Summary.Facts, Value>) -> Value {
        get { facts[keyPath: field] }
        set { facts[keyPath: field] = newValue }
    }

    /// The file's draw as applied, as the manifest writes it (its program
    /// map's name, not the map), and the notes the transposition dropped
    /// (nil: not rendered).
    public struct Augment: Sendable, Equatable, Codable {
        public var seed: UInt64
        public var transpose: Int
        @OrNull public var tempo: Double?
        @OrNull public var velocityScale: Double?
        @OrNull public var programMap: String?
        @OrNull public var notesDropped: Int? = nil

        enum CodingKeys: String, CodingKey {
            case seed, transpose, tempo, velocityScale = "velocity_scale", programMap = "program_map", notesDropped = "notes_dropped"
        }
    }

    /// The draw of the `augment` object (a null tempo or scale, a non-finite
    /// one written, reads back as NaN); setting it keeps `notesDropped`.
    public var augmentation: Augmentation.Draw? {
        get {
            head.augment.map { Augmentation.Draw(seed: $0.seed, transpose: $0.transpose, tempo: $0.tempo ?? .nan,
                                                 velocityScale: $0.velocityScale ?? .nan, programMapName: $0.programMap) }
        }
        set {
            head.augment = newValue.map { Augment(seed: $0.seed, transpose: $0.transpose, tempo: $0.tempo, velocityScale: $0.velocityScale,
                                                  programMap: $0.programMapName, notesDropped: head.augment?.notesDropped) }
        }
    }

    /// The notes `--transpose` dropped: part of the `augment` object, so kept
    /// only once `augmentation` is set.
    public var notesDropped: Int? {
        get { head.augment?.notesDropped }
        set { head.augment?.notesDropped = newValue }
    }

    public init(input: String, output: String, status: Status, carillonVersion: String, soundFont: String, soundFontBytes: Int) {
        head = Head(input: input, output: output, status: status, carillonVersion: carillonVersion, soundFont: soundFont,
                    soundFontBytes: soundFontBytes)
    }

    /// The facts of a finished render `s` (its loudness included, when measured).
    public mutating func record(_ s: RenderJob.Summary) {
        facts = s.facts
        notesDropped = s.notesDropped   // kept only with augmentation
        if s.augmentation?.timbres != nil { head.timbres = s.timbres }
    }

    /// The entry as one line of JSON (no newline), through `DatasetJSON`.
    /// Every field is present (`augment` only when augmentation was asked for,
    /// `stems_json` and `stems` only with `--stems-by`, `timbres` only with
    /// `--timbres`); absent values and
    /// non-finite numbers are `null`.
    public var jsonLine: String { DatasetJSON.line(self) }

    // The two parts in one object: each part's keys, written and read by the compiler's Codable.
    public init(from decoder: any Decoder) throws {
        head = try Head(from: decoder)
        facts = try RenderJob.Summary.Facts(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        try head.encode(to: encoder)
        try facts.encode(to: encoder)
    }
}

extension ManifestEntry {
    /// What resuming reads of a line of an earlier manifest: its input (a line
    /// without one is not a manifest line), output and status (nil when absent
    /// or not strings).
    struct Record: Decodable {
        var input: String
        var output: String?
        var status: String?

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: Head.CodingKeys.self)
            input = try c.decode(String.self, forKey: .input)
            output = try? c.decodeIfPresent(String.self, forKey: .output)
            status = try? c.decodeIfPresent(String.self, forKey: .status)
        }
    }
}

public struct ManifestError: Error, Equatable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot write manifest \(path): \(reason)" }
}

/// Appends manifest lines to a file as each input finishes: opened with
/// O_APPEND, each line one write(2) under a lock, so lines from several
/// workers never interleave and an interrupted batch keeps every line
/// written so far. Any thread.
///
/// One line per rendering (an input, or an input and a font with
/// `--soundfont-pick all`: each its own output), even across reruns: before
/// anything renders, the lines of this batch's inputs are dropped, except
/// the line of a rendering that will be skipped (`--skip-existing`, its
/// output there), which is kept and gets no new line (`reconcile`); a
/// skipped rendering without a kept line gets the line its output set holds
/// (`OutputSet.manifestLine`: a run killed after the set was committed and
/// before its line was appended). When a
/// line goes, the file is rewritten whole (a temporary file beside it,
/// renamed over it), so a reader never sees a half-rewritten manifest.
/// Lines of other inputs are kept.
public final class ManifestWriter: Sendable {
    public let path: String
    /// Inputs with a line from an earlier run kept.
    public let recorded: Set<String>
    /// Outputs whose line from an earlier run was kept: skipping their
    /// rendering writes no new line.
    public let recordedOutputs: Set<String>
    /// Lines of the earlier manifest that were not JSON objects with an
    /// `input` (e.g. cut short when a disk filled): dropped.
    public let unreadableLines: Int
    private let fd: Int32
    private let lock = Mutex(())

    /// Opens (or creates) the manifest at `path` for a batch of `items`;
    /// `skipped(item)` says whether the batch will leave that item alone.
    public init(path: String, items: [BatchItem] = [], skipped: (BatchItem) -> Bool = { _ in false }) throws(ManifestError) {
        self.path = path
        var kept = Reconciled(lines: [], recorded: [], recordedOutputs: [], unreadable: 0, changed: false)
        // A run killed while rewriting the manifest left its temporary file: not a manifest, not kept.
        AtomicFile.removeAbandonedTemporaries(of: path)
        let earlier: String?
        do throws(AtomicFileError) { earlier = try AtomicFile.contents(path) } catch { throw ManifestError(path: path, reason: error.reason) }
        if let text = earlier {
            kept = Self.reconcile(text, items: items, skipped: skipped)
            // A file with text but not one manifest line is someone else's (a MIDI
            // file named by mistake, e.g. `--manifest` taking the first input as its
            // value): rewriting it would destroy it.
            if kept.lines.isEmpty && kept.unreadable > 0 {
                throw ManifestError(path: path, reason: "it exists and is not a manifest (none of its lines is a JSON object with an \"input\"); name a new file, or remove this one")
            }
            if kept.changed {
                do throws(AtomicFileError) { try AtomicFile.replace(path, with: kept.lines) } catch {
                    throw ManifestError(path: path, reason: error.reason)
                }
            }
        }
        recorded = kept.recorded
        recordedOutputs = kept.recordedOutputs
        unreadableLines = kept.unreadable
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw ManifestError(path: path, reason: errnoText()) }
    }

    deinit { close(fd) }

    public struct Reconciled: Equatable, Sendable {
        /// The lines to keep, in their order, without newlines.
        public var lines: [String]
        /// The inputs, and the outputs, of the lines kept for skipped renderings.
        public var recorded: Set<String>
        public var recordedOutputs: Set<String>
        public var unreadable: Int
        /// Some line goes (or the text did not end with a newline).
        public var changed: Bool
    }

    /// Which lines of an earlier manifest stay. A line about an input of this
    /// batch stays only when the batch skips one of that input's renderings
    /// and the line is the last `ok` one (else the last `skipped` one) for
    /// that rendering's output; every other line about the batch's inputs
    /// goes, since the batch writes a new one. Lines about other inputs stay;
    /// lines that cannot be read go.
    public static func reconcile(_ text: String, items: [BatchItem], skipped: (BatchItem) -> Bool) -> Reconciled {
        var inputs: Set<String> = []
        var byOutput: [String: BatchItem] = [:]
        for item in items { inputs.insert(item.input); byOutput[item.output] = item }
        var lines: [(text: String, record: ManifestEntry.Record)] = []
        var unreadable = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if let record = DatasetJSON.decode(ManifestEntry.Record.self, from: line) { lines.append((String(line), record)) }
            else { unreadable += 1 }
        }
        // The line each rendering keeps if skipped: its output's last ok line, else its last skipped line.
        var keep: [String: (index: Int, ok: Bool)] = [:]
        for (index, line) in lines.enumerated() {
            guard let output = line.record.output, let item = byOutput[output], line.record.input == item.input else { continue }
            let ok = line.record.status == "ok"
            guard ok || line.record.status == "skipped" else { continue }
            if let best = keep[output], best.ok && !ok { continue }
            keep[output] = (index, ok)
        }
        var recorded: Set<String> = [], recordedOutputs: Set<String> = []
        var kept: [String] = []
        for (index, line) in lines.enumerated() {
            let input = line.record.input
            if inputs.contains(input) {
                guard let output = line.record.output, keep[output]?.index == index, let item = byOutput[output],
                      skipped(item) else { continue }
                recorded.insert(input)
                recordedOutputs.insert(output)
            }
            kept.append(line.text)
        }
        let changed = kept.count != lines.count || unreadable > 0 || (!text.isEmpty && !text.hasSuffix("\n"))
        return Reconciled(lines: kept, recorded: recorded, recordedOutputs: recordedOutputs, unreadable: unreadable,
                          changed: changed)
    }

    /// Appends `entry`'s line.
    public func append(_ entry: ManifestEntry) throws(ManifestError) {
        try append(line: entry.jsonLine)
    }

    /// Appends one line (JSON, without its newline): one write(2) under the lock.
    public func append(line: String) throws(ManifestError) {
        var line = line + "\n"
        let failure: String? = lock.withLock { _ in line.withUTF8 { AtomicFile.writeAll(fd, $0) } }
        if let failure { throw ManifestError(path: path, reason: failure) }
    }
}
