/// MIDI clock in: follows an external master from its real-time messages,
/// each with the time it arrived (monotonic nanoseconds, the kernel's stamp).
///
/// Tempo: a least-squares line through the arrival times of the last
/// `window` clocks (a beat: 24) against their count. Jitter in single
/// intervals averages out (σ of the slope ≈ σ·√(12/N³): 1 ms of jitter at
/// 120 bpm is ~0.1% of tempo), and since the window holds only the last
/// beat, a tempo change is followed fully within one beat. A gap longer
/// than four clocks (the master paused its clock) starts the window again.
///
/// Transport: Start plays from the top, Continue from where it stopped, Song
/// Position Pointer moves there, Stop stops — each a `Command` for the
/// caller. Start and Continue take effect on the next clock (as the MIDI
/// specification has it): `receive` returns `.play(beat:)` then.
///
/// The gate: the master's position is only ever known up to its last clock,
/// so while it runs the transport may go on by the fitted tempo up to, never
/// past, the next clock's place (`gateBeat`); a clock that comes late holds the
/// music rather than letting it run ahead, and a master that stops mid-beat
/// never sounds the beat whose clock did not come.
///
/// Pure and not thread-safe: one thread feeds it (the sync input thread).
public struct ClockFollower: Sendable {
    public enum Message: Equatable, Sendable { case clock, start, `continue`, stop, songPosition(Int) }

    public enum Command: Equatable, Sendable {
        /// Play from `beat` (quarter notes from the top) now: the first clock after Start or Continue.
        case play(beat: Double)
        /// Stop where the master stopped.
        case stop(beat: Double)
        /// Move to `beat` (a Song Position Pointer, while stopped).
        case locate(beat: Double)
    }

    /// Clocks the tempo is fitted over.
    public let window: Int
    private var times: [UInt64]
    private var count = 0        // clocks in the window ring
    private var head = 0         // next slot
    /// Clocks since the top (the master's position, 24 a beat), as of the last clock.
    public private(set) var clocks: Int64 = 0
    /// The master runs (Start/Continue followed by a clock, no Stop since).
    public private(set) var running = false
    private var armed = false
    /// Seconds per clock, fitted; nil before two clocks.
    public private(set) var secondsPerClock: Double?
    /// When the last clock arrived.
    public private(set) var lastClock: UInt64?

    public init(window: Int = 24) {
        self.window = max(2, window)
        times = Array(repeating: 0, count: self.window)
    }

    /// The beat the transport may not reach yet while the master runs: the next clock's place
    /// (one clock after the last); nil while stopped.
    public var gateBeat: Double? { running ? Double(clocks + 1) / 24 : nil }

    /// The master's tempo, quarter notes a minute; nil before two clocks.
    public var beatsPerMinute: Double? { secondsPerClock.map { 60 / ($0 * 24) } }

    /// The master's position in beats at monotonic `nanos` (between clocks: by the fitted tempo).
    public func beat(at nanos: UInt64) -> Double {
        var c = Double(clocks)
        if running, let last = lastClock, let spc = secondsPerClock, nanos > last {
            c += min(Double(nanos - last) / 1e9 / spc, 1)   // no further than the next clock
        }
        return c / 24
    }

    /// Takes one message that arrived at `nanos`; what the transport should do, if anything.
    public mutating func receive(_ message: Message, at nanos: UInt64) -> Command? {
        switch message {
        case .start:
            clocks = 0; armed = true; running = false
            return nil
        case .continue:
            armed = true; running = false
            return nil
        case .stop:
            let was = running || armed
            running = false; armed = false
            return was ? .stop(beat: Double(clocks) / 24) : nil
        case .songPosition(let sixteenths):
            clocks = Int64(max(0, sixteenths)) * 6
            return running ? nil : .locate(beat: Double(clocks) / 24)
        case .clock:
            fit(nanos)
            if armed {
                armed = false; running = true
                return .play(beat: Double(clocks) / 24)
            }
            if running { clocks += 1 }
            return nil
        }
    }

    private mutating func fit(_ nanos: UInt64) {
        if let last = lastClock, let spc = secondsPerClock, Double(nanos &- last) / 1e9 > 4 * spc {
            count = 0   // a pause in the clock: start the window again (keep the last tempo meanwhile)
        } else if let last = lastClock, count == 1, Double(nanos &- last) / 1e9 > 1 {
            count = 0   // two clocks a second apart are not one tempo
        }
        lastClock = nanos
        times[head] = nanos
        head = (head + 1) % window
        count = min(count + 1, window)
        guard count >= 2 else { return }
        // Least squares of time (relative to the oldest, in seconds) on index.
        let oldest = (head - count + window) % window
        let t0 = times[oldest]
        let n = Double(count)
        var sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
        for i in 0..<count {
            let x = Double(i), y = Double(times[(oldest + i) % window] &- t0) / 1e9
            sx += x; sy += y; sxx += x * x; sxy += x * y
        }
        let slope = (n * sxy - sx * sy) / (n * sxx - sx * sx)
        if slope > 0 { secondsPerClock = slope }
    }
}
