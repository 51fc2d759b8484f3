/// The channel messages of a piece at their times in seconds, as a sequencer
/// plays them: built once (from a Standard MIDI File's timeline, say) off the
/// render thread, then handed to `Renderer.schedule`.
public struct Score: Sendable {
    public struct Event: Hashable, Sendable {
        public var seconds: Double
        public var message: ChannelMessage
        public init(seconds: Double, message: ChannelMessage) {
            self.seconds = seconds; self.message = message
        }
    }

    /// Sorted by time; events at the same time keep their order.
    public private(set) var events: [Event]
    /// When the piece ends: at least the last event's time (a file's end-of-track may be later).
    public var duration: Double

    public init(events: [Event], duration: Double? = nil) {
        self.events = events.enumerated()
            .sorted { ($0.element.seconds, $0.offset) < ($1.element.seconds, $1.offset) }
            .map(\.element)
        self.duration = max(duration ?? 0, self.events.last?.seconds ?? 0)
    }
}

/// Plays a `Score` on the renderer's sample clock: each event is due at
/// `startFrame + round(seconds × sampleRate)`. Owned by the renderer; its
/// event storage is allocated when scheduled, never while rendering.
struct Sequencer {
    private(set) var events: UnsafeMutableBufferPointer<TimedMessage> = .init(start: nil, count: 0)
    private(set) var cursor = 0
    private(set) var endFrame: UInt64 = 0

    mutating func replace(with score: Score, sampleRate: Double, startFrame: UInt64) {
        release()
        let buffer = UnsafeMutableBufferPointer<TimedMessage>.allocate(capacity: score.events.count)
        for (i, event) in score.events.enumerated() {
            let offset = UInt64(max(0, (event.seconds * sampleRate).rounded()))
            buffer.initializeElement(at: i, to: TimedMessage(frame: startFrame + offset, message: event.message))
        }
        events = buffer
        cursor = 0
        endFrame = startFrame + UInt64(max(0, (score.duration * sampleRate).rounded()))
    }

    mutating func release() {
        if events.baseAddress != nil { events.deallocate() }
        events = .init(start: nil, count: 0)
        cursor = 0
        endFrame = 0
    }

    /// The next event if it is due before `frame`.
    @inline(__always) func next(before frame: UInt64) -> TimedMessage? {
        guard cursor < events.count, events[cursor].frame < frame else { return nil }
        return events[cursor]
    }

    @inline(__always) mutating func advance() { cursor += 1 }

    var isExhausted: Bool { cursor >= events.count }
}
