import Controls
import Engine
import MIDI
import Synchronization

/// Brings the hub's presets up to what the sampler's channels play
/// (`Renderer.selections`, written by the render thread): `poll`, off the
/// render thread (the live session's control loop), tells the hub each
/// channel whose preset moved since the last poll
/// (`ControlHub.engineDidSelectPreset`), so the page's strips, the terminal
/// view and OSC show a preset whoever selected it — a keyboard's program
/// change straight to the sampler included. Cheap when nothing moved: one
/// atomic load.
public final class ChannelSelectionsFollower: Sendable {
    private let selections: ChannelSelections
    private let hub: ControlHub
    /// The change count last read, and each channel's selection as last told to the hub.
    private let seen = Mutex<(count: Int, channels: [Selection?])>((-1, Array(repeating: nil, count: 16)))

    private struct Selection: Equatable { var bank: Int, program: Int }

    public init(_ selections: ChannelSelections, hub: ControlHub) {
        self.selections = selections
        self.hub = hub
    }

    /// Tells the hub what moved since the last call. Any thread but the render thread.
    public func poll() {
        let moved = seen.withLock { seen -> [(Int, Selection)] in
            let count = selections.changeCount
            guard count != seen.count else { return [] }
            seen.count = count
            var moved: [(Int, Selection)] = []
            for c in 0..<16 {
                guard let s = selections.selection(ofChannel: c).map({ Selection(bank: $0.bank, program: $0.program) }),
                      s != seen.channels[c] else { continue }
                seen.channels[c] = s
                moved.append((c, s))
            }
            return moved
        }
        for (c, s) in moved { hub.engineDidSelectPreset(onChannel: Channel(UInt8(c)), bank: s.bank, program: s.program) }
    }
}
