/// What a live session does when its output fails for good (the JACK server
/// gone, an ALSA device unplugged): the decisions only, on a clock the caller
/// passes in, so tests drive it without a device. `AudioSupervisor` acts on them.
///
/// Playing → (fault) → down, trying to reopen every `retryInterval` seconds →
/// (a try works) → playing; or, with `giveUpAfter`, → gave up once that long
/// has passed without audio. A fault while down changes nothing (it is the
/// same outage); the reason shown is the fault's, each try's error is the
/// caller's to log.
struct AudioRecovery: Equatable {
    enum State: Equatable {
        case playing
        /// `since`: when the fault came; `tries`: reopen attempts that failed so far.
        case down(reason: String, since: Double, tries: Int, nextTry: Double)
        case gaveUp(reason: String, since: Double)
    }

    /// Seconds between two reopen attempts: about once a second, so a server
    /// that takes a while to come back is not hammered.
    let retryInterval: Double
    /// `--give-up-after`: seconds without audio before the session ends (nil: never).
    let giveUpAfter: Double?
    private(set) var state = State.playing
    /// Outages survived so far.
    private(set) var recoveries = 0

    init(retryInterval: Double = 1, giveUpAfter: Double? = nil) {
        precondition(retryInterval > 0)
        self.retryInterval = retryInterval
        self.giveUpAfter = giveUpAfter
    }

    /// The output failed at `now`. True when this starts an outage (say it once,
    /// release the notes); false while already down or given up.
    mutating func fault(_ reason: String, at now: Double) -> Bool {
        guard state == .playing else { return false }
        // The first try a full interval on: a server killed is seldom back at once, and the old client needs closing first.
        state = .down(reason: reason, since: now, tries: 0, nextTry: now + retryInterval)
        return true
    }

    /// A reopen attempt is due at `now`.
    func isTryDue(at now: Double) -> Bool {
        if case .down(_, _, _, let next) = state { return now >= next }
        return false
    }

    /// The attempt at `now` failed: the next one an interval later.
    mutating func tryFailed(at now: Double) {
        guard case .down(let reason, let since, let tries, _) = state else { return }
        state = .down(reason: reason, since: since, tries: tries + 1, nextTry: now + retryInterval)
    }

    /// The attempt at `now` worked: playing again. Returns how long there was no audio (seconds), nil when not down.
    mutating func recovered(at now: Double) -> Double? {
        guard case .down(_, let since, _, _) = state else { return nil }
        state = .playing
        recoveries += 1
        return now - since
    }

    /// With `giveUpAfter`: true (once) when that long has passed at `now` without audio.
    mutating func shouldGiveUp(at now: Double) -> Bool {
        guard let limit = giveUpAfter, case .down(let reason, let since, _, _) = state, now - since >= limit else { return false }
        state = .gaveUp(reason: reason, since: since)
        return true
    }

    /// The status line's words: "no audio: REASON, retrying" while down, nil while playing.
    var statusText: String? {
        switch state {
        case .playing: nil
        case .down(let reason, _, let tries, _): "no audio: \(reason), retrying" + (tries > 0 ? " (\(tries) tries so far)" : "")
        case .gaveUp(let reason, _): "no audio: \(reason), gave up"
        }
    }
}
