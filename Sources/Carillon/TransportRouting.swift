import Controls
import Engine

/// Where a control surface's `transport.*` changes go: the sequencer's
/// `Transport` (atomics, so any thread may apply them).
///
/// `play` and `stop` are triggers: each press arrives here as its own change
/// (value 1), so a press shorter than a block is never lost; the release
/// (value 0) does nothing. `loop` is a toggle; `tempo` is in beats per minute,
/// relative to the piece's own first tempo; `position` is in % of the piece.
public enum TransportRouting {
    public static func apply(_ change: ParameterChange, to transport: Transport, pieceTempo: Double = 120) {
        guard case .transport(let p) = change.address else { return }
        let v = Double(change.value)
        switch p {
        case .play: if v >= 0.5 { transport.play() }
        case .stop: if v >= 0.5 { transport.stop() }
        case .loop:
            let region = transport.loopRegion
            transport.setLoop(v >= 0.5, start: region.start, end: region.end)
        case .tempo: transport.setTempoScale(v / (pieceTempo > 0 ? pieceTempo : 120))
        case .position: transport.seek(to: max(0, min(v, 100)) / 100 * transport.duration)
        }
    }
}
