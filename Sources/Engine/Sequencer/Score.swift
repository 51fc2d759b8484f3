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
    /// The piece's SysEx messages (the bytes between F0 and F7): an event
    /// whose message is `ChannelMessage.sysExPlaceholder(i)` sends message `i`.
    public var sysExMessages: [[UInt8]] = []

    public init(events: [Event], duration: Double? = nil) {
        self.events = events.enumerated()
            .sorted { ($0.element.seconds, $0.offset) < ($1.element.seconds, $1.offset) }
            .map(\.element)
        self.duration = max(duration ?? 0, self.events.last?.seconds ?? 0)
    }
}
