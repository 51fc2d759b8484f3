import Parameters
import FluidSynth
import Synchronization

/// The presets of the SoundFonts a process names, each font read once
/// (`SoundFont.presets(at:)`: preset data only, no sample), for listing
/// them (`carillon presets`) and for finding a preset by name (mappings, OSC).
public final class PresetCatalog: Sendable {
    public static let shared = PresetCatalog()

    private let read = Mutex<[String: Result<[FontPreset], FluidSynthError>]>([:])

    public init() {}

    /// The presets of the font at `path`, in bank then program order. Not on the render thread.
    public func presets(of path: String) throws(FluidSynthError) -> [FontPreset] {
        if let known = read.withLock({ $0[path] }) { return try known.get() }
        let result: Result<[FontPreset], FluidSynthError>
        do throws(FluidSynthError) {
            result = .success(try SoundFont.presets(at: path).map { FontPreset(bank: $0.bank, program: $0.program, name: $0.name) })
        } catch {
            result = .failure(error)
        }
        read.withLock { $0[path] = result }
        return try result.get()
    }

    /// The font a channel plays, found as `--soundfont` is: `channelFont`
    /// (a mapping's `soundfont:` for it), else `sessionFont`, else the search
    /// order's (`SoundFontLocator`); with its presets, or why not.
    public static func font(_ channelFont: String?, sessionFont: String?) -> Result<(path: String, presets: [FontPreset]), PresetNameError> {
        let path: String
        do { path = try SoundFontLocator(explicitPath: channelFont ?? sessionFont).locate() } catch {
            return .failure(PresetNameError(description: "\(error)"))
        }
        do { return .success((path, try shared.presets(of: path))) } catch {
            return .failure(PresetNameError(description: "\(error)"))
        }
    }
}
