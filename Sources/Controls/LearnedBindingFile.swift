import ControlDefinitions
import Foundation
import MIDI
import MappingFiles
import Parameters

/// The file side of MIDI learn: a binding written into the mapping file — its
/// text patched with comments and layout kept (`MappingPatch`), checked as
/// `carillon mapping check` would, saved atomically.
enum LearnedBindingFile {
    /// Binds `source` to `target` in `mapping`'s file and returns what was
    /// bound and the mapping as the file now says. Nothing is written when
    /// the patched text does not check.
    static func save(_ target: LearnTarget, source: ControlSource, in mapping: ControlMapping)
        throws(MappingPatch.Failure) -> (LearnedBinding, ControlMapping)
    {
        let path = mapping.file
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw MappingPatch.Failure("cannot read \(path)")
        }
        let result = try learnedText(target, source: source, mapping: mapping, fileText: text)
        try writeAtomically(result.text, to: path)
        return (LearnedBinding(control: result.control, source: source, created: result.created, file: path), result.mapping)
    }

    /// The kind a new control gets for a source and a parameter: a toggle for
    /// on/off parameters, a momentary control for triggers, else a knob for
    /// a CC, a fader for 14-bit and NRPN/RPN sources, a button for a note.
    static func learnedKind(for source: ControlSource, driving info: ParameterInfo) -> ControlKind {
        switch info.kind {
        case .toggle: return .toggle
        case .trigger: return .momentary
        default: break
        }
        switch source.message {
        case .note: return .button
        case .cc: return .knob
        default: return .fader
        }
    }

    /// The mapping file's text with the binding, checked as `carillon mapping
    /// check` would; and the control it names. Throws the reason as text.
    static func learnedText(
        _ target: LearnTarget, source: ControlSource, mapping: ControlMapping, fileText: String
    ) throws(MappingPatch.Failure) -> (text: String, control: String, created: Bool, mapping: ControlMapping) {
        var controlName: String
        var created = false
        let patched: String
        switch target {
        case .control(let name):
            controlName = name
            patched = try MappingPatch.settingSource(source, ofControl: name, in: fileText)
        case .parameter(let address):
            if let driver = mapping.controls.first(where: { $0.targets.contains { $0.address == address } }) {
                controlName = driver.name
                patched = try MappingPatch.settingSource(source, ofControl: driver.name, in: fileText)
            } else {
                created = true
                let names = Set(mapping.controls.map(\.name))
                controlName = address.description
                var n = 2
                while names.contains(controlName) { controlName = "\(address) \(n)"; n += 1 }
                let kind = learnedKind(for: source, driving: ParameterRegistry.standard.info(for: address))
                let defaultChannel = MappingPatch.defaultChannel(in: fileText)
                patched = try MappingPatch.appendingControl([
                    ("name", MappingPatch.scalar(controlName)),
                    ("kind", kind.rawValue),
                    ("source", MappingPatch.sourceText(source, defaultChannel: defaultChannel, each: false)),
                    ("targets", "[\(address)]"),
                ], to: fileText)
            }
        }
        do {
            let checked = try ControlMapping.parse(yaml: patched, file: mapping.file)
            return (patched, controlName, created, checked)
        } catch {
            throw MappingPatch.Failure(error.description)
        }
    }

    /// A temporary file beside the mapping, renamed over it: a reader (the
    /// hot-reload watcher, an editor) sees the old file or the new, never half.
    /// The temporary file's contents reach the disk (`fsync`) before the rename,
    /// so a crash after it leaves the new file whole. `tag` names who writes (`learn`, `save`).
    static func writeAtomically(_ text: String, to path: String, tag: String = "learn") throws(MappingPatch.Failure) {
        let url = URL(fileURLWithPath: path)
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(tag)-\(getpid()).tmp").path
        do {
            try text.write(toFile: temporary, atomically: false, encoding: .utf8)
            if let mode = try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] {
                try? FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: temporary)
            }
            let fd = open(temporary, O_RDONLY)
            guard fd >= 0, fsync(fd) == 0 else {
                if fd >= 0 { close(fd) }
                throw MappingPatch.Failure("cannot write \(temporary)")
            }
            close(fd)
        } catch {
            unlink(temporary)
            throw MappingPatch.Failure("cannot write \(temporary)")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw MappingPatch.Failure("cannot replace \(path) (\(reason))")
        }
    }
}
