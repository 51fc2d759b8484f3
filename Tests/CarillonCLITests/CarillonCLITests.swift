import Foundation

/// Runs a shell command line on a pseudo-terminal (util-linux `script`), so
/// `carillon` draws what it draws for a person: progress bars, live views.
/// Returns what the terminal showed and the exit status.
func runOnPseudoTerminal(_ command: String, in directory: URL? = nil) throws -> (text: String, status: Int32) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
    process.arguments = ["-qec", command, "/dev/null"]
    if let directory { process.currentDirectoryURL = directory }
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    try process.run()
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (text, process.terminationStatus)
}
