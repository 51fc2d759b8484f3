import CFluidSynth

/// A `fluid_settings_t`: the key/value options a synth is created from.
/// Not thread-safe; configure before creating the synth.
public final class Settings {
    let handle: OpaquePointer

    public init() throws(FluidSynthError) {
        Logging.silenceOnce()
        handle = try check(new_fluid_settings(), "new_fluid_settings")
    }

    deinit { delete_fluid_settings(handle) }

    public func set(_ name: String, _ value: Int) throws(FluidSynthError) {
        try check(fluid_settings_setint(handle, name, Int32(clamping: value)), "fluid_settings_setint",
                  orThrow: .settingRejected(name: name, value: String(value)))
    }

    public func set(_ name: String, _ value: Double) throws(FluidSynthError) {
        try check(fluid_settings_setnum(handle, name, value), "fluid_settings_setnum",
                  orThrow: .settingRejected(name: name, value: String(value)))
    }

    public func set(_ name: String, _ value: String) throws(FluidSynthError) {
        try check(fluid_settings_setstr(handle, name, value), "fluid_settings_setstr",
                  orThrow: .settingRejected(name: name, value: value))
    }

    public func set(_ name: String, _ value: Bool) throws(FluidSynthError) {
        try set(name, value ? 1 : 0)
    }

    public func double(_ name: String) throws(FluidSynthError) -> Double {
        var value = 0.0
        try check(fluid_settings_getnum(handle, name, &value), "fluid_settings_getnum")
        return value
    }

    public func int(_ name: String) throws(FluidSynthError) -> Int {
        var value: Int32 = 0
        try check(fluid_settings_getint(handle, name, &value), "fluid_settings_getint")
        return Int(value)
    }
}

/// FluidSynth logs to stderr by default; Carillon reports errors itself, as typed errors.
enum Logging {
    private static let silenced: Void = {
        for level in [FLUID_PANIC, FLUID_ERR, FLUID_WARN, FLUID_INFO, FLUID_DBG] {
            _ = fluid_set_log_function(Int32(level.rawValue), nil, nil)
        }
    }()
    static func silenceOnce() { _ = silenced }
}
