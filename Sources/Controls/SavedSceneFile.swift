import Foundation
import MIDI
import MappingFiles
import Parameters

/// "Save as scene": what plays now written into the mapping file as a scene
/// — each of the rig's channels' preset, the parameter values that differ
/// from the table's defaults, and the current scene's own zones (copied as
/// written) —, the text patched with comments and layout kept
/// (`MappingPatch.savingScene`), checked as `carillon mapping check` would,
/// the old file kept beside it (`FILE.bak`), and the new one renamed over it.
enum SavedSceneFile {
    /// What a scene saves, taken under the hub's lock.
    struct Snapshot {
        var mapping: ControlMapping
        var channels: [Channel]
        var presets: ChannelPresets
        var values: [(address: ParameterAddress, value: Double)]
        /// The current scene, when it has zones of its own (they are copied).
        var zonesOf: String?
    }

    /// The scene's fields: `channels:` and `set:`, each in flow style on one line.
    static func fields(_ s: Snapshot) -> [MappingPatch.Field] {
        var fields: [MappingPatch.Field] = []
        let channels = s.channels.map { c in
            let e = s.presets[c]
            return "\(c.intValue + 1): { bank: \(e.bank), program: \(e.program) }"
        }
        if !channels.isEmpty { fields.append(("channels", "{ " + channels.joined(separator: ", ") + " }")) }
        let set = s.values.map { "\($0.address): \(number($0.value))" }
        if !set.isEmpty { fields.append(("set", "{ " + set.joined(separator: ", ") + " }")) }
        return fields
    }

    /// The parameters a scene keeps: mixer, effects, plugin controls, the
    /// keyboard's transpose and the channels' controllers (not bank select:
    /// `channels:` says it); not transport commands, notes, program changes.
    static func kept(_ address: ParameterAddress) -> Bool {
        switch address.spec.application {
        case .store, .instrumentEffect, .keyboard: return true
        case .channelMessage(.controlChange(_, let cc)): return cc.value != 0 && cc.value != 32
        case .channelMessage, .transport, .scene: return false
        }
    }

    /// `-6`, `0.35`: a value as short as reads back the same.
    static func number(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : "\(v)"
    }

    /// What a scene is saved as: a name given, or `Saved N`, the first N no
    /// scene in the file has (the terminal's `w`: chosen from the file, since a
    /// save the watcher has not reloaded yet added a scene the hub does not hold).
    enum Name {
        case given(String)
        case firstFreeSaved

        func resolved(among scenes: [Scene]) -> String {
            switch self {
            case .given(let name): return name
            case .firstFreeSaved:
                let names = Set(scenes.map(\.name))
                return (1...).lazy.map { "Saved \($0)" }.first { !names.contains($0) } ?? "Saved"
            }
        }
    }

    /// The file's text with the scene saved, checked; nothing is written.
    static func savedText(_ name: Name, _ s: Snapshot, fileText: String) throws(MappingPatch.Failure) -> (name: String, text: String, mapping: ControlMapping) {
        // The scenes the file has now: a save the watcher has not reloaded yet added one the hub does not hold.
        let onFile = (try? ControlMapping.parse(yaml: fileText, file: s.mapping.file)) ?? s.mapping
        let name = name.resolved(among: onFile.scenes)
        guard !name.trimmingCharacters(in: .whitespaces).isEmpty else { throw MappingPatch.Failure("a scene needs a name") }
        var patched = try MappingPatch.savingScene(name, fields: fields(s), zonesOf: s.zonesOf, in: fileText)
        // A new scene goes last: the scene selectors that list their values or steps must reach it too.
        if !onFile.scenes.contains(where: { $0.name == name }) {
            patched = try MappingPatch.reachingEveryScene(onFile.scenes.count + 1, controls: onFile.controls, in: patched)
        }
        do {
            return (name, patched, try ControlMapping.parse(yaml: patched, file: s.mapping.file))
        } catch {
            throw MappingPatch.Failure(error.description)
        }
    }

    /// Saves the scene into the snapshot's mapping file; returns its name and the mapping as the file now says.
    static func save(_ name: Name, _ s: Snapshot) throws(MappingPatch.Failure) -> (name: String, mapping: ControlMapping) {
        let path = s.mapping.file
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw MappingPatch.Failure("cannot read \(path)")
        }
        let saved = try savedText(name, s, fileText: text)
        sweepTemporaries(beside: path)
        try LearnedBindingFile.writeAtomically(text, to: path + ".bak", tag: "save")
        try LearnedBindingFile.writeAtomically(saved.text, to: path, tag: "save")
        return (saved.name, saved.mapping)
    }
}

extension SavedSceneFile {
    /// Removes the temporary files an earlier save left beside the mapping
    /// when its process was killed between writing and renaming
    /// (`.FILE.save-PID.tmp`, `.FILE.bak.save-PID.tmp`, the process gone).
    static func sweepTemporaries(beside path: String) {
        let url = URL(fileURLWithPath: path)
        let folder = url.deletingLastPathComponent().path
        let name = url.lastPathComponent
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for entry in entries where entry.hasSuffix(".tmp")
            && (entry.hasPrefix(".\(name).save-") || entry.hasPrefix(".\(name).bak.save-")) {
            let pidText = entry.dropLast(".tmp".count).split(separator: "-").last.map(String.init) ?? ""
            guard let pid = Int32(pidText), pid != getpid(), kill(pid, 0) == -1, errno == ESRCH else { continue }
            unlink(folder + "/" + entry)
        }
    }
}

extension ControlHub {
    /// Saves what plays now as scene `name` in the mapping file (replacing a
    /// scene of that name): each of the rig's channels' preset
    /// (`soundChannels`), the parameter values that differ from their
    /// defaults, the current scene's own zones. The file keeps its comments
    /// and layout, its old text is kept as `FILE.bak`, and it is replaced
    /// atomically (a reader sees the old file or the new). The hub then holds
    /// the mapping as the file says, no scene current: at once, or — when a
    /// watcher reloads the file (`reloadsFromItsWatcher`) — once its one
    /// reload has run. Any thread; not under the hub's lock while the file is
    /// written (it waits for the disk: not on an async task's thread).
    @discardableResult
    public func saveScene(named name: String) throws(SceneSaveError) -> ControlMapping {
        try saveScene(.given(name)).mapping
    }

    /// As `saveScene(named:)`, named `Saved N`: the first N no scene in the
    /// file has (the terminal's `w`). Returns the name with the mapping.
    public func saveNewScene() throws(SceneSaveError) -> (name: String, mapping: ControlMapping) {
        try saveScene(.firstFreeSaved)
    }

    private func saveScene(_ name: SavedSceneFile.Name) throws(SceneSaveError) -> (name: String, mapping: ControlMapping) {
        let channels = soundChannels
        let taken = lock.withLock { () -> SavedSceneFile.Snapshot? in
            guard let mapping = currentMapping, !mapping.file.isEmpty, mapping.file != "<mapping>" else { return nil }
            let values = self.values.all.compactMap { index, value -> (ParameterAddress, Double)? in
                guard let info = ParameterRegistry.standard.info(at: index), info.kind != .trigger,
                      value != info.defaultValue, SavedSceneFile.kept(info.address) else { return nil }
                return (info.address, value)
            }
            let zonesOf = sceneIndex.flatMap { i in
                mapping.scenes.indices.contains(i) && mapping.scenes[i].zones != nil ? mapping.scenes[i].name : nil
            }
            return SavedSceneFile.Snapshot(mapping: mapping, channels: channels, presets: presets,
                                           values: values.map { (address: $0.0, value: $0.1) }, zonesOf: zonesOf)
        }
        guard let snapshot = taken else {
            throw SceneSaveError(description: "no mapping file to save a scene in: start with --mapping FILE")
        }
        let saved: (name: String, mapping: ControlMapping)
        do { saved = try SavedSceneFile.save(name, snapshot) } catch {
            let shown: String
            if case .given(let n) = name { shown = "scene '\(n)'" } else { shown = "a scene" }
            throw SceneSaveError(description: "cannot save \(shown) in \(snapshot.mapping.file): \(error)")
        }
        takeWritten(saved.mapping)
        return saved
    }
}

/// Why "save as scene" wrote nothing: no mapping file, a name or file it cannot take, a failed write.
public struct SceneSaveError: Error, Equatable, Sendable, CustomStringConvertible {
    public var description: String
    public init(description: String) { self.description = description }
}
