import Synchronization

/// Where the render thread applied a live take's messages that it held back
/// (`OnDemandInstrument`: behind a program change whose preset was loading),
/// so `--record-midi` stamps each at the frame it played at, not the frame it
/// came for: `render --take` of the take then plays what was heard.
///
/// A lock-free single-producer single-consumer ring of (take number, frame)
/// allocated once: the render thread `report`s, one consumer at a time
/// `drain`s (the take's recorder, under its own lock). A report that finds
/// the ring full is lost and counted (`lostCount`): that message keeps the
/// frame it came for.
public final class TakeStamps: Sendable {
    public struct Stamp: Sendable, BitwiseCopyable, Equatable {
        /// The take's number of the input message (`TimedMessage.take`, never 0).
        public var take: UInt32
        /// The frame of the renderer's sample clock it was applied at.
        public var frame: UInt64
        public init(take: UInt32, frame: UInt64) { self.take = take; self.frame = frame }
    }

    private let ring: MessageRing<Stamp>
    private let lost = Atomic<Int>(0)

    /// 4096: more than the held messages an instrument keeps (1,024), a layer's two channels each.
    public init(capacity: Int = 4096) { ring = MessageRing(capacity: capacity) }

    /// The message numbered `take` was applied at `frame`. Render thread: no allocation, no lock.
    @inline(__always)
    public func report(take: UInt32, frame: UInt64) {
        guard take != 0 else { return }
        if !ring.push(Stamp(take: take, frame: frame)) { lost.add(1, ordering: .relaxed) }
    }

    /// Hands every stamp reported so far to `body`, oldest first. One consumer at a time.
    public func drain(_ body: (Stamp) -> Void) {
        while let stamp = ring.peek() {
            body(stamp)
            ring.pop()
        }
    }

    /// Stamps lost to a full ring. Any thread.
    public var lostCount: Int { lost.load(ordering: .relaxed) }
}
