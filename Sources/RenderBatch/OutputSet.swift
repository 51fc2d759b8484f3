import OfflineRender
import Foundation
import SoundFile
#if canImport(Glibc)
import Glibc
#endif

/// Every file one rendering writes: its audio, its labels (`--labels`), its
/// stems folder (`--stems`), its stems report (`--stems-by`) and its manifest
/// line (`--manifest`: `NAME.manifest.json`, the line the batch appends to the
/// manifest, so a run resumed after a kill between the set's commit and that
/// append still has the input's figures), named once.
///
/// A rendering writes each of them under a staged name in its final folder
/// (`NAME.carillon-part` hidden beside the final name: `.song.wav.carillon-part`,
/// the stems into the folder `.song.carillon-part/`), then `commit` moves
/// them onto their names together: first the final audio goes (the input is
/// unfinished from then on), then the stems folder (renamed whole, or its
/// files into a folder that is already there), the labels, the report and
/// the manifest line, and the audio LAST. The audio under its name is the mark of a finished
/// rendering, so a process killed at any moment leaves each rendering
/// complete or without audio, and `isComplete` (what `--skip-existing` asks)
/// wants the audio and every companion. A failure during `commit` removes
/// everything of the set; `discard` removes what is staged. Staged names
/// left by a killed run are removed by `sweep` before the rendering runs
/// again, and are never a final name.
///
/// Not on the render thread.
public struct OutputSet: Sendable, Equatable {
    /// One file (or the stems folder) of the set: where it is written, where it goes.
    public struct Member: Sendable, Equatable {
        public var staged: String
        public var final: String
    }

    public let audio: Member
    /// The label files (notes, beats, tempo), with `--labels`.
    public let labels: [Member]
    public let labelFormat: RenderLabels.Format?
    /// `NAME.stems.json`, with `--stems-by`.
    public let stemReport: Member?
    /// The stems folder, with `--stems`.
    public let stems: Member?
    /// `NAME.manifest.json`, the rendering's manifest line, with `--manifest`.
    public let manifestLine: Member?
    /// The audio goes to standard output (`-o -`): not staged, not renamed.
    public let audioToStandardOutput: Bool

    /// What a staged name ends with.
    public static let stagedSuffix = ".carillon-part"

    /// The set of `item` with the batch's companions: `labels` in that format,
    /// a stems report when `stemReport` (`--stems-by`) and stems are written,
    /// the manifest line when `manifestLine` (`--manifest`) and the audio goes to a file.
    public init(item: BatchItem, labels: RenderLabels.Format?, stemReport: Bool, manifestLine: Bool = false) {
        audioToStandardOutput = item.output == AudioFileWriter.standardOutput
        audio = Member(staged: audioToStandardOutput ? item.output : Self.staged(item.output), final: item.output)
        labelFormat = labels
        if let labels {
            let p = RenderLabels.paths(beside: item.output, format: labels)
            self.labels = [p.notes, p.beats, p.tempo].map { Member(staged: Self.staged($0), final: $0) }
        } else {
            self.labels = []
        }
        let stemsFolder = item.stems.map(Self.trimmingSlashes)
        stems = stemsFolder.map { Member(staged: Self.stagedFolder($0), final: $0) }
        self.stemReport = stemReport && stemsFolder != nil
            ? Member(staged: Self.staged(StemReport.path(beside: item.output)), final: StemReport.path(beside: item.output)) : nil
        let line = Self.manifestLinePath(beside: item.output)
        self.manifestLine = manifestLine && !audioToStandardOutput ? Member(staged: Self.staged(line), final: line) : nil
    }

    /// `NAME.manifest.json` beside `NAME.wav`: the rendering's manifest line.
    public static func manifestLinePath(beside output: String) -> String {
        AtomicFile.companion(of: output, suffix: ".manifest.json")
    }

    /// The companions (everything but the audio), in the order `commit` moves them.
    var companions: [Member] { (stems.map { [$0] } ?? []) + files.filter { $0 != audio } }

    /// The set's files (not the stems folder): audio, labels, report, manifest line.
    var files: [Member] { [audio] + labels + (stemReport.map { [$0] } ?? []) + (manifestLine.map { [$0] } ?? []) }

    /// `dir/.name.carillon-part` for `dir/name`.
    static func staged(_ path: String) -> String {
        let (folder, name) = split(path)
        return folder + "." + name + stagedSuffix
    }

    /// The staged stems folder: beside the final one, or inside it when the
    /// final name has no parent to stage in (`.`, `..`, `/`).
    static func stagedFolder(_ folder: String) -> String {
        let (_, name) = split(folder)
        if name.isEmpty || name == "." || name == ".." { return (folder == "/" ? "" : folder) + "/." + "stems" + stagedSuffix }
        return staged(folder)
    }

    static func trimmingSlashes(_ path: String) -> String {
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        return p
    }

    /// (`dir/`, `name`) of `dir/name`; (``, `name`) without a folder.
    static func split(_ path: String) -> (String, String) {
        guard let slash = path.lastIndex(of: "/") else { return ("", path) }
        return (String(path[...slash]), String(path[path.index(after: slash)...]))
    }

    // MARK: - Before a rendering

    /// Whether the rendering is finished: its audio a regular file and every
    /// companion there (the label files, the report, the stems folder, and
    /// each stem file the report names). What `--skip-existing` leaves alone.
    public func isComplete() -> Bool {
        if audioToStandardOutput { return false }
        guard Self.isFile(audio.final) else { return false }
        for member in labels where !Self.isFile(member.final) { return false }
        if let stemReport, !Self.isFile(stemReport.final) { return false }
        if manifestLine != nil && storedManifestLine() == nil { return false }
        if let stems, !Self.isFolder(stems.final) { return false }
        if stemReport != nil {
            guard let files = stemFilesInReport() else { return false }
            // By name in the stems folder: the report's paths are as the run that wrote it named the folder.
            for file in files where !Self.isFile(stems!.final + "/" + Self.split(file).1) { return false }
        }
        return true
    }

    /// The stem files the report names, nil when it cannot be read.
    func stemFilesInReport() -> [String]? {
        guard let stemReport, let text = try? AtomicFile.contents(stemReport.final) else { return nil }
        return Self.stemFiles(inReport: text)
    }

    /// The manifest line the set holds (`manifestLine`), nil when there is
    /// none or it is not one line of a manifest.
    public func storedManifestLine() -> String? {
        guard let manifestLine, let text = try? AtomicFile.contents(manifestLine.final) else { return nil }
        let line = text.hasSuffix("\n") ? String(text.dropLast()) : text
        guard !line.contains("\n"), DatasetJSON.decode(ManifestEntry.Record.self, from: line) != nil else { return nil }
        return line
    }

    /// The `file` of each stem in a report's JSON (silent stems have none); nil when it is not a report.
    static func stemFiles(inReport text: String) -> [String]? {
        DatasetJSON.decode(StemReport.self, from: text)?.stems.compactMap(\.file)
    }

    /// Removes what a killed run left under the set's staged names (and the
    /// writers' own temporary files beside them), so a rendering starts clean.
    public func sweep() {
        for member in files where !(member == audio && audioToStandardOutput) {
            Self.removeTree(member.staged)
            Self.removeTemporaries(of: member.staged)
        }
        if let stems { Self.removeTree(stems.staged) }
    }

    /// Makes the audio's folder and the staged stems folder (with parents).
    public func prepare() throws(OutputSetError) {
        if let stems {
            Self.removeTree(stems.staged)
            do throws(FolderError) { try Folders.make(stems.staged) } catch {
                throw .cannotWrite(path: stems.staged, reason: "\(error)")
            }
        }
    }

    // MARK: - Committing

    /// Writes the labels and the report under their staged names, then moves
    /// the whole set onto its names, the audio last (see the type). The
    /// audio and the stems must be complete under their staged names. On any
    /// failure everything of the set is removed, staged and final.
    /// `stemFiles`: the stem files the render wrote, by their final paths;
    /// `manifestLine`: the rendering's line, with `--manifest`.
    public func commit(labels rendered: RenderLabels?, report: StemReport?, stemFiles: [String],
                       manifestLine line: String? = nil) throws(OutputSetError) {
        do throws(OutputSetError) {
            if let labelFormat {
                guard let rendered else { throw .missing("labels") }
                let rows = [rendered.noteRows(labelFormat), rendered.beatRows(labelFormat), rendered.tempoRows(labelFormat)]
                for (member, lines) in zip(labels, rows) { try Self.writeLines(member.staged, lines) }
            }
            if let stemReport {
                guard let report else { throw .missing("stems report") }
                try Self.writeLines(stemReport.staged, [report.json])
            }
            if let manifestLine {
                guard let line else { throw .missing("manifest line") }
                try Self.writeLines(manifestLine.staged, [line])
            }
            // From here the input is unfinished until its audio is back.
            if !audioToStandardOutput { try Self.remove(audio.final) }
            if let stems { try Self.moveFolder(stems) }
            for member in labels { try Self.rename(member) }
            if let stemReport { try Self.rename(stemReport) }
            if let manifestLine { try Self.rename(manifestLine) }
            if !audioToStandardOutput { try Self.rename(audio) }
        } catch {
            removeAll(stemFiles: stemFiles)
            throw error
        }
    }

    /// Removes what is staged (a failed or interrupted rendering): final
    /// names of an earlier run stay.
    public func discard() {
        sweep()
    }

    /// Removes every file of the set, staged and final: the stems folder's
    /// files the staged folder held (a folder made by the set goes whole).
    /// `stemFiles`: the stem files of the render (final paths); the stems
    /// folder goes too when nothing else is in it (it may hold a user's files).
    public func removeAll(stemFiles: [String]) {
        sweep()
        for member in files where !(member == audio && audioToStandardOutput) { unlink(member.final) }
        if let stems {
            for file in stemFiles { unlink(file) }
            rmdir(stems.final)
        }
    }

    // MARK: - Files

    static func isFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    static func isFolder(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// The names in `folder` (not `.` and `..`); empty when it cannot be read.
    static func entries(_ folder: String) -> [String] {
        guard let dir = opendir(folder) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: Int(NAME_MAX) + 1) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes `path`: a file, or a folder of files (a staged stems folder).
    static func removeTree(_ path: String) {
        if isFolder(path) {
            for name in entries(path) { unlink(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }

    /// Removes the temporary files writers make beside `path` (`.NAME.PID….tmp`).
    static func removeTemporaries(of path: String) {
        let (folder, name) = split(path)
        let prefix = "." + name + "."
        for entry in entries(folder.isEmpty ? "." : folder) where entry.hasPrefix(prefix) && entry.hasSuffix(".tmp") {
            unlink(folder + entry)
        }
    }

    static func remove(_ path: String) throws(OutputSetError) {
        if unlink(path) != 0 && errno != ENOENT { throw .cannotWrite(path: path, reason: errnoText()) }
    }

    static func rename(_ member: Member) throws(OutputSetError) {
        guard Glibc.rename(member.staged, member.final) == 0 else {
            throw .cannotWrite(path: member.final, reason: errnoText())
        }
    }

    /// The staged stems folder onto its name: renamed whole when the final
    /// folder is not there, else its files moved in one by one and the staged folder removed.
    static func moveFolder(_ stems: Member) throws(OutputSetError) {
        if !isFolder(stems.final) {
            try rename(stems)
            return
        }
        for name in entries(stems.staged) {
            try rename(Member(staged: stems.staged + "/" + name, final: stems.final + "/" + name))
        }
        if rmdir(stems.staged) != 0 { throw .cannotWrite(path: stems.staged, reason: errnoText()) }
    }

    static func writeLines(_ path: String, _ lines: [String]) throws(OutputSetError) {
        do throws(AtomicFileError) { try AtomicFile.replace(path, with: lines) } catch {
            throw .cannotWrite(path: path, reason: error.reason)
        }
    }
}

public enum OutputSetError: Error, Equatable, CustomStringConvertible {
    case cannotWrite(path: String, reason: String)
    /// A companion asked for that the render did not produce.
    case missing(String)

    public var description: String {
        switch self {
        case .cannotWrite(let path, let reason): "cannot write \(path): \(reason)"
        case .missing(let what): "the render produced no \(what)"
        }
    }
}
