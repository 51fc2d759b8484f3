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
        /// The beat's note value (4: a quarter, 8: an eighth).
        public var beatType: Double
        /// Ticks from the top to the bar's start (0 from a master that leaves it out).
        public var barStartTick: Double

        public init(bar: Int, beat: Int, tick: Int, beatsPerBar: Double, ticksPerBeat: Double, beatsPerMinute: Double,
                    beatType: Double = 4, barStartTick: Double = 0) {
            self.bar = bar; self.beat = beat; self.tick = tick
            self.beatsPerBar = beatsPerBar; self.ticksPerBeat = ticksPerBeat; self.beatsPerMinute = beatsPerMinute
            self.beatType = beatType; self.barStartTick = barStartTick
        }

        /// Quarter notes from the top (bars and beats are 1-based): the bar's start
        /// from `barStartTick` when the master gives it, else as if every bar
        /// were `beatsPerBar` long; beats of `beatType` turned into quarters.
        public var beats: Double {
            let tpb = max(ticksPerBeat, 1)
            let barStart = barStartTick > 0 || bar <= 1 ? barStartTick / tpb : Double(bar - 1) * beatsPerBar
            return (barStart + Double(beat - 1) + Double(tick) / tpb) * 4 / (beatType > 0 ? beatType : 4)
        }
    }
}

/// What a timebase master answers for a frame of the transport (`JACKClient.becomeTimebaseMaster`).
public protocol JACKTimebase: AnyObject, Sendable {
    /// JACK's process thread, once a cycle while the transport rolls and on
    /// every relocation: the real-time rules hold (no allocation, lock, log,
    /// throw or wait). Bar, beat, tick and tempo at `frame` of the transport.
    func bbt(atFrame frame: UInt64, sampleRate: Int) -> JACKTransportPosition.BBT
}

extension JACKClient {
    /// Where the transport is and whether it rolls; nil once the server is gone.
    /// Any thread but the process thread (it takes the client's server lock).
    public func transportPosition() -> JACKTransportPosition? {
        var pos = jack_position_t()
        guard let state = try? whileServerLives({ jack_transport_query(handle, &pos) }) else { return nil }
        var bbt: JACKTransportPosition.BBT?
        if pos.valid.rawValue & JackPositionBBT.rawValue != 0 {
            bbt = .init(bar: Int(pos.bar), beat: Int(pos.beat), tick: Int(pos.tick), beatsPerBar: Double(pos.beats_per_bar),
                        ticksPerBeat: pos.ticks_per_beat, beatsPerMinute: pos.beats_per_minute)
        }
        return JACKTransportPosition(rolling: state == JackTransportRolling || state == JackTransportStarting,
                                     frame: UInt64(pos.frame), bbt: bbt)
    }

    /// Starts the transport rolling. Any thread but the process thread (nothing once the server is gone).
    public func startTransport() { try? whileServerLives { jack_transport_start(handle) } }
    /// Stops it. Any thread but the process thread (nothing once the server is gone).
    public func stopTransport() { try? whileServerLives { jack_transport_stop(handle) } }
    /// Makes this client the transport's timebase master (unconditionally: it
    /// takes over from another): from now on `timebase` gives every client the
    /// bar, beat, tick and tempo. The client does not keep `timebase` alive:
    /// call `releaseTimebase` (or close the client) before it goes.
    public func becomeTimebaseMaster(_ timebase: any JACKTimebase) throws(JACKError) {
        releaseTimebase()
        let box = Unmanaged.passRetained(TimebaseBox(timebase, sampleRate: sampleRate))
        let rc = jack_set_timebase_callback(handle, 0, { _, _, pos, _, arg in
            guard let pos, let arg else { return }
            let frame = UInt64(pos.pointee.frame), given = Int(pos.pointee.frame_rate)
            // No retain/release: the box lives until the client lets the timebase go.
            let bbt = Unmanaged<TimebaseBox>.fromOpaque(arg)._withUnsafeGuaranteedRef {
                $0.timebase.bbt(atFrame: frame, sampleRate: given > 0 ? given : $0.sampleRate)
            }
            pos.pointee.valid = jack_position_bits_t(rawValue: pos.pointee.valid.rawValue | JackPositionBBT.rawValue)
            pos.pointee.bar = Int32(truncatingIfNeeded: bbt.bar)
            pos.pointee.beat = Int32(truncatingIfNeeded: bbt.beat)
            pos.pointee.tick = Int32(truncatingIfNeeded: bbt.tick)
            pos.pointee.bar_start_tick = bbt.barStartTick
            pos.pointee.beats_per_bar = Float(bbt.beatsPerBar)
            pos.pointee.beat_type = Float(bbt.beatType)
            pos.pointee.ticks_per_beat = bbt.ticksPerBeat
            pos.pointee.beats_per_minute = bbt.beatsPerMinute
        }, box.toOpaque())
        guard rc == 0 else { box.release(); throw JACKError(kind: .call, function: "jack_set_timebase_callback", code: rc) }
        timebaseBox = box
    }

    /// Stops being the timebase master (waits for a running cycle). Idempotent.
    public func releaseTimebase() {
        guard let box = timebaseBox else { return }
        try? whileServerLives { _ = jack_release_timebase(handle) }
        timebaseBox = nil
        box.release()
    }

    /// Moves it to `frame`; throws when JACK refuses.
    public func locateTransport(_ frame: UInt64) throws(JACKError) {
        let rc = try whileServerLives { jack_transport_locate(handle, jack_nframes_t(truncatingIfNeeded: frame)) }
        guard rc == 0 else { throw JACKError(kind: .call, function: "jack_transport_locate", code: rc) }
    }
}

/// Holds a timebase without owning it (see `becomeTimebaseMaster`).
final class TimebaseBox {
    unowned(unsafe) let timebase: any JACKTimebase
    /// The server's rate when it was set: for a position that does not give its own.
    let sampleRate: Int
    init(_ timebase: any JACKTimebase, sampleRate: Int) { self.timebase = timebase; self.sampleRate = sampleRate }
}
