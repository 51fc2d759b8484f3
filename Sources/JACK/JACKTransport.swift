import CJACK

/// The JACK transport as `jack_transport_query` reports it.
public struct JACKTransportPosition: Equatable, Sendable {
    public var rolling: Bool
    /// The transport's frame.
    public var frame: UInt64
    /// Bar, beat and tick from the timebase master (nil without one).
    public var bbt: BBT?

    public struct BBT: Equatable, Sendable {
        public var bar: Int, beat: Int, tick: Int
        public var beatsPerBar: Double, ticksPerBeat: Double, beatsPerMinute: Double
        /// Quarter notes from the top (bars and beats are 1-based; a beat taken as a quarter note).
        public var beats: Double {
            Double(bar - 1) * beatsPerBar + Double(beat - 1) + Double(tick) / max(ticksPerBeat, 1)
        }
    }
}

extension JACKClient {
    /// Where the transport is and whether it rolls. Any thread (real-time safe in JACK).
    public func transportPosition() -> JACKTransportPosition {
        var pos = jack_position_t()
        let state = jack_transport_query(handle, &pos)
        var bbt: JACKTransportPosition.BBT?
        if pos.valid.rawValue & JackPositionBBT.rawValue != 0 {
            bbt = .init(bar: Int(pos.bar), beat: Int(pos.beat), tick: Int(pos.tick), beatsPerBar: Double(pos.beats_per_bar),
                        ticksPerBeat: pos.ticks_per_beat, beatsPerMinute: pos.beats_per_minute)
        }
        return JACKTransportPosition(rolling: state == JackTransportRolling || state == JackTransportStarting,
                                     frame: UInt64(pos.frame), bbt: bbt)
    }

    /// Starts the transport rolling. Any thread.
    public func startTransport() { jack_transport_start(handle) }
    /// Stops it. Any thread.
    public func stopTransport() { jack_transport_stop(handle) }
    /// Moves it to `frame`; throws when JACK refuses.
    public func locateTransport(_ frame: UInt64) throws(JACKError) {
        let rc = jack_transport_locate(handle, jack_nframes_t(truncatingIfNeeded: frame))
        guard rc == 0 else { throw JACKError(kind: .call, function: "jack_transport_locate", code: rc) }
    }
}
