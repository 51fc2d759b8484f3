import Engine
import Synchronization

/// Where the keyboard's and the controls' channel messages go: the render
/// thread's queue (`EventQueueProducer`), or a score being written (`render
/// --take`'s pass through the rig, `TakeRouting`).
public protocol ChannelOutput: Sendable {
    /// False when the message could not be taken (a full queue, counted there).
    @discardableResult
    func push(_ message: ChannelMessage, at placement: EventQueueProducer.Placement) -> Bool
    @discardableResult
    func pushSysEx(_ bytes: [UInt8], at placement: EventQueueProducer.Placement) -> Bool
    /// A message for a zone's MIDI effect chain (its number: `PluginHost.midiEffects`' index).
    /// False when it could not be taken (no such chain, a full queue).
    @discardableResult
    func pushEffect(_ effect: Int, _ message: ChannelMessage, at placement: EventQueueProducer.Placement) -> Bool
    /// The frame an event placed so plays at, fixed now; nil without a sample clock.
    func frame(pinning placement: EventQueueProducer.Placement) -> UInt64?
}

extension ChannelOutput {
    public func pushEffect(_ effect: Int, _ message: ChannelMessage, at placement: EventQueueProducer.Placement) -> Bool { false }
    public func frame(pinning placement: EventQueueProducer.Placement) -> UInt64? { nil }

    /// Right after the last message pushed (a parameter change).
    @discardableResult
    public func push(_ message: ChannelMessage) -> Bool { push(message, at: .afterLast) }
}

/// The producer side of the render thread's event queue, shared by the
/// threads that push (MIDI input, the controls' parameter changes) behind a
/// lock the render thread never takes (it only pops, lock-free): one producer
/// at a time, as the queue requires.
///
/// With a `clock` (`--timing stamped`) an event given its arrival time goes
/// to the frame `OutputClock.frame(arrival:)` says; one without (a parameter
/// change) right after the last one pushed. Frames never decrease from one
/// push to the next, so the renderer, which takes events from the head while
/// they are due, applies them in the order they came. Without a clock
/// (`--timing asap`) every event is due at once (frame 0).
public final class EventQueueProducer: ChannelOutput {
    private let queue: EventQueue
    /// The MIDI effects' queues (`Renderer.midiEffectQueues`), timed as `queue`'s.
    private let effectQueues: [EventQueue]
    private let clock: OutputClock?
    /// The frame of the last push; guarded by the producers' lock.
    private let lastFrame = Mutex<UInt64>(0)

    public init(_ queue: EventQueue, effects: [EventQueue] = [], clock: OutputClock? = nil) {
        self.queue = queue
        effectQueues = effects
        self.clock = clock
    }

    /// How events are placed: `.stamped` with a clock, `.asap` without.
    public var timing: EventTiming { clock == nil ? .asap : .stamped }

    /// Where an event goes (with a clock; without one, every event is due at once).
    public enum Placement: Sendable {
        /// Arrived at this monotonic time (`OutputClock.now()`): its frame is the clock's.
        case arrival(UInt64)
        /// Its frame is known (JACK MIDI: the offset in its cycle, a period on).
        case frame(UInt64)
        /// Its frame is known, and it comes from the live take's input message
        /// numbered `take` (`MIDIRecorder.record`): the events pushed carry the
        /// number, so the render thread can say where it applied them (`TakeStamps`).
        case recorded(frame: UInt64, take: UInt32)
        /// Right after the last event pushed (a parameter change).
        case afterLast

        /// The frame when it is given (`.frame`, `.recorded`), else nil.
        public var frame: UInt64? {
            switch self {
            case .frame(let frame), .recorded(let frame, _): frame
            case .arrival, .afterLast: nil
            }
        }

        /// The take's number it carries (`.recorded`), else 0.
        public var take: UInt32 {
            if case .recorded(_, let take) = self { take } else { 0 }
        }
    }

    /// With a clock: the frame an event placed so plays at, fixed now (the last
    /// frame moves on as a push would), so a message recorded at it and the
    /// messages routed from it (`.frame` of it) agree. Nil without a clock.
    public func frame(pinning placement: Placement) -> UInt64? {
        guard clock != nil else { return nil }
        return lastFrame.withLock { Self.place(placement, clock, &$0) }
    }

    /// False when the queue was full (counted by the queue).
    @discardableResult
    public func push(_ message: ChannelMessage, at placement: Placement) -> Bool {
        lastFrame.withLock { last in
            queue.push(TimedMessage(frame: Self.place(placement, clock, &last), message: message, take: placement.take))
        }
    }

    @discardableResult
    public func pushEffect(_ effect: Int, _ message: ChannelMessage, at placement: Placement) -> Bool {
        guard effectQueues.indices.contains(effect) else { return false }
        return lastFrame.withLock { last in
            effectQueues[effect].push(TimedMessage(frame: Self.place(placement, clock, &last), message: message))
        }
    }

    @discardableResult
    public func pushSysEx(_ bytes: [UInt8], at placement: Placement) -> Bool {
        lastFrame.withLock { last in
            let frame = Self.place(placement, clock, &last)
            return bytes.withUnsafeBufferPointer { queue.pushSysEx($0, frame: frame) }
        }
    }

    /// The frame for an event placed so: never before `last`, which it moves on.
    private static func place(_ placement: Placement, _ clock: OutputClock?, _ last: inout UInt64) -> UInt64 {
        guard let clock else { return 0 }
        switch placement {
        case .arrival(let nanos): last = max(last, clock.frame(arrival: nanos))
        case .frame(let frame), .recorded(let frame, _): last = max(last, frame)
        case .afterLast: break
        }
        return last
    }
}
