// carillon-link-probe: one Link peer for the loopback test (LinkTests), driven
// line by line on stdin; each answer is one line on stdout.
//
//   peers                 → "peers N"
//   tempo BPM             → "ok" once committed (the session's tempo from now)
//   state MICROS QUANTUM  → "state MICROS TEMPO BEAT PHASE PEERS PLAYING": the session read at MICROS of Link's clock
//   playing 1|0           → "ok" once the session's start (on beat 0, now) or stop is committed
//   now                   → "now MICROS" (Link's clock)
//   quit                  → leaves the session and exits
// Started as `carillon-link-probe BPM`: joins at once at BPM, sharing start/stop (Link's start/stop
// sync), the session stopped. Errors: "error …" (and exit 1 at start).
import Glibc
import Link

/// One answer line, out at once (stdout is a pipe: fully buffered otherwise).
func say(_ line: String) {
    print(line)
    fflush(nil)
}

let bpm = CommandLine.arguments.count > 1 ? Double(CommandLine.arguments[1]) ?? 120 : 120
let session: LinkSession
do {
    session = try LinkSession(beatsPerMinute: bpm)
    try session.enableStartStopSync(true)
    try session.enable(true)
} catch {
    say("error \(error)")
    exit(1)
}
say("joined \(session.now)")

while let line = readLine() {
    let words = line.split(separator: " ").map(String.init)
    do {
        switch words.first {
        case "peers": say("peers \(session.peers)")
        case "now": say("now \(session.now)")
        case "tempo" where words.count == 2:
            try session.setTempo(Double(words[1]) ?? .nan)
            say("ok")
        case "state" where words.count == 3:
            let t = Int64(words[1]) ?? session.now, q = Double(words[2]) ?? 4
            let s = try session.state(at: t, quantum: q)
            say("state \(t) \(s.beatsPerMinute) \(s.beat) \(s.phase) \(session.peers) \(s.isPlaying ? 1 : 0)")
        case "playing" where words.count == 2 && (words[1] == "1" || words[1] == "0"):
            try session.setPlaying(words[1] == "1", at: session.now, beat: 0, quantum: 4)
            say("ok")
        case "quit":
            try session.enable(false)
            exit(0)
        default: say("error unknown command '\(line)'")
        }
    } catch {
        say("error \(error)")
    }
}
