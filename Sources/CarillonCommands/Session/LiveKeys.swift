import Hosting
import Controls

/// `live`'s keys, on a terminal: ↑/↓ (or k/j) choose a control, `l` arms
/// MIDI learn for it (the next control moved on the controller binds to it,
/// and the mapping file gains the binding), `x` or Esc cancels; `s` switches
/// to the mapping's next scene.
final class LiveKeys {
    private let keys: TerminalKeys
    private let hub: ControlHub
    private let view: LiveView

    /// Nil unless the view is a terminal's and standard input is a terminal.
    init?(hub: ControlHub, view: LiveView) {
        guard view.terminal, hub.mapping != nil, let keys = TerminalKeys() else { return nil }
        self.keys = keys
        self.hub = hub
        self.view = view
        view.selected = 0
    }

    /// Reads the keys typed since the last call and acts; the view's learn line follows the hub.
    func poll() {
        let controls = hub.controlStates
        var selected = min(view.selected ?? 0, max(0, controls.count - 1))
        for key in keys.read() {
            switch key {
            case .up, .character("k"): selected = max(0, selected - 1)
            case .down, .character("j"): selected = min(max(0, controls.count - 1), selected + 1)
            case .character("l"):
                guard controls.indices.contains(selected) else { break }
                do { try hub.learn(.control(controls[selected].name)) } catch { view.line("learn: \(error)") }
            case .character("x"), .escape: hub.cancelLearn()
            case .character("s"):
                let names = hub.sceneNames
                guard !names.isEmpty else { break }
                let next = hub.currentScene.flatMap { names.firstIndex(of: $0) }.map { ($0 + 1) % names.count } ?? 0
                hub.selectScene(named: names[next])
            default: break
            }
        }
        view.selected = selected
        view.learning = hub.learning.map { "learning: \($0) — move a control on your controller (x cancels)" }
    }

    /// The terminal as it was.
    func restore() { keys.restore() }
}
