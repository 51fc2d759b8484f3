import Engine
import Glibc
import JACK
import Sync
import Threads

/// `play --sync jack`: the piece follows the JACK transport — rolls and
/// stops with it, moves where it is relocated, and with a timebase master's
/// bar/beat/tick (BBT) plays at its tempo, its beats read through the piece's
/// tempo map; without BBT the transport's frame is the piece's time.
/// A thread of its own polls `jack_transport_query` every 5 ms (never the
/// process callback) and drives the `Transport` with its commands. It asks
/// `client` for the output's client at each poll: after a server restart that
/// is a new one; while the server is gone there is no position, and the piece
/// holds where it is (the audio supervisor stops it).
public final class JACKTransportFollowing: @unchecked Sendable {
    private let client: @Sendable () -> JACKClient
    private let transport: Transport
    private let beats: BeatMap
    private let loop = StoppableThread()

    init(client: @escaping @Sendable () -> JACKClient, transport: Transport, beats: BeatMap) {
        self.client = client; self.transport = transport; self.beats = beats
    }

    /// The piece's seconds for a transport position.
    func seconds(of p: JACKTransportPosition, rate: Double) -> Double {
        p.bbt.map { beats.seconds(atBeat: $0.beats) } ?? Double(p.frame) / rate
    }

    func start() throws(ThreadError) {
        try loop.start(name: "jack-transport") { [self] stopping in run(until: stopping) }
    }

    func stop() {
        loop.stop()
    }

    private func run(until stopping: CancellationFlag) {
        var last: JACKTransportPosition?
        var lastPoll = monotonicNanoseconds()
        while !stopping.isSet {
            let client = client()
            let rate = Double(client.sampleRate)
            guard let p = client.transportPosition(), rate > 0 else { usleep(5000); continue }
            let now = monotonicNanoseconds()
            let target = seconds(of: p, rate: rate)
            if let bbt = p.bbt, bbt.beatsPerMinute > 0 {
                // The master's tempo counts its beats (eighths in 6/8): in quarters, over the file's.
                let scale = bbt.beatsPerMinute * 4 / (bbt.beatType > 0 ? bbt.beatType : 4) / beats.beatsPerMinute(atSeconds: target)
                if abs(scale - transport.tempoScale) > 1e-6 { transport.setTempoScale(scale) }
            }
            if let l = last {
                // A jump: the frame moved other than by the time that passed (more than 50 ms + a period off).
                let expected = Double(l.frame) + (l.rolling ? Double(now - lastPoll) / 1e9 * rate : 0)
                let jumped = abs(Double(p.frame) - expected) > 0.05 * rate + Double(client.bufferSize) * 2
                if p.rolling != l.rolling {
                    if p.rolling { transport.seek(to: target); transport.play() } else { transport.stop() }
                } else if jumped {
                    transport.seek(to: target)
                }
            } else {
                transport.seek(to: target)
                if p.rolling { transport.play() } else { transport.stop() }
            }
            last = p; lastPoll = now
            usleep(5000)
        }
    }
}
