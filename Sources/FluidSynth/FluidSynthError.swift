import CFluidSynth

/// Everything that can go wrong in a FluidSynth call, named after what the user did.
public enum FluidSynthError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No file at the path given for a SoundFont.
    case soundFontNotFound(path: String)
    /// The file exists but is neither an SF2 nor an SF3 SoundFont.
    case notASoundFont(path: String)
    /// The file looked like a SoundFont but could not be read or loaded.
    case soundFontUnreadable(path: String, reason: String)
    /// A setting name FluidSynth does not know, or a value it rejected.
    case settingRejected(name: String, value: String)
    /// Any other failing C call, named by its function.
    case callFailed(function: String)

    public var description: String {
        switch self {
        case .soundFontNotFound(let path): "SoundFont not found: \(path)"
        case .notASoundFont(let path): "not a SoundFont (SF2/SF3): \(path)"
        case .soundFontUnreadable(let path, let reason): "cannot read SoundFont \(path): \(reason)"
        case .settingRejected(let name, let value): "FluidSynth rejected setting \(name)=\(value)"
        case .callFailed(let function): "\(function) failed"
        }
    }
}

/// The one place a FluidSynth return code becomes a typed error.
/// `FLUID_FAILED` (-1) is failure; every other value is passed through.
@discardableResult
func check(
    _ result: Int32, _ function: StaticString, orThrow error: @autoclosure () -> FluidSynthError? = nil
) throws(FluidSynthError) -> Int32 {
    guard result != FLUID_FAILED else {
        throw error() ?? .callFailed(function: "\(function)")
    }
    return result
}

/// The one place a FluidSynth constructor's NULL becomes a typed error.
func check<T>(_ pointer: T?, _ function: StaticString) throws(FluidSynthError) -> T {
    guard let pointer else { throw .callFailed(function: "\(function)") }
    return pointer
}
