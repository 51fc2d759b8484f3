import Hosting
import Controls
import MIDI
import WebSurface

/// `live`'s keys, on a terminal: ↑/↓ (or k/j) choose a control, `l` arms
/// MIDI learn for it (the next control moved on the controller binds to it,
/// and the mapping file gains the binding), `x` or Esc cancels; `s` switches
/// to the mapping's next scene; `c` chooses a channel strip and `[`/`]` step
/// its preset through its font's list (as the page's picker and OSC select one:
/// bank select then program change, held notes kept); `w` saves what plays
/// now as a new scene (`Saved N`) in the mapping file.
final class LiveKeys {
    private let keys: TerminalKeys
    private let hub: ControlHub
    private let view: LiveView
    private let fonts: ChannelFontLookup
    /// What the view's strip lines were drawn from (the mapping's and the presets' generations).
    private var drawn: (mapping: Int, presets: Int)?

    /// Nil unless the view is a terminal's and standard input is a terminal.
    init?(hub: ControlHub, view: LiveView, fonts: @escaping ChannelFontLookup) {
        guard view.terminal, let keys = TerminalKeys() else { return nil }
        self.keys = keys
        self.hub = hub
        self.view = view
        self.fonts = fonts
        view.selected = 0
        view.soundChannel = 0
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
            case .character("c"):
                let count = hub.soundChannels.count
                view.soundChannel = count == 0 ? nil : ((view.soundChannel ?? -1) + 1) % count
            case .character("w"): saveScene()
            case .character("["): stepPreset(by: -1)
            case .character("]"): stepPreset(by: 1)
            default: break
            }
        }
        view.selected = selected
        view.learning = hub.learning.map { "learning: \($0) — move a control on your controller (x cancels)" }
        drawSounds()
    }

    /// "Save as scene": what plays now, as a new scene `Saved N` (the first N free in the file) in the mapping file.
    private func saveScene() {
        do {
            let saved = try hub.saveNewScene()
            view.line("saved scene '\(saved.name)' in \(saved.mapping.file) (the old file is \(saved.mapping.file).bak)")
        } catch {
            view.line("\(error)")
        }
    }

    /// The chosen strip's channel steps to the previous or next preset of its font.
    private func stepPreset(by offset: Int) {
        let channels = hub.soundChannels
        guard let i = view.soundChannel, channels.indices.contains(i) else { return }
        let channel = channels[i]
        switch fonts(channel) {
        case .success(let font):
            guard let next = ChannelPresets.step(from: hub.channelPresets[channel], by: offset, in: font.presets, channel: channel) else {
                view.line("channel \(channel.intValue + 1): \(font.path) has no preset a bank select reaches"); return
            }
            hub.selectPreset(onChannel: channel, bank: next.bank, program: UInt7(UInt8(next.program)))
        case .failure(let why):
            view.line("channel \(channel.intValue + 1): \(why)")
        }
    }

    /// The view's strip lines, redrawn when a preset or the mapping changed.
    private func drawSounds() {
        let now = (mapping: hub.mappingGeneration, presets: hub.channelPresets.generation)
        guard drawn.map({ $0 != now }) ?? true else { return }
        drawn = now
        let presets = hub.channelPresets
        view.sounds = hub.soundChannels.map { channel in
            let entry = presets[channel]
            let name = (try? fonts(channel).get())?.presets.first { $0.bank == entry.bank && $0.program == entry.program }?.name
            return LiveView.Sound(channel: channel.intValue + 1, name: name, bank: entry.bank, program: entry.program)
        }
        if let i = view.soundChannel, i >= view.sounds.count { view.soundChannel = view.sounds.isEmpty ? nil : 0 }
    }

    /// The terminal as it was.
    func restore() { keys.restore() }
}
