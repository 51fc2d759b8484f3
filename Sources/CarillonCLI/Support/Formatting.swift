import ArgumentParser

func baseName(_ path: String) -> String {
    path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? path
}

func fail(_ error: any Error) -> Never {
    Diagnostics.error("\(error)")
    Render.exit(withError: ExitCode.failure)
}

func formatted(_ value: Double, _ decimals: Int) -> String {
    guard value.isFinite else { return value > 0 ? "inf" : "-inf" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale), fraction = Int(scaled) - whole * Int(scale)
    let sign = value < 0 && scaled > 0 ? "-" : ""
    guard decimals > 0 else { return sign + String(whole) }
    let digits = String(fraction)
    return sign + String(whole) + "." + String(repeating: "0", count: decimals - digits.count) + digits
}

/// m:ss.t
func clock(_ seconds: Double) -> String {
    let tenths = Int((seconds * 10).rounded())
    let minutes = tenths / 600, rest = tenths % 600
    let secs = rest / 10, tenth = rest % 10
    return "\(minutes):\(secs < 10 ? "0" : "")\(secs).\(tenth)"
}

func fmt(_ x: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    return "\((x * scale).rounded() / scale)"
}
