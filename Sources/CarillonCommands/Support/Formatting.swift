import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

// How every command writes numbers and times: one formatter per kind, so a
// clock or a level reads the same in `render`, `inspect`, `play` and `live`.

func baseName(_ path: String) -> String {
    path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? path
}

func fail(_ error: any Error) -> Never {
    Diagnostics.error("\(error)")
    CarillonCommand.exit(withError: ExitCode.failure)
}

/// A parameter's value as the parameter table prints it: a whole number without
/// decimals, else up to three places ("0.5", "440", "-12").
func parameterNumber(_ v: Double) -> String {
    v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : formatted(v, 3, trimmed: true)
}

/// `value` with `decimals` places, rounded as C's `%.*f` rounds (what a script
/// comparing with printf expects), never "-0.0". `trimmed`: the zeros after
/// the first decimal dropped ("×0.75", "×1.0"), for factors and timings.
func formatted(_ value: Double, _ decimals: Int, trimmed: Bool = false) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : (value > 0 ? "inf" : "-inf") }
    // The largest double has 309 digits before the point.
    var buffer = [CChar](repeating: 0, count: 360)
    let places = Int32(min(max(decimals, 0), 17))
    let count = withVaList([places, value]) { vsnprintf(&buffer, buffer.count, "%.*f", $0) }
    guard count > 0 else { return String(value) }
    var text = String(decoding: buffer.prefix(Int(count)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    if text.hasPrefix("-") && text.dropFirst().allSatisfy({ $0 == "0" || $0 == "." }) { text.removeFirst() }
    if trimmed, text.contains(".") {
        while text.hasSuffix("0") && !text.hasSuffix(".0") { text.removeLast() }
    }
    return text
}

/// A time as a clock shows it, `m:ss.d` (minutes go past 59: `120:00.0`), with
/// `decimals` places of a second, rounded to the nearest; `inspect` shows milliseconds.
func clock(_ seconds: Double, decimals: Int = 1) -> String {
    guard seconds.isFinite else { return seconds.isNaN ? "nan" : (seconds > 0 ? "inf" : "-inf") }
    let places = min(max(decimals, 0), 6)
    var unit = 1
    for _ in 0..<places { unit *= 10 }
    let scaled = (abs(seconds) * Double(unit)).rounded()
    // Past 2^53 units a Double counts no single unit: say it in seconds instead.
    guard scaled < 9_007_199_254_740_992 else { return formatted(seconds, 0) + " s" }
    let units = Int(scaled)
    let whole = units / unit, fraction = units % unit
    let secs = whole % 60
    var text = (seconds < 0 && units > 0 ? "-" : "") + "\(whole / 60):" + (secs < 10 ? "0" : "") + "\(secs)"
    if places > 0 {
        let digits = String(fraction)
        text += "." + String(repeating: "0", count: places - digits.count) + digits
    }
    return text
}

/// A long stretch of time in words: "2 h 13 min 20 s", "5 min 0 s".
func span(_ seconds: Double) -> String {
    guard seconds.isFinite, abs(seconds) < 9e15 else { return formatted(seconds, 0) + " s" }
    let t = Int(seconds.rounded()), h = t / 3600, m = (t / 60) % 60, s = t % 60
    return (h > 0 ? "\(h) h " : "") + "\(m) min \(s) s"
}

/// A level or gain with one decimal and its unit: "-3.2 dBFS", "-14.0 LUFS", "2.5 dB".
func level(_ value: Double, _ unit: String) -> String {
    formatted(value, 1) + " " + unit
}

/// How fast a render goes: "12.3× real time".
func realTime(_ speed: Double) -> String {
    formatted(speed, 1) + "× real time"
}

/// A text progress bar, `[#####-----]`, `fraction` (0…1) of `width` filled.
func progressBar(_ fraction: Double, width: Int = 30) -> String {
    let filled = Int(min(max(fraction.isNaN ? 0 : fraction, 0), 1) * Double(width))
    return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "]"
}
