import Engine
import Glibc
import JACK
import Sync
import Threads

/// `-a jack --transport-master`: Carillon leads the JACK transport. As the
/// timebase master it gives every client bar, beat, tick and tempo from the
/// piece's tempo map and time signatures (`BeatMap`; `live`: 120 bpm in 4/4,
/// scaled by `transport.tempo`, the beats `--clock-out` counts); a thread of its own
/// starts, stops and relocates the transport as the piece plays, stops and
/// seeks (keys, controls, OSC, the web page), and takes a start, stop or
/// relocation another client makes (`jack_transport`) as a command to the piece.
///
/// The transport's frame is the piece's time at the tempo scale: frame ÷ rate ×
/// scale = seconds of the piece (×1: the frame is the piece's time, as the
/// follower reads a transport without BBT). A new tempo scale relocates it.
public final class JACKTransportLeading: JACKTimebase, @unchecked Sendable {
    /// Ticks per beat in the BBT given (1920, as Ardour and jack_transport).
    public static let ticksPerBeat = 1920.0
    /// The output's client now: a new one after a server restart, which the
    /// thread makes timebase master again (a dead client is never called).
    private let currentClient: @Sendable () -> JACKClient
    /// Written by the thread only (`start` and `stop` use it before it runs and after it ended).
    private var client: JACKClient
    private let transport: Transport
    private let beats: BeatMap
    private let loop = StoppableThread()

    init(client: @escaping @Sendable () -> JACKClient, transport: Transport, beats: BeatMap) {
        self.currentClient = client; self.client = client(); self.transport = transport; self.beats = beats
    }

    /// JACK's process thread: the BBT at `frame`, read through the piece's
    /// tempo map at the transport's tempo scale; tempo in the time signature's beats.
    public func bbt(atFrame frame: UInt64, sampleRate: Int) -> JACKTransportPosition.BBT {
        Self.bbt(atFrame: frame, sampleRate: sampleRate, beats: beats, tempoScale: transport.tempoScale)
    }

    /// The BBT at `frame` of a transport whose frame is the piece's time at `scale` (pure: no allocation, no lock).
    static func bbt(atFrame frame: UInt64, sampleRate: Int, beats: BeatMap, tempoScale scale: Double) -> JACKTransportPosition.BBT {
        let seconds = Double(frame) / Double(max(sampleRate, 1)) * scale
        let bar = beats.barPosition(atBeat: beats.beat(atSeconds: seconds))
        let tpb = Self.ticksPerBeat
        return JACKTransportPosition.BBT(
            bar: bar.bar, beat: bar.beat, tick: min(Int(bar.fraction * tpb), Int(tpb) - 1),
            beatsPerBar: Double(bar.numerator), ticksPerBeat: tpb,
            beatsPerMinute: beats.beatsPerMinute(atSeconds: seconds) * scale * Double(bar.denominator) / 4,
            beatType: Double(bar.denominator), barStartTick: bar.barStartBeats * tpb)
    }

    /// The transport's frame for `seconds` of the piece at tempo scale `scale`.
    static func frame(ofSeconds seconds: Double, scale: Double, rate: Double) -> UInt64 {
        UInt64(max(0, (seconds / max(scale, 1e-6) * rate).rounded()))
    }

    func start() throws(LiveHost.Failure) {
        do { try client.becomeTimebaseMaster(self) } catch { throw .jack(error) }
        do { try loop.start(name: "jack-transport") { [self] stopping in run(until: stopping) } } catch {
            client.releaseTimebase()
            throw .thread(error)
        }
    }

    /// Ends the thread, stops the transport and gives up the timebase.
    func stop() {
        loop.stop()
        client.stopTransport()
        client.releaseTimebase()
    }

    private func run(until stopping: CancellationFlag) {
        var rate = Double(client.sampleRate)
        var last: (rolling: Bool, frame: UInt64, playing: Bool, position: Double, at: UInt64)?
        var quietUntil: UInt64 = 0
        while !stopping.isSet {
            let current = currentClient()
            if current !== client, !current.isServerGone {
                // The server came back: lead on the new client, from the piece's position.
                guard (try? current.becomeTimebaseMaster(self)) != nil else { usleep(5000); continue }
                client = current; rate = Double(current.sampleRate); last = nil
            }
            guard let p = client.transportPosition() else { usleep(5000); continue }
            let now = monotonicNanoseconds()
            let scale = transport.tempoScale
            let playing = transport.isPlaying && !transport.isFinished
            let ours = transport.position, theirs = Double(p.frame) / rate * scale
            // Apart by more than 50 ms and two periods (the piece is a period ahead of the frame).
            let tolerance = (0.05 + 2 * Double(client.bufferSize) / rate) * scale
            if now >= quietUntil {
                var followed = false
                if let l = last {
                    let elapsed = Double(now - l.at) / 1e9
                    let theyToggled = p.rolling != l.rolling
                    let theyJumped = abs(Double(p.frame) - (Double(l.frame) + (l.rolling ? elapsed * rate : 0))) > tolerance / scale * rate
                    let weToggled = playing != l.playing
                    let weJumped = abs(ours - (l.position + (l.playing ? elapsed * scale : 0))) > tolerance
                    if (theyToggled || theyJumped) && !(weToggled || weJumped) {
                        // Another client moved the transport: the piece goes with it.
                        if theyJumped || abs(ours - theirs) > tolerance { transport.seek(to: theirs) }
                        if theyToggled { if p.rolling { transport.play() } else { transport.stop() } }
                        followed = true
                    }
                }
                if !followed && (playing != p.rolling || abs(ours - theirs) > tolerance) {
                    if abs(ours - theirs) > tolerance {
                        try? client.locateTransport(Self.frame(ofSeconds: ours, scale: scale, rate: rate))
                    }
                    if playing != p.rolling { if playing { client.startTransport() } else { client.stopTransport() } }
                    followed = true
                }
                // A command takes a cycle or two to show: leave both sides alone meanwhile.
                if followed { quietUntil = now + UInt64((2 * Double(client.bufferSize) / rate + 0.01) * 1e9) }
            }
            last = (p.rolling, p.frame, transport.isPlaying && !transport.isFinished, transport.position, now)
            usleep(5000)
        }
    }
}
