import Engine
import MIDI

/// One MIDI real-time message of the clock, at a frame of the sample clock.
public struct ClockEvent: Equatable, Sendable, BitwiseCopyable {
    public enum Kind: UInt8, Sendable, BitwiseCopyable {
        case clock = 0xF8, start = 0xFA, `continue` = 0xFB, stop = 0xFC, songPosition = 0xF2
    }
    public var frame: UInt64
    public var kind: Kind
    /// Song Position Pointer: sixteenth notes from the start (only for `.songPosition`).
    public var sixteenths: UInt16

    public init(frame: UInt64, kind: Kind, sixteenths: UInt16 = 0) {
        self.frame = frame; self.kind = kind; self.sixteenths = sixteenths
    }

    /// The message on the wire.
    public var message: MIDIMessage {
        switch kind {
        case .clock: .timingClock
        case .start: .start
        case .continue: .continue
        case .stop: .stop
        case .songPosition: .songPosition(UInt14(truncatingIfNeeded: Int(sixteenths)))
        }
    }
}

/// MIDI clock out, worked out block by block from where the piece is
/// (`PieceMap`) and its tempo map: 24 clocks per quarter note at the frames
/// where the piece reaches them (so they follow the file's tempo changes and
/// the transport's tempo scale), Start when the piece starts from its top,
/// Stop when it stops or ends, and for a seek, a loop's wrap or a start
/// elsewhere: Stop (if running), Song Position Pointer, Continue. After a
/// Continue the clocks resume at the sixteenth the pointer names (the next
/// one at or after the position: devices start there on the next clock).
///
/// Pure: no I/O and no clock but the frames given; `block` neither
/// allocates nor locks (a render thread calls it after each block).
public struct ClockGenerator: Sendable {
    public let beats: BeatMap
    private var previous: PieceMap?
    /// The index (from the piece's top, 24 a beat) of the next clock to send.
    public private(set) var nextClock: Int64 = 0
    /// The receivers run (a Start or Continue was sent, no Stop since).
    public private(set) var running = false

    public init(beats: BeatMap) { self.beats = beats }

    /// The clock events of the block `start ..< start + frames`, given the
    /// piece map after it (`Renderer.pieceMap`), in frame order, to `emit`.
    public mutating func block(start: UInt64, frames: Int, map: PieceMap, emit: (ClockEvent) -> Void) {
        let end = start &+ UInt64(frames)
        // A piece scheduled to start after this block (`Renderer.schedule(_:startingAt:)`): its
        // Start goes out in the block it starts in, at its frame, not before the receivers can hear it.
        if map.playing, !(previous?.playing ?? false), map.anchorFrame >= end { return }
        let prev = previous ?? PieceMap(anchorFrame: start, anchorSeconds: 0, scale: map.scale, playing: false,
                                        sampleRate: map.sampleRate)
        previous = map
        // Where the new map takes over: its anchor when inside the block (a loop's wrap), else the block's start.
        var from = min(max(map.anchorFrame, start), end)
        if prev.playing && !map.playing {
            // Stopped (or ended) where the old map reached the new position.
            let f = prev.frame(atSeconds: map.anchorSeconds).rounded()
            from = f <= Double(start) ? start : (f >= Double(end) ? end : UInt64(f))
        }
        if prev.playing { ticks(on: prev, from: start, to: from, emit: emit) }
        let newPosition = map.seconds(at: from)
        // A move, not the gate: a clock follower's gate holds the piece at a limit and lets it on
        // clock by clock (several openings a block at a large period), so the new map may stand
        // anywhere between where the old one held and where it would have run without its limit;
        // and it re-anchors inside the block at a tempo scale the block's start changed, so the
        // old map's scale is off by that change over a block (a follower's fit, clock by clock):
        // within a millisecond is not a move.
        var unlimited = prev
        unlimited.limitSeconds = .infinity
        // Ahead, the follower's fit may also have changed the tempo a lot at once (a master going
        // from 120 to 140 bpm: 17 % of a 46 ms block is 8 ms): up to a quarter of the block's time
        // ahead of the old map is not a move either (a seek moves a sixteenth or more).
        let ahead = 1e-3 + 0.25 * Double(end - start) * map.scale / map.sampleRate
        let jumped = newPosition < prev.seconds(at: from) - 1e-3 || newPosition > unlimited.seconds(at: from) + ahead
        switch (prev.playing, map.playing) {
        case (true, false):
            if running { emit(ClockEvent(frame: from, kind: .stop)); running = false }
            if jumped { pointer(at: from, seconds: newPosition, emit: emit) }
        case (false, true):
            // Started (or continued) from where it stood inside this block, and a clock follower's
            // gate at a large period already re-anchored it further by the block's end: the map
            // stands past that place, but the piece began there, at the frame the map reaches it
            // (its position no further on than playing from the block's start could take it, or
            // from the block before's: a follower stamps a Start one period after its arrival, and a
            // block late under load renders it from a frame already past).
            let stood = prev.anchorSeconds
            let resumed = newPosition > stood
                && newPosition - stood <= Double(from - start + UInt64(frames)) * map.scale / map.sampleRate * 1.5 + 1e-3
            if beats.beat(atSeconds: newPosition) < 1e-9 {
                emit(ClockEvent(frame: from, kind: .start)); nextClock = 0
            } else if resumed {
                let f0 = map.frame(atSeconds: stood).rounded()
                let at = f0 <= Double(start) ? start : (f0 >= Double(from) ? from : UInt64(f0))
                if beats.beat(atSeconds: stood) < 1e-9 {
                    emit(ClockEvent(frame: at, kind: .start)); nextClock = 0
                } else {
                    pointer(at: at, seconds: stood, emit: emit)
                    emit(ClockEvent(frame: at, kind: .continue))
                }
                ticks(on: map, from: at, to: from, emit: emit)
            } else {
                pointer(at: from, seconds: newPosition, emit: emit)
                emit(ClockEvent(frame: from, kind: .continue))
            }
            running = true
        case (true, true) where jumped:
            if running { emit(ClockEvent(frame: from, kind: .stop)) }
            pointer(at: from, seconds: newPosition, emit: emit)
            emit(ClockEvent(frame: from, kind: .continue))
            running = true
        case (false, false) where jumped:
            pointer(at: from, seconds: newPosition, emit: emit)
        default: break
        }
        if map.playing { ticks(on: map, from: from, to: end, emit: emit) }
    }

    /// Song Position Pointer at the first sixteenth at or after `seconds`; the clocks go on from it.
    private mutating func pointer(at frame: UInt64, seconds: Double, emit: (ClockEvent) -> Void) {
        let sixteenths = min((beats.beat(atSeconds: seconds) * 4 - 1e-9).rounded(.up), 16383)
        emit(ClockEvent(frame: frame, kind: .songPosition, sixteenths: UInt16(max(0, sixteenths))))
        nextClock = Int64(max(0, sixteenths)) * 6
    }

    /// The clocks the piece reaches in `from ..< to` on `map` (one already due is sent at `from`).
    private mutating func ticks(on map: PieceMap, from: UInt64, to: UInt64, emit: (ClockEvent) -> Void) {
        guard from < to else { return }
        while true {
            let f = map.frame(atSeconds: beats.seconds(atBeat: Double(nextClock) / 24)).rounded()
            guard f < Double(to) else { return }
            emit(ClockEvent(frame: f <= Double(from) ? from : UInt64(f), kind: .clock))
            nextClock += 1
        }
    }
}
