import MIDI

/// The channel messages of a piece at their times in seconds, as a sequencer
/// plays them: built once (from a Standard MIDI File's timeline, say) off the
/// render thread, then handed to `Renderer.schedule`.
public struct Score: Sendable {
    public struct Event: Hashable, Sendable {
        public var seconds: Double
        public var message: ChannelMessage
        /// The file's track it comes from (0 for a score made otherwise): for labels.
        public var track: UInt16
        public init(seconds: Double, message: ChannelMessage, track: UInt16 = 0) {
            self.seconds = seconds; self.message = message; self.track = track
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

extension Score {
    /// The channel messages and SysEx messages of a Standard MIDI File, timed
    /// by its tempo map, as FluidSynth's player takes them; meta events are
    /// left out. The score lasts until the file's last event.
    ///
    /// A SysEx divided across events (an `F0` event without the closing `F7`,
    /// then `F7` continuation events of the same track, the last ending in `F7`)
    /// is joined into one message, sent at its last packet's time: the SMF
    /// spec times each packet as the moment its bytes go out, and a MIDI 1.0
    /// receiver acts on a SysEx only once its `F7` has arrived. A packet
    /// sequence that never ends (a new `F0` in the track, or the track's end)
    /// is dropped, as a receiver drops a SysEx cut short. An `F7` event that
    /// continues nothing is an escape (any bytes, sent as they are to a wire,
    /// such as song position): it is no message for a synth and is left out.
    public init(_ file: StandardMIDIFile) {
        var events: [Score.Event] = []
        var sysEx: [[UInt8]] = []
        // Per track, the bytes after F0 of a divided SysEx still waiting for its final packet.
        var unfinished: [Int: [UInt8]] = [:]
        func addSysEx(_ data: [UInt8], at seconds: Double) {
            guard !data.isEmpty, sysEx.count <= ChannelMessage.maxSysExNumber else { return }
            events.append(Score.Event(seconds: seconds, message: .sysExPlaceholder(sysEx.count)))
            sysEx.append(data)
        }
        events.reserveCapacity(file.tracks.reduce(0) { $0 + $1.events.count })
        file.forEachTimedEvent { timed in
            switch timed.event {
            case .midi(let message):
                if let channel = ChannelMessage(message) {
                    events.append(Score.Event(seconds: timed.seconds, message: channel, track: UInt16(clamping: timed.track)))
                } else if case .sysEx(let s) = message {
                    unfinished[timed.track] = nil
                    addSysEx(s.data, at: timed.seconds)
                }
            case .sysExStart(let data):
                unfinished[timed.track] = data
            case .sysExEscape(let data):
                guard var bytes = unfinished[timed.track] else { return }
                if data.last == 0xF7 {
                    bytes += data.dropLast()
                    unfinished[timed.track] = nil
                    addSysEx(bytes, at: timed.seconds)
                } else {
                    bytes += data
                    unfinished[timed.track] = bytes
                }
            case .meta:
                return
            }
        }
        self.init(events: events, duration: file.duration)
        sysExMessages = sysEx
    }
}

extension Score {
    /// A stretch with no event that `shortenGaps(longerThan:)` cut short.
    public struct Gap: Hashable, Sendable {
        /// Where the stretch began and how long it was, in the file's own seconds.
        public var start: Double
        public var length: Double
        /// The stretch ran from the last event to the piece's end (a late end of track).
        public var trailing: Bool
        public init(start: Double, length: Double, trailing: Bool) {
            self.start = start; self.length = length; self.trailing = trailing
        }
    }

    /// Cuts every stretch of more than `maxGap` seconds with no event in it
    /// (before the first event, between two, or from the last to the piece's
    /// end) down to `maxGap`, moving everything after it earlier: such a
    /// stretch is a corrupt delta time (a flipped byte makes hours of nothing).
    /// A note held across it is released `maxGap` after the stretch began, as
    /// if the gap had been that long, and the rest of the piece plays on.
    /// Returns the stretches cut, in order. Judged on the merged score, so a
    /// track that is quiet while others play is no gap.
    public mutating func shortenGaps(longerThan maxGap: Double) -> [Gap] {
        precondition(maxGap > 0)
        var gaps: [Gap] = []
        var shift = 0.0, previous = 0.0
        for i in events.indices {
            let t = events[i].seconds
            if t - previous > maxGap {
                gaps.append(Gap(start: previous, length: t - previous, trailing: false))
                shift += t - previous - maxGap
            }
            previous = t
            if shift > 0 { events[i].seconds = t - shift }
        }
        if duration - previous > maxGap {
            gaps.append(Gap(start: previous, length: duration - previous, trailing: true))
            duration = previous - shift + maxGap
        } else {
            duration -= shift
        }
        return gaps
    }
}
