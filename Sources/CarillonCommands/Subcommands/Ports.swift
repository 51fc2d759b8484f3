import ALSA
import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// `carillon ports`: what `--connect` and `-d` can name.
struct Ports: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List MIDI sources (ALSA sequencer ports) and PCM playback devices.",
        discussion: """
            A source is named to `--connect` by its client:port address (24:0) or by any \
            part of its client or port name, in any case ("virmidi", "nanoKONTROL"). \
            A device is named to -d by its ALSA name (hw:Loopback,0, default, plughw:1,0).

            Capabilities: r readable, w writable, R others may subscribe to read it \
            (a source), W others may subscribe to write it.
            """)

    @Flag(help: "Every sequencer port (not only sources) and every PCM name ALSA offers.")
    var all = false

    func run() throws {
        var failures: [String] = []

        do {
            let client = try SequencerClient(name: "carillon-ports")
            let ports = try all ? client.ports() : client.sources()
            print(all ? "Sequencer ports:" : "MIDI sources (ALSA sequencer):")
            if ports.isEmpty { print("  (none)") }
            let table = ports.map { p in
                ["\(p.address)", p.clientName, p.portName, p.capabilities.description, p.type.description]
            }
            printTable(table, header: ["port", "client", "name", "caps", "type"])
        } catch {
            failures.append("\(error)")
        }

        let devices = PCMPlayback.hardwareDevices() + PCMPlayback.hintedDevices().filter { all || Self.isUsual($0.name) }
        print("")
        print("PCM playback devices:")
        if devices.isEmpty {
            print("  (none)")
            failures.append("no PCM playback device (is there a sound card, /dev/snd?)")
        }
        printTable(devices.map { [$0.name, $0.summary] }, header: ["device", "description"])

        if !failures.isEmpty {
            for f in failures { Diagnostics.error("\(f)") }
            throw ExitCode.failure
        }
    }

    /// The hinted names people pick; the surround and IEC958 variants only with --all.
    private static func isUsual(_ name: String) -> Bool {
        ["default", "sysdefault", "plughw:", "pipewire", "pulse", "jack", "null"].contains { name.hasPrefix($0) }
    }

    private func printTable(_ rows: [[String]], header: [String]) {
        guard !rows.isEmpty else { return }
        let all = [header] + rows
        let widths = header.indices.map { c in all.map { $0[c].count }.max() ?? 0 }
        for row in all {
            let cells = row.enumerated().map { c, cell in
                c == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[c] - cell.count)
            }
            print("  " + cells.joined(separator: "  "))
        }
    }

}
