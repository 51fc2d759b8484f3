import ArgumentParser
import Foundation
import MIDI

/// `carillon inspect`: what a Standard MIDI File holds.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what a Standard MIDI File holds: format, division, tracks, tempo, duration.",
        discussion: """
            Examples:
              carillon inspect song.mid
              carillon inspect song.mid --events
              carillon inspect song.mid --json | jq .duration

            A damaged file is read as far as it makes sense; each problem is \
            reported on stderr as a warning. A file that cannot be read at all \
            gives one error line and exit status 1.
            """)

    @Argument(help: ArgumentHelp("The MIDI file (.mid, or .rmi).", valueName: "midi-file"))
    var file: String

    @Flag(help: "List every event with its track, tick and time in seconds.")
    var events = false

    @Flag(help: "Print JSON for scripts (with --events, the events too).")
    var json = false

    func run() throws {
        let data: Data
        do {
            // Mapped, not copied: the summary reads the bytes once and keeps no event.
            data = try Data(contentsOf: URL(fileURLWithPath: file), options: .mappedIfSafe)
        } catch {
            let reason = FileManager.default.fileExists(atPath: file) ? "cannot be read" : "no such file"
            Diagnostics.error("\(file): \(reason)")
            throw ExitCode.failure
        }
        let read: Result<InspectReport, SMFError> = data.withUnsafeBytes { raw in
            do throws(SMFError) { return .success(try InspectReport(bytes: raw, path: file)) } catch { return .failure(error) }
        }
        guard case .success(let report) = read else {
            if case .failure(let error) = read { Diagnostics.error("\(file): \(error.description)") }
            throw ExitCode.failure
        }
        for warning in report.warnings {
            Diagnostics.warning("\(file): \(warning)")
        }
        var out = OutputBuffer()
        if json {
            out.append(report.json(closed: !events))
        } else {
            out.append(report.text())
        }
        if events {
            // The events go out as they are placed in time, line by line: none is kept.
            let smf = data.withUnsafeBytes { raw in try? StandardMIDIFile(bytes: raw) } ?? StandardMIDIFile()
            if json {
                out.append("  \"events\" : [")
                var first = true
                smf.forEachTimedEvent { e in
                    out.append(first ? "\n    " : ",\n    ")
                    first = false
                    EventFields(e).appendJSON(to: &out)
                }
                out.append(first ? "]\n}\n" : "\n  ]\n}\n")
            } else {
                out.append("\nTrack      Tick     Seconds  Event\n")
                smf.forEachTimedEvent { EventFields($0).appendText(to: &out) }
            }
        }
        out.flush()
    }
}
