import ArgumentParser
import OfflineRender

/// Runs a shared option check (`RenderOptionChecks`, the C ABI's too) in a
/// `validate()`: its mistake becomes the argument parser's `ValidationError`,
/// with the same one-line message.
func checked<T>(_ check: () throws(RenderOptionError) -> T) throws -> T {
    do { return try check() } catch { throw ValidationError(error.description) }
}
