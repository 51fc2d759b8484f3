import Engine
import Foundation
import MIDI
import OfflineRender
import Testing

/// The damage limits run on a corpus of real files without rendering them, for
/// Benchmarks/README.md: how many files each limit touches, with the old
/// tempo rule (a BPM line) and with `StandardMIDIFile.damagedTempos`. Off
/// unless `CARILLON_LIMITS_CORPUS` names a folder (every *.mid, *.midi, *.kar
/// under it); one line per touched file and the totals go to
/// `CARILLON_LIMITS_REPORT` (default /tmp/limits-corpus.tsv).
///
///     CARILLON_LIMITS_CORPUS=/tmp/corpus swift test --skip-build --filter LimitsCorpusReport
@Suite struct LimitsCorpusReport {
    static let corpus = ProcessInfo.processInfo.environment["CARILLON_LIMITS_CORPUS"]

    /// The tempo rule before issue 38, to compare with: a tempo outside 20…1000 BPM in force
    /// for more than 4 quarters was ignored, the last tempo inside going on.
    static func oldRule(_ file: StandardMIDIFile) -> (tempos: [TempoMap.Change], file: StandardMIDIFile) {
        guard case .ticksPerQuarterNote(let ppqn) = file.division, ppqn > 0 else { return ([], file) }
        let plausible = 20.0...1000.0
        let changes = file.tempoMap.changes
        var found: [TempoMap.Change] = []
        var damaged: [StandardMIDIFile.DamagedTempo] = []
        var inForce = TempoMap.defaultMicrosecondsPerQuarterNote
        for (k, change) in changes.enumerated() {
            let next = k + 1 < changes.count ? changes[k + 1].tick : file.lastTick
            if !plausible.contains(change.beatsPerMinute), next > change.tick, next - change.tick > 4 * UInt64(ppqn) {
                found.append(change)
                damaged.append(.init(change: change, instead: inForce))
            } else if plausible.contains(change.beatsPerMinute) {
                inForce = change.microsecondsPerQuarterNote
            }
        }
        return (found, file.replacingTempos(damaged))
    }

    /// What the limits after the tempo rule do to `file` (as `RenderJob.plan` applies them).
    static func otherLimits(_ file: StandardMIDIFile) -> [String] {
        var score = Score(file)
        var touched: [String] = []
        let cuts = score.shortenGaps(longerThan: RenderJob.Options.defaultMaxGap)
        let inner = cuts.filter { !$0.trailing }
        if !inner.isEmpty { touched.append("max-gap \(inner.count) gaps (longest \(Int(inner.map(\.length).max()!)) s)") }
        // The end of track: past the grace after the last event, the render ends where the sound dies away.
        if score.duration - score.lastEventSeconds > RenderJob.Options.endOfTrackGrace {
            touched.append("end-of-track \(Int(score.duration - score.lastEventSeconds)) s after the last event")
        }
        let rules = PieceLimits.default
        if let thin = score.endingWhereItThinsOut(window: rules.thinWindow, notes: rules.thinNotes, grace: rules.thinGrace) {
            touched.append("thin after \(Int(thin.after)) s (\(thin.notes) notes in 600 s)")
        }
        if score.duration > RenderJob.Options.defaultMaxDuration { touched.append("max-duration (\(Int(score.duration)) s)") }
        return touched
    }

    /// `file` damaged as issue 38's scraped songs were: `crawl` sets the 48 quarters from the onset a third
    /// of the way in to 12× slower (every tempo event there too) and back; otherwise the stretch after the
    /// last onset goes 12× slower, to a controller 20 quarters on (stretched silence). Nil without onsets.
    static func damaged(_ file: StandardMIDIFile, crawl: Bool) -> (file: StandardMIDIFile, tick: UInt64, factor: Double)? {
        guard case .ticksPerQuarterNote(let ppqn) = file.division, ppqn > 0, file.format != .sequentialTracks else { return nil }
        var onsets: [UInt64] = []
        for track in file.tracks {
            for e in track.events { if case .midi(.noteOn(let on)) = e.event, on.velocity.value > 0 { onsets.append(e.tick) } }
        }
        onsets.sort()
        guard onsets.count >= 2, let last = onsets.last else { return nil }
        let map = file.tempoMap
        let start = crawl ? onsets[onsets.count / 3] : last + 1, stop = start + (crawl ? 48 : 20) * UInt64(ppqn)
        let slow = UInt32(min(0xFF_FFFF, 12 * UInt64(map.microsecondsPerQuarterNote(atTick: start))))
        var damaged = file
        for t in damaged.tracks.indices {
            for e in damaged.tracks[t].events.indices {
                let tick = damaged.tracks[t].events[e].tick
                if case .meta(.tempo) = damaged.tracks[t].events[e].event, tick >= start, tick < stop {
                    damaged.tracks[t].events[e].event = .meta(.tempo(microsecondsPerQuarterNote: slow))
                }
            }
        }
        damaged.tracks[0].events.append(TrackEvent(tick: start, event: .meta(.tempo(microsecondsPerQuarterNote: slow))))
        if crawl {
            damaged.tracks[0].events.append(TrackEvent(tick: stop, event: .meta(.tempo(microsecondsPerQuarterNote: map.microsecondsPerQuarterNote(atTick: stop)))))
        } else {
            damaged.tracks[0].events.append(TrackEvent(tick: stop, event: .midi(.cc(64, value: 0, channel: 0))))
        }
        damaged.tracks[0].events.sort { $0.tick < $1.tick }
        return (damaged, start, Double(slow) / Double(map.microsecondsPerQuarterNote(atTick: start)))
    }

    @Test(.enabled(if: corpus != nil)) func corpusThroughTheLimits() throws {
        let root = try #require(Self.corpus)
        let files = (FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? [])
            .filter { ["mid", "midi", "kar"].contains(($0 as NSString).pathExtension.lowercased()) }.sorted()
        var lines: [String] = []
        var unreadable = 0, oldTempo = 0, newTempo = 0, oldAny = 0, newAny = 0
        var byLimit: [String: (old: Int, new: Int)] = [:]
        var damage: [String: (tried: Int, caught: Int)] = [:]
        for name in files {
            guard let file = try? StandardMIDIFile(contentsOf: "\(root)/\(name)") else { unreadable += 1; continue }
            let old = Self.oldRule(file)
            let new = file.damagedTempos()
            let oldOthers = Self.otherLimits(old.file), newOthers = Self.otherLimits(file.replacingTempos(new))
            if !old.tempos.isEmpty { oldTempo += 1 }
            if !new.isEmpty { newTempo += 1 }
            if !old.tempos.isEmpty || !oldOthers.isEmpty { oldAny += 1 }
            if !new.isEmpty || !newOthers.isEmpty { newAny += 1 }
            for o in oldOthers { byLimit[String(o.split(separator: " ")[0]), default: (0, 0)].old += 1 }
            for n in newOthers { byLimit[String(n.split(separator: " ")[0]), default: (0, 0)].new += 1 }
            for crawl in [true, false] {
                guard let (bad, tick, factor) = Self.damaged(file, crawl: crawl) else { continue }
                let caught = bad.damagedTempos().contains { $0.change.tick == tick }
                let key = crawl ? "crawl" : "silence"
                damage[key, default: (0, 0)].tried += 1
                if caught { damage[key, default: (0, 0)].caught += 1 } else {
                    let extra = bad.duration - file.duration
                    lines.append("\(name)\t\(key) missed\tadds \(Int(extra)) s\t\(String(format: "%.1f", factor))x slower")
                }
            }
            guard !old.tempos.isEmpty || !new.isEmpty || !oldOthers.isEmpty || !newOthers.isEmpty else { continue }
            let oldText = old.tempos.map { "\(String(format: "%.2f", $0.beatsPerMinute)) BPM at \(Int($0.seconds)) s" }
            let newText = new.map {
                "\(String(format: "%.2f", $0.change.beatsPerMinute)) BPM at \(Int($0.change.seconds)) s, \(String(format: "%.3f", $0.factor))x"
            }
            lines.append([name, "\(Int(file.duration)) s", "old: " + (oldText + oldOthers).joined(separator: "; "),
                          "new: " + (newText + newOthers).joined(separator: "; ")].joined(separator: "\t"))
        }
        var totals = ["# \(files.count) files, \(unreadable) unreadable",
                      "# tempo rule touches: old \(oldTempo), new \(newTempo)",
                      "# any limit touches: old \(oldAny), new \(newAny)"]
        for (limit, n) in byLimit.sorted(by: { $0.key < $1.key }) { totals.append("# \(limit): old \(n.old), new \(n.new)") }
        for (kind, n) in damage.sorted(by: { $0.key < $1.key }) { totals.append("# \(kind) damage made: \(n.tried) files, caught \(n.caught)") }
        let report = ProcessInfo.processInfo.environment["CARILLON_LIMITS_REPORT"] ?? "/tmp/limits-corpus.tsv"
        try (totals + lines).joined(separator: "\n").appending("\n").write(toFile: report, atomically: true, encoding: .utf8)
        print(totals.joined(separator: "\n"))
        #expect(unreadable < files.count)
    }
}
