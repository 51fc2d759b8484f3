/// Plays a `Score` on the renderer's sample clock under a `Transport`:
/// play, stop, seek, loop and tempo scale while rendering runs.
///
/// Time: the piece is measured in *score frames* (`round(seconds × rate)`);
/// a linear map, re-anchored at each transport change, takes the sample clock
/// to score frames: `score = anchorScore + (frame − anchorFrame) × scale`.
/// At scale 1 with no transport change this is `frame − startFrame`, exactly
/// as offline rendering always timed events.
///
/// A clock-gated follower's gate (`Transport.openGate`) caps that map: the
/// position never passes the limit, events at or past it are not due, and
/// each opening, taken at its frame in order with the piece's events, lets the
/// position go on from where it held (`score = anchorScore + min((frame −
/// anchorFrame) × rate, limit − anchorScore)`). With no gate the limit is
/// infinite and nothing changes.
///
/// Each opening also says where the master's clock puts the piece at its
/// frame. A piece found behind that by more than `Transport.phaseTolerance` (it waited
/// at the gate for a late clock, or an early clock found it short) catches up:
/// until the next opening, `rate` is the tempo scale times `1 + min(Transport.catchUpLimit,
/// lag / (catchUpClocks clocks))`, so it makes up the lag over the next clocks
/// and every note it passes plays, in order, closer together; it never goes
/// past the gate, so it cannot overshoot the master. It never plays slower
/// than the tempo scale: a piece ahead of the master is the gate's to hold.
/// A looping piece, and a lag over `Transport.catchUpMaximumLag`, are left alone.
///
/// Notes never hang: the sequencer counts the notes it holds per (channel,
/// note) in a fixed table; stop, seek and loop wrap (and the piece's end when
/// `releasesAtEnd`) send their note-offs, then sustain off and all notes off
/// on each channel it played on. A seek (and a wrap) then "chases": the
/// programs (with bank select), controllers, pitch-bend range and pitch bend
/// in force at the target are sent again, and what the piece sets only later
/// goes back to its default, so starting in the middle sounds right.
///
/// Owned by the renderer. Every buffer is allocated in `init` or `replace`
/// (off the render thread); `begin`, `next`, `advance` and `end` run on the
/// render thread and neither allocate, lock nor log.
struct Sequencer {
    struct Event: BitwiseCopyable {
        var scoreFrame: UInt64
        var message: ChannelMessage
    }

    private(set) var events: UnsafeMutableBufferPointer<Event> = .init(start: nil, count: 0)
    private(set) var cursor = 0
    /// A piece is scheduled (even an empty one).
    private var loaded = false
    /// The piece's end, in score frames.
    private(set) var endScore: UInt64 = 0
    private var sampleRate: Double = 48_000

    // The sample clock → score map.
    private var anchorFrame: UInt64 = 0
    private var anchorScore: Double = 0
    private var scale: Double = 1
    /// A clock-gated follower's catch-up, ≥ 1 (see `open`): the piece moves at `scale × catchUp`.
    private var catchUp: Double = 1
    @inline(__always) private var rate: Double { scale * catchUp }
    /// The gate: the score frame the piece may not reach (infinity: no gate).
    private var limit = Double.infinity
    /// The gate's openings: the transport's queue, taken in `replace`.
    private var gates: Transport.GateQueue?
    /// The frame the render thread has got to in this block: an opening due earlier applies here.
    private var gateFloor: UInt64 = 0

    // Transport state as last polled.
    private var playing = true
    private var seekCount: UInt64 = 0
    /// A seek's sample-clock start (`Transport.play(from:atFrame:)`), kept until the transport plays; 0: none.
    private var seekStartFrame: UInt64 = 0
    private var loopOn = false
    private var loopStart: UInt64 = 0
    private var loopEnd: UInt64 = 0
    /// True at the piece's end (and with no piece at all).
    private(set) var finished = true
    /// Release held notes when the piece ends (players); offline rendering
    /// leaves the file's own ending alone.
    var releasesAtEnd = false

    // Fixed-size tables.
    private let held: UnsafeMutablePointer<UInt8>           // 16 × 128 note counts
    private var usedChannels: UInt16 = 0
    private let pending: UnsafeMutablePointer<TimedMessage>  // generated messages, in order
    private static let pendingCapacity = 8192
    private var pendingHead = 0
    private var pendingCount = 0
    private(set) var droppedMessages = 0
    // Chase state.
    private let chasedCC: UnsafeMutablePointer<Int16>       // 16 × 128, −1 = not set before the target
    private let pieceCC: UnsafeMutablePointer<Bool>         // 16 × 128: the piece sets this CC somewhere
    private let chasedOther: UnsafeMutablePointer<Int32>    // per channel: program, bend, pressure, rpn, range
    private var pieceProgram: UInt16 = 0
    private var pieceBend: UInt16 = 0
    private var pieceBendRange: UInt16 = 0
    private static let program = 0, bend = 16, pressure = 32, rpn = 48, range = 64, otherCount = 80

    init() {
        held = .allocate(capacity: 2048); held.initialize(repeating: 0, count: 2048)
        pending = .allocate(capacity: Self.pendingCapacity)
        pending.initialize(repeating: TimedMessage(frame: 0, message: .noteOff(0, channel: 0)), count: Self.pendingCapacity)
        chasedCC = .allocate(capacity: 2048); chasedCC.initialize(repeating: -1, count: 2048)
        pieceCC = .allocate(capacity: 2048); pieceCC.initialize(repeating: false, count: 2048)
        chasedOther = .allocate(capacity: Self.otherCount); chasedOther.initialize(repeating: -1, count: Self.otherCount)
    }

    /// Frees everything; the sequencer is not used again.
    mutating func destroy() {
        release()
        held.deallocate(); pending.deallocate(); chasedCC.deallocate(); pieceCC.deallocate(); chasedOther.deallocate()
    }

    /// Takes a new piece, starting at `startFrame` of the sample clock, with
    /// the transport's current settings (a seek made before counts as done:
    /// seek after scheduling). Not while rendering.
    mutating func replace(with score: Score, sampleRate: Double, startFrame: UInt64, transport: Transport) {
        release()
        self.sampleRate = sampleRate
        let buffer = UnsafeMutableBufferPointer<Event>.allocate(capacity: score.events.count)
        pieceCC.update(repeating: false, count: 2048)
        pieceProgram = 0; pieceBend = 0; pieceBendRange = 0
        for (i, event) in score.events.enumerated() {
            let frame = Self.frames(event.seconds, sampleRate)
            buffer.initializeElement(at: i, to: Event(scoreFrame: frame, message: event.message))
            let m = event.message, bit = UInt16(1) << UInt16(m.channel)
            switch m.kind {
            case 0xB0:
                pieceCC[m.channel * 128 + Int(m.data1)] = true
                if m.data1 == 6 || m.data1 == 38 { pieceBendRange |= bit }
            case 0xC0: pieceProgram |= bit
            case 0xE0: pieceBend |= bit
            default: break
            }
        }
        events = buffer
        loaded = true
        cursor = 0
        endScore = Self.frames(score.duration, sampleRate)
        let c = transport.poll()
        anchorFrame = startFrame
        anchorScore = 0
        limit = .infinity
        gates = transport.gates
        scale = c.tempoScale
        catchUp = 1
        playing = c.playing
        seekCount = c.seekCount
        seekStartFrame = 0
        applyLoop(c)
        finished = false
        held.update(repeating: 0, count: 2048)
        usedChannels = 0
        pendingHead = 0; pendingCount = 0
        transport.publish(position: 0, finished: false, duration: Double(endScore) / sampleRate)
    }

    /// Drops the piece (its storage freed). Not while rendering.
    mutating func release() {
        if events.baseAddress != nil { events.deallocate() }
        events = .init(start: nil, count: 0)
        loaded = false
        cursor = 0
        endScore = 0
        finished = true
    }

    var isExhausted: Bool { cursor >= events.count }

    /// Where the piece ends on the sample clock, at the current tempo and with no more transport changes.
    var endFrame: UInt64 { absoluteFrame(ofScore: endScore) }

    // MARK: - Render thread

    /// The score position (in score frames) at sample-clock `frame`.
    @inline(__always) func score(at frame: UInt64) -> Double {
        guard playing, !finished else { return anchorScore }
        // Held at the gate's limit; never behind the anchor (a seek's target stands).
        return anchorScore + min(Double(frame &- min(frame, anchorFrame)) * rate, max(0, limit - anchorScore))
    }

    /// The piece's position in seconds at sample-clock `frame`, and whether it
    /// plays there (a piece is scheduled, the transport plays, it has not ended).
    @inline(__always) func piecePosition(at frame: UInt64) -> (seconds: Double, playing: Bool) {
        (score(at: frame) / sampleRate, loaded && playing && !finished)
    }

    /// The sample clock → piece map as it stands (after a block: its last re-anchoring).
    var map: PieceMap {
        PieceMap(anchorFrame: anchorFrame, anchorSeconds: anchorScore / sampleRate, scale: rate,
                 playing: loaded && playing && !finished, sampleRate: sampleRate, limitSeconds: limit / sampleRate)
    }

    /// The sample-clock frame at which score frame `s` plays. Saturates like
    /// `frames`: a score frame of 2^62 (a time of +inf) at the slowest tempo
    /// scale is past UInt64, and NaN gives the anchor.
    @inline(__always) func absoluteFrame(ofScore s: UInt64) -> UInt64 {
        let d = ((Double(s) - anchorScore) / rate).rounded()
        guard d > 0 else { return anchorFrame }
        return anchorFrame &+ (d < 0x1p62 ? UInt64(d) : 1 << 62)
    }

    /// Block start: applies the transport's commands.
    mutating func begin(at frame: UInt64, transport: Transport) {
        guard loaded else { return }
        gateFloor = frame
        let c = transport.poll()
        if c.tempoScale != scale {
            anchorScore = score(at: frame); anchorFrame = frame; scale = c.tempoScale
        }
        applyLoop(c)
        if c.seekCount != seekCount {
            seekCount = c.seekCount
            let target = min(Self.frames(c.seekTarget, sampleRate), endScore)
            releaseHeld(at: frame)
            finished = false
            reposition(to: target, at: frame)
            seekStartFrame = c.seekFrame
        }
        if c.playing != playing {
            if c.playing {
                if finished { finished = false; reposition(to: 0, at: frame) }
                anchorFrame = frame
                catchUp = 1
                playing = true
            } else {
                anchorScore = score(at: frame)
                catchUp = 1
                playing = false
                releaseHeld(at: frame)
                seekStartFrame = 0
            }
        }
        // The seek's own frame (the play may come a block after the seek: two atomics).
        if playing, seekStartFrame != 0 { anchorFrame = seekStartFrame; seekStartFrame = 0 }
    }

    /// Block end: notices the piece's end and publishes the position.
    mutating func end(at frame: UInt64, transport: Transport) {
        guard loaded else { return }
        // Openings due in this block that no event waited for (stopped, or nothing left to play).
        if let gates { while let g = gates.peek(), g.frame < frame { open(g); gates.pop() } }
        if playing, !finished, !loopOn, cursor >= events.count, score(at: frame) >= Double(endScore) {
            if releasesAtEnd { releaseHeld(at: frame) }
            anchorScore = Double(endScore)
            finished = true
        }
        if wraps > 0 { transport.countWraps(wraps); wraps = 0 }
        transport.publish(position: score(at: frame) / sampleRate, finished: finished,
                          duration: Double(endScore) / sampleRate)
    }

    /// The next message due before `bound` on the sample clock: generated
    /// messages (releases, chase) first, then the piece's. Wraps the loop when
    /// its end comes before `bound`.
    @inline(__always) mutating func next(before bound: UInt64) -> TimedMessage? {
        while true {
            if pendingHead < pendingCount {
                let m = pending[pendingHead]
                return m.frame < bound ? m : nil
            }
            guard playing, !finished else { return nil }
            let nextScore = cursor < events.count ? events[cursor].scoreFrame : UInt64.max
            let wrapsFirst = loopOn && nextScore >= loopEnd
            let target = wrapsFirst ? loopEnd : nextScore
            // At or past the gate nothing is due until an opening passes it; an opening
            // applies at its frame, in order with the piece (the anchor moves there).
            let frame = Double(target) < limit ? absoluteFrame(ofScore: target) : UInt64.max
            if let gates, let g = gates.peek(), g.frame < bound, g.frame <= frame {
                open(g); gates.pop()
                continue
            }
            if wrapsFirst {
                guard frame < bound else { return nil }
                releaseHeld(at: frame)
                reposition(to: loopStart, at: frame)
                wraps &+= 1
                continue
            }
            guard cursor < events.count, frame < bound else { return nil }
            gateFloor = frame
            return TimedMessage(frame: frame, message: events[cursor].message)
        }
    }

    /// Takes a gate opening at its frame (or where the block has got to, if
    /// that is later): a playing piece re-anchors at its position there — the
    /// old limit, if it held — then the new limit applies, and the catch-up is
    /// set from how far the piece is behind the place the clock gives it there.
    @inline(__always) private mutating func open(_ g: Transport.GateOpening) {
        let newLimit = Double(Self.frames(g.limit, sampleRate))
        guard playing, !finished else { limit = newLimit; catchUp = 1; return }
        let at = max(g.frame, gateFloor, anchorFrame)
        anchorScore = score(at: at); anchorFrame = at
        limit = newLimit
        // An opening with no frame (no output clock to stamp it) says nothing of the phase; nor does
        // one once the piece loops (after a wrap the master's count is not the piece's place).
        guard g.frame != 0, !loopOn else { catchUp = 1; return }
        // Where the master is at `at` (its clock's place, on by the tempo scale if the opening is taken
        // after its frame), never past the next clock's place; the lag beyond the tolerance, made up
        // over `catchUpClocks` clocks of the piece.
        let place = Double(Self.frames(g.place, sampleRate))
        let clock = newLimit - place
        let master = min(place + Double(at - g.frame) * scale, newLimit)
        let lag = master - anchorScore - Transport.phaseTolerance * sampleRate * scale
        // More than `catchUpMaximumLag` behind is no late clock (an outage of the output): left alone.
        let caught = lag > 0 && clock > 0 && lag <= Transport.catchUpMaximumLag * sampleRate * scale
        catchUp = caught ? 1 + min(Transport.catchUpLimit, lag / (Transport.catchUpClocks * clock)) : 1
    }

    /// Loop wraps not yet counted in the transport.
    private var wraps = 0

    /// Consumes the message `next` returned.
    @inline(__always) mutating func advance() {
        if pendingHead < pendingCount {
            pendingHead += 1
            if pendingHead == pendingCount { pendingHead = 0; pendingCount = 0 }
            return
        }
        let m = events[cursor].message
        cursor += 1
        if m.isSysEx { return }  // a placeholder: no channel, no note
        let ch = m.channel
        usedChannels |= UInt16(1) << UInt16(ch)
        let slot = ch * 128 + Int(m.data1)
        switch m.kind {
        case 0x90 where m.data2 > 0: if held[slot] < 255 { held[slot] += 1 }
        case 0x80, 0x90: if held[slot] > 0 { held[slot] -= 1 }
        default: break
        }
    }

    // MARK: - Releases and chase

    @inline(__always) private mutating func emit(_ message: ChannelMessage, at frame: UInt64) {
        guard pendingCount < Self.pendingCapacity else { droppedMessages += 1; return }
        pending[pendingCount] = TimedMessage(frame: frame, message: message)
        pendingCount += 1
    }

    /// Note-offs for every note the sequencer holds, then sustain off and all
    /// notes off on each channel it played on.
    private mutating func releaseHeld(at frame: UInt64) {
        guard usedChannels != 0 else { return }
        for ch in 0..<16 where usedChannels & (UInt16(1) << UInt16(ch)) != 0 {
            for note in 0..<128 where held[ch * 128 + note] != 0 {
                held[ch * 128 + note] = 0
                emit(.noteOff(UInt8(note), channel: ch), at: frame)
            }
            emit(.controlChange(64, value: 0, channel: ch), at: frame)
            emit(.controlChange(123, value: 0, channel: ch), at: frame)
        }
        usedChannels = 0
    }

    /// Moves to score frame `target` (the cursor to its first event), sending
    /// the state in force there.
    private mutating func reposition(to target: UInt64, at frame: UInt64) {
        var lo = 0, hi = events.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if events[mid].scoreFrame < target { lo = mid + 1 } else { hi = mid }
        }
        cursor = lo
        chase(upTo: lo, at: frame)
        anchorFrame = frame
        anchorScore = Double(target)
        catchUp = 1
    }

    private static func isChasedCC(_ cc: Int) -> Bool {
        // Not data entry / (N)RPN selection (chased as the pitch-bend range),
        // not channel mode messages, not the sustain-like pedals (a chased
        // pedal-down would hold notes that never started).
        !(cc == 6 || cc == 38 || (96...101).contains(cc) || cc >= 120 || (64...69).contains(cc))
    }

    private static func defaultCC(_ cc: Int) -> UInt8 {
        switch cc {
        case 7: 100
        case 8, 10, 71...79: 64
        case 11: 127
        default: 0
        }
    }

    private mutating func chase(upTo end: Int, at frame: UInt64) {
        chasedCC.update(repeating: -1, count: 2048)
        chasedOther.update(repeating: -1, count: Self.otherCount)
        var i = 0
        while i < end {
            let m = events[i].message, ch = m.channel
            switch m.kind {
            case 0xF0:
                // SysEx (GM/GS reset, drum-part assignment, tuning) shapes the
                // channels: re-sent in order, before the channel state below.
                emit(m, at: frame)
            case 0xB0:
                let cc = Int(m.data1)
                chasedCC[ch * 128 + cc] = Int16(m.data2)
                switch cc {
                case 101: chasedOther[Self.rpn + ch] = (chasedOther[Self.rpn + ch] & 0x7F) | (Int32(m.data2) << 7)
                case 100: chasedOther[Self.rpn + ch] = (chasedOther[Self.rpn + ch] & ~0x7F & 0x3FFF) | Int32(m.data2)
                case 99, 98: chasedOther[Self.rpn + ch] = 0x3FFF  // an NRPN: data entry is not the bend range
                case 6 where chasedOther[Self.rpn + ch] == 0:
                    chasedOther[Self.range + ch] = (max(chasedOther[Self.range + ch], 0) & 0x7F) | (Int32(m.data2) << 7)
                case 38 where chasedOther[Self.rpn + ch] == 0:
                    chasedOther[Self.range + ch] = (max(chasedOther[Self.range + ch], 0) & ~0x7F) | Int32(m.data2)
                default: break
                }
            case 0xC0: chasedOther[Self.program + ch] = Int32(m.data1)
            case 0xD0: chasedOther[Self.pressure + ch] = Int32(m.data1)
            case 0xE0: chasedOther[Self.bend + ch] = Int32(m.data1) | (Int32(m.data2) << 7)
            default: break
            }
            i += 1
        }
        for ch in 0..<16 {
            let bit = UInt16(1) << UInt16(ch)
            func cc(_ n: Int) {
                guard pieceCC[ch * 128 + n] else { return }
                let v = chasedCC[ch * 128 + n]
                emit(.controlChange(UInt8(n), value: v >= 0 ? UInt8(v) : Self.defaultCC(n), channel: ch), at: frame)
            }
            // Bank select, then the program it selects.
            if pieceProgram & bit != 0 || pieceCC[ch * 128] || pieceCC[ch * 128 + 32] {
                cc(0); cc(32)
                if pieceProgram & bit != 0 {
                    let p = chasedOther[Self.program + ch]
                    emit(.programChange(UInt8(max(p, 0)), channel: ch), at: frame)
                }
            }
            for n in 1..<128 where n != 32 && Self.isChasedCC(n) { cc(n) }
            if pieceBendRange & bit != 0 {
                let r = chasedOther[Self.range + ch]
                let semitones = r >= 0 ? UInt8(r >> 7) : 2, cents = r >= 0 ? UInt8(r & 0x7F) : 0
                emit(.controlChange(101, value: 0, channel: ch), at: frame)
                emit(.controlChange(100, value: 0, channel: ch), at: frame)
                emit(.controlChange(6, value: semitones, channel: ch), at: frame)
                emit(.controlChange(38, value: cents, channel: ch), at: frame)
                emit(.controlChange(101, value: 127, channel: ch), at: frame)
                emit(.controlChange(100, value: 127, channel: ch), at: frame)
            }
            if pieceBend & bit != 0 {
                let b = chasedOther[Self.bend + ch], value = b >= 0 ? Int(b) : 8192
                emit(ChannelMessage(status: 0xE0 | UInt8(ch), data1: UInt8(value & 0x7F), data2: UInt8(value >> 7)), at: frame)
            }
            let pressure = chasedOther[Self.pressure + ch]
            if pressure >= 0 { emit(ChannelMessage(status: 0xD0 | UInt8(ch), data1: UInt8(pressure)), at: frame) }
        }
    }

    private mutating func applyLoop(_ c: Transport.Commands) {
        let start = Self.frames(c.loopStart, sampleRate)
        let end = c.loopEnd > 0 ? min(Self.frames(c.loopEnd, sampleRate), endScore) : endScore
        loopStart = start
        loopEnd = end
        // A region shorter than 50 ms would spin: ignored.
        loopOn = c.loop && end > start && Double(end - start) >= 0.05 * sampleRate
    }

    /// Seconds to a frame of the sample clock, saturating: negative and NaN
    /// give 0, infinity and times past 2^62 frames give 2^62 (a piece's
    /// damaged or made-up times never trap the conversion).
    @inline(__always)
    static func frames(_ seconds: Double, _ sampleRate: Double) -> UInt64 {
        let f = (seconds * sampleRate).rounded()
        guard f > 0 else { return 0 }
        return f < 0x1p62 ? UInt64(f) : 1 << 62
    }
}
