import CFluidSynth
#if canImport(Glibc)
import Glibc
#endif

/// A SoundFont loaded into a synth. Unloads itself from the synth when released.
public final class SoundFont {
    public let path: String
    public let id: Int32
    let synth: Synth
    /// The view it was loaded from, if any: FluidSynth reopens it to load samples.
    public let view: VirtualSoundFont?

    init(path: String, id: Int32, synth: Synth, view: VirtualSoundFont? = nil) {
        self.path = path; self.id = id; self.synth = synth; self.view = view
    }

    deinit { _ = fluid_synth_sfunload(synth.handle, id, 0) }

    /// One instrument of the font: bank, program number and name.
    public struct Preset: Hashable, Sendable, CustomStringConvertible {
        public var bank: Int
        public var program: Int
        public var name: String
        public init(bank: Int, program: Int, name: String) {
            self.bank = bank; self.program = program; self.name = name
        }
        public var description: String {
            "\(String(bank).leftPadded(3)):\(String(program).leftPadded(3)) \(name)"
        }
    }

    /// Every preset of the font, in bank then program order.
    public var presets: [Preset] {
        guard let font = fluid_synth_get_sfont_by_id(synth.handle, id) else { return [] }
        var result: [Preset] = []
        fluid_sfont_iteration_start(font)
        while let preset = fluid_sfont_iteration_next(font) {
            let name = fluid_preset_get_name(preset).map { String(cString: $0) } ?? ""
            result.append(Preset(bank: Int(fluid_preset_get_banknum(preset)),
                                 program: Int(fluid_preset_get_num(preset)), name: name))
        }
        return result.sorted { ($0.bank, $0.program) < ($1.bank, $1.program) }
    }

    /// Why `path` cannot be loaded as a SoundFont, checked before FluidSynth tries
    /// (FluidSynth's own failure says only "failed").
    static func problem(with path: String) -> FluidSynthError? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            return errno == ENOENT || errno == ENOTDIR
                ? .soundFontNotFound(path: path)
                : .soundFontUnreadable(path: path, reason: String(cString: strerror(errno)))
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            return .soundFontUnreadable(path: path, reason: "is a directory")
        }
        guard access(path, R_OK) == 0 else {
            return .soundFontUnreadable(path: path, reason: String(cString: strerror(errno)))
        }
        guard fluid_is_soundfont(path) != 0 else { return .notASoundFont(path: path) }
        return nil
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
