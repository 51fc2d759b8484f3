import LiveSession
import Controls
#if canImport(Glibc)
import Glibc
#endif

/// The live view: on a terminal a block of lines redrawn ~20 times a second
/// (controls as bars, MIDI activity per source, DSP load, xruns, meters, the
/// current scene and a line per zone in force); otherwise plain log lines, a
/// line when xruns happen (at most one a second), a line when the scene or
/// the zones change, and a status line every `statusInterval` seconds.
final class LiveView {
    let terminal: Bool
    let statusInterval: Double
    private var drawnLines = 0
    private var lastPlain = 0.0
    private var lastXrunLine = -1.0
    private var xrunsLogged = 0

    /// MIDI learn in `live`: the chosen control (marked `>`), and while learn
    /// is armed, the line that says so. Nil: no keys (not a terminal).
    var selected: Int?
    var learning: String?
    /// The channel strips: what each channel plays, and the one `[`/`]` steps (an index into `sounds`).
    var sounds: [Sound] = []
    var soundChannel: Int?

    /// One channel strip's line: `ch 3  Warm Pad  0:89`.
    struct Sound: Equatable {
        var channel: Int
        var name: String?
        var bank: Int
        var program: Int
    }
    /// The mapping's current scene and its zones (`ControlHub.rigView`), kept
    /// by `follow(_:)`; nil before the first look.
    private(set) var rig: RigView?

    init(terminal: Bool, statusInterval: Double = LogOptions.statusInterval) {
        self.terminal = terminal
        self.statusInterval = statusInterval
    }

    /// Takes the hub's rig when it moved (a scene switch, a reload): cheap to
    /// call at every refresh. Off a terminal the change is logged in one line.
    func follow(_ hub: ControlHub) {
        let state = hub.rigState
        guard rig?.state != state else { return }
        let next = hub.rigView
        let before = rig
        rig = next
        if !terminal, !next.isEmpty, before?.sceneName != next.sceneName || before?.zones != next.zones {
            line(Self.rigLogLine(next))
        }
    }

    func line(_ text: String) {
        erase()
        print(text)
        fflush(nil)
    }

    /// `header`: a first line (the player's position), also in the plain status line.
    func refresh(status: LiveHost.Status, controls: [ControlState], seconds: Double, header: String? = nil) {
        if !terminal {
            if status.xruns > xrunsLogged && seconds - lastXrunLine >= 1 {
                print("xruns: \(status.xruns - xrunsLogged) more, \(status.xruns) in all (t=\(formatted(seconds, 1))s)")
                xrunsLogged = status.xruns
                lastXrunLine = seconds
                fflush(nil)
            }
            if seconds - lastPlain >= statusInterval {
                lastPlain = seconds
                print("status t=\(formatted(seconds, 1))s " + (header.map { $0 + " " } ?? "") + Self.summary(status))
                fflush(nil)
            }
            return
        }
        var lines: [String] = []
        if let header { lines.append(header) }
        lines.append("── " + Self.summary(status))
        lines.append("   peak \(Self.bar(Double(status.peak), width: 30)) rms \(Self.bar(Double(status.rms), width: 30))")
        if !status.spectrum.isEmpty { lines.append("   spectrum 25 Hz \(Self.spectrumLine(status.spectrum)) 20 kHz") }
        let sources = status.messagesBySource.sorted { $0.key < $1.key }
        if !sources.isEmpty {
            lines.append("   MIDI: " + sources.map { "\($0.key) \($0.value)" + (status.sources.contains($0.key) ? "" : " (gone)") }
                .joined(separator: "  "))
        }
        // 24 controls at most; the window follows the chosen one.
        let first = selected.map { max(0, min($0 - 12, controls.count - 24)) } ?? 0
        for (i, c) in controls.enumerated().dropFirst(first).prefix(24) {
            let name = c.name.count > 18 ? String(c.name.prefix(18)) : c.name.padding(toLength: 18, withPad: " ", startingAt: 0)
            let mark = selected == i ? " > " : "   "
            lines.append("\(mark)\(name) \(Self.bar(c.position, width: 24)) \(c.display)\(c.awaitingPickup ? " (pick up)" : "")")
        }
        if let rig { lines += Self.rigLines(rig) }
        lines += Self.soundLines(sounds, chosen: soundChannel)
        if let learning {
            lines.append("   " + learning)
        } else if selected != nil {
            lines.append("   keys: " + (controls.isEmpty ? "" : "↑/↓ choose a control, l learn its MIDI source, x cancel, s next scene, ")
                         + "c choose a channel, [ ] its preset, w save as scene")
        }
        erase()
        for l in lines { print(l + "\u{1B}[K") }
        drawnLines = lines.count
        fflush(nil)
    }

    func finish(status: LiveHost.Status, command: String = "live") {
        erase()
        print("carillon \(command): ended. " + Self.summary(status))
        let perSource = status.messagesBySource.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        if !perSource.isEmpty { print("messages by source: " + perSource.joined(separator: " ")) }
        fflush(nil)
    }

    private func erase() {
        guard terminal, drawnLines > 0 else { return }
        print("\u{1B}[\(drawnLines)A\u{1B}[J", terminator: "")
        drawnLines = 0
    }

    /// The scene (when the mapping has scenes) and a line per zone in force:
    /// name, keys as note names (C4 = 60), destinations, transpose, velocity.
    ///
    ///     scene 1/2: Split
    ///     zone Bass     C-1..B2  → ch 2 +12
    ///     zone Strings  C3..G9   → ch 3 vel ×0.6+10
    static func rigLines(_ rig: RigView) -> [String] {
        var lines: [String] = []
        if !rig.sceneNames.isEmpty {
            if let i = rig.state.scene, let name = rig.sceneName {
                lines.append("   scene \(i + 1)/\(rig.sceneNames.count): \(name)")
            } else {
                lines.append("   scene: none of \(rig.sceneNames.count) (the mapping's own zones)")
            }
        }
        let nameWidth = min(16, rig.zones.map(\.name.count).max() ?? 0)
        let keysWidth = rig.zones.map(\.keys.count).max() ?? 0
        for z in rig.zones.prefix(16) {
            lines.append("   zone \(padded(z.name, nameWidth)) \(padded(z.keys, keysWidth)) → \(z.short)")
        }
        if rig.zones.count > 16 { lines.append("   … \(rig.zones.count - 16) more zones") }
        if rig.zones.isEmpty && !rig.sceneNames.isEmpty { lines.append("   no zones: every key plays on its own channel") }
        return lines
    }

    /// A line per channel strip (16 at most, 4 to a line): the chosen one marked `>`.
    ///
    ///     sounds: >ch 1 Yamaha Grand Piano 0:0   ch 2 Fingered Bass 0:33   ch 3 Strings 0:48
    static func soundLines(_ sounds: [Sound], chosen: Int?) -> [String] {
        guard !sounds.isEmpty else { return [] }
        let cells = sounds.enumerated().map { i, s in
            (chosen == i ? ">" : " ") + "ch \(s.channel) \(s.name ?? "no preset") \(s.bank):\(s.program)"
        }
        return stride(from: 0, to: cells.count, by: 4).map { start in
            (start == 0 ? "   sounds:" : "          ") + cells[start..<min(start + 4, cells.count)].joined(separator: "  ")
        }
    }

    /// Off a terminal: `scene: Piano only; zones: Piano C-1..G9 → ch 1 vel s-curve 2`.
    static func rigLogLine(_ rig: RigView) -> String {
        var parts: [String] = []
        if !rig.sceneNames.isEmpty { parts.append("scene: " + (rig.sceneName ?? "none")) }
        parts.append("zones: " + (rig.zones.isEmpty ? "none" : rig.zones.map(\.line).joined(separator: ", ")))
        return parts.joined(separator: "; ")
    }

    private static func padded(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text.padding(toLength: width, withPad: " ", startingAt: 0)
    }

    static func summary(_ s: LiveHost.Status) -> String {
        var parts: [String] = []
        // The outage first: it is what the player needs to know.
        if let outage = s.outage { parts.append(outage) }
        if s.budget > 0 {
            parts.append("blocks=\(s.blocks) xruns=\(s.xruns) voices=\(s.voices) load=\(formatted(s.load * 100, 1))%"
                + " render mean=\(formatted(s.renderMean * 1000, 3, trimmed: true))ms worst=\(formatted(s.renderWorst * 1000, 3, trimmed: true))ms budget=\(formatted(s.budget * 1000, 3, trimmed: true))ms")
            parts.append("realtime: \(s.realtime)")
            if let timing = s.timing { parts.append("timing: \(timing.rawValue)") }
        }
        let total = s.messagesBySource.values.reduce(0, +)
        parts.append("midi=\(total)")
        // Lost or refused work is always counted, and shown once it happened.
        if s.queueOverflows > 0 { parts.append("queue-overflows=\(s.queueOverflows)") }
        if s.droppedMessages > 0 { parts.append("dropped=\(s.droppedMessages)") }
        if s.refusedSynthCalls > 0 { parts.append("synth-refused=\(s.refusedSynthCalls)") }
        if s.refusedParameters > 0 { parts.append("parameters-refused=\(s.refusedParameters)") }
        if s.trackUnderruns > 0 { parts.append("track-underruns=\(s.trackUnderruns)") }
        if s.recordDroppedBlocks > 0 { parts.append("record-dropped=\(s.recordDroppedBlocks) blocks") }
        return parts.joined(separator: " ")
    }

    /// One character per band: eighth blocks from −72 dB (blank) to 0 dB (full).
    static func spectrumLine(_ levels: [Float]) -> String {
        let steps: [Character] = [" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]
        return String(levels.map { db in
            let f = min(max((Double(db) + 72) / 72, 0), 1)
            return steps[Int((f * 8).rounded())]
        })
    }

    static func bar(_ fraction: Double, width: Int) -> String {
        let f = min(max(fraction, 0), 1)
        let filled = Int((f * Double(width)).rounded())
        return "[" + String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled) + "]"
    }
}
