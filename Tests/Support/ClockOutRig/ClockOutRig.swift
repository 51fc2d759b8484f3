import Engine
import Sync

/// An instrument that plays nothing: the clock tests watch the renderer's sequencer.
public final class SilentInstrument: Instrument {
    public init() {}
    public let stripCount = 1
    public func prepare(sampleRate: Double, maxFrames: Int) {}
    public func receive(_ message: ChannelMessage) {}
    public func render(frames: Int, dry: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>,
                       effects: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>) {}
    public func silence() {}
}

/// A renderer playing a piece block by block, its MIDI clock out worked out after
/// each block from the sequencer's map (as `ClockOutTap` does on the render
/// thread): the set-up the clock-out, transport-master and clock-gate tests share.
public struct ClockOutRig {
    public let renderer: Renderer
    public let block: Int
    public var generator: ClockGenerator
    /// The clock out so far, in frame order.
    public var events: [ClockEvent] = []

    /// `score` scheduled (from `startingAt`, else at once) on a renderer at `sampleRate` in
    /// blocks of `block` frames; notes held at the piece's end are released, as players do.
    public init(score: Score, beats: BeatMap, instrument: Instrument = SilentInstrument(), sampleRate: Double = 48_000,
                block: Int = 1024, startingAt: UInt64? = nil) {
        renderer = Renderer(instrument: instrument)
        renderer.prepare(sampleRate: sampleRate, maxFrames: block)
        renderer.releasesNotesAtEnd = true
        renderer.schedule(score, startingAt: startingAt)
        self.block = block
        generator = ClockGenerator(beats: beats)
    }

    /// Renders `blocks` blocks, collecting the clock out; `beforeEach` runs before each with its start frame.
    public mutating func render(blocks: Int, beforeEach: (UInt64) -> Void = { _ in }) {
        var out = [Float](repeating: 0, count: 2 * block)
        for _ in 0..<blocks {
            let start = renderer.sampleTime
            beforeEach(start)
            out.withUnsafeMutableBufferPointer { renderer.render(frames: block, into: $0) }
            var collected: [ClockEvent] = []
            generator.block(start: start, frames: block, map: renderer.pieceMap) { collected.append($0) }
            events += collected
        }
    }

    /// Renders whole blocks for about `seconds` of the sample clock.
    public mutating func render(seconds: Double) {
        render(blocks: Int(seconds * renderer.sampleRate) / block)
    }

    public var clockFrames: [UInt64] { events.filter { $0.kind == .clock }.map(\.frame) }
    public var transportEvents: [ClockEvent] { events.filter { $0.kind != .clock } }
}
