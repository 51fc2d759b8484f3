import ALSA
import Hosting
import MIDI
import Threads
import Synchronization

/// The zones' external ports on the ALSA sequencer: one port of Carillon's
/// own per destination name (`carillon:Hardware Synth`), connected to every
/// destination whose client or port name contains that name (as `--connect`
/// finds sources), or to the `client:port` it gives. A name that matches no
/// port yet is said once in the log and connected when such a port appears.
///
/// Threads: `prepare` and `send` come with `KeyboardRouting`'s lock held
/// (start, reload, input thread); `portAppeared` from the input thread.
final class ALSAZoneOutput: ExternalMIDIOutput, @unchecked Sendable {
    private let client: SequencerClient
    private let log: HostLog
    /// Our port for each destination name. Written by `prepare`, read by `send`: both under the router's lock.
    private var ports: [String: SeqAddress] = [:]
    /// Names whose destination has not appeared yet.
    private let waiting = Mutex<[String: SeqAddress]>([:])
    /// Messages that could not be sent (a full kernel pool, a closed client), and the first
    /// one's error: said at the session's end (`summary`), not on the input thread.
    let failedSends = Atomic<Int>(0)
    private let firstFailure = Mutex<String?>(nil)

    init(client: SequencerClient, log: HostLog) {
        self.client = client
        self.log = log
    }

    func prepare(portNames names: [String]) {
        for name in names where ports[name] == nil {
            do {
                let port = try client.makeOutputPort(named: name)
                ports[name] = port
                connect(name, port)
            } catch {
                log.append("zones: no output port for \"\(name)\": \(error)")
            }
        }
    }

    func send(_ message: MIDIMessage, portName name: String) {
        guard let port = ports[name] else { return }
        do { try client.send(message, from: port) } catch {
            if failedSends.add(1, ordering: .relaxed).oldValue == 0 {
                firstFailure.withLock { $0 = "\(message) to \"\(name)\": \(error)" }   // once: the describing allocates
            }
        }
    }

    /// "zones: 3 messages to external ports not sent (the first, …: …)", nil when all went.
    var summary: String? {
        let n = failedSends.load(ordering: .relaxed)
        guard n > 0 else { return nil }
        return "zones: \(n) message\(n == 1 ? "" : "s") to external ports not sent (the first, \(firstFailure.withLock { $0 ?? "?" }))"
    }

    /// A port appeared: a waiting name it matches is connected now.
    func portAppeared(_ info: PortInfo) {
        guard info.isDestination else { return }
        let due = waiting.withLock { w in w.filter { info.searchableName.lowercased().contains($0.key.lowercased()) } }
        for (name, port) in due { connect(name, port) }
    }

    private func connect(_ name: String, _ port: SeqAddress) {
        do {
            let found = try client.connect(port, toDestination: name)
            waiting.withLock { _ = $0.removeValue(forKey: name) }
            log.append("zones: \(port) \"\(name)\" → \(found.map(\.description).joined(separator: ", "))")
        } catch {
            let first = waiting.withLock { $0.updateValue(port, forKey: name) == nil }
            if first { log.append("zones: no MIDI port matches \"\(name)\" yet: \(port) is connected when one appears") }
        }
    }
}
