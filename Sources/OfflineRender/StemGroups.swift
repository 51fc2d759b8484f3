import Engine
import Parameters
import MIDI

/// How `render --stems-by` groups a piece's notes into stems.
public enum StemGrouping: String, CaseIterable, Sendable, Codable {
    /// One stem per mixer strip that sounds (`ch01`…`ch16`, `osc`, …): the notes stay where they are.
    case channel
    /// One stem per MIDI track (0-based, as the labels' `track`): `track03-Strings`.
    case track
    /// One stem per program across channels (`prog000-acoustic-grand-piano`), and
    /// every note on a drum kit (bank 128, as the labels decide it) in `drums`.
    case program
}

/// A piece split so that every channel carries the notes of one stem group,
/// found before the render on the score (not on the render thread).
///
/// Each note-on's group is its track, or its preset's program (`drums` for a
/// preset in bank 128), the preset being the one FluidSynth selects for it
/// (`notePresets`, as the labels take it). A channel whose notes fall in more
/// than one group keeps one of them (the drums, else the group with most
/// notes, the first on a tie); each other group moves to a channel the piece
/// does not use (never channel 10), which gets a copy of every non-note event
/// of the original channel (program, bank, controllers and RPNs, pitch bend,
/// channel pressure) at the same time, so it sounds the same. A note-on that
/// takes a key from another group of the same channel ends that note first,
/// as FluidSynth would have. A group stays where it is, and sounds in the
/// stem of its channel's kept group (`Kept`, a warning), when it holds drum
/// notes, is on channel 10, its channel has mode messages (CC 124–127, which
/// act on groups of channels), is on a channel in `pinned` (options of its
/// own: `--set strip.N.mute=1`, an insert), or no free channel is left (a
/// pinned channel is never one). `RenderJob` checks that every moved note
/// plays the preset it played (a GS SysEx may have made a free channel a
/// drum part) and otherwise splits again with `moves: false`. Channels the
/// oscillator or a plugin plays are never split: their strips keep their
/// own stems (`osc`, `chNN`).
struct StemGroups: Sendable {
    struct Move: Sendable, Equatable {
        /// 0-based channels.
        var from: Int
        var to: Int
        var group: String
        var notes: Int
    }

    struct Kept: Sendable, Equatable {
        /// 0-based channel.
        var channel: Int
        var group: String
        /// The stem its notes sound in.
        var stem: String
        var notes: Int
        var reason: String
    }

    var score: Score
    /// The stem each channel (0-based) with notes sounds in; a channel not
    /// here keeps its strip's own stem.
    var stemOfChannel: [Int: String]
    var moves: [Move] = []
    var kept: [Kept] = []

    /// The group name of a note: its track or its preset's program.
    static func group(_ grouping: StemGrouping, channel: Int, track: Int, trackNames: [String],
                      preset: (bank: Int, program: Int)?) -> String {
        switch grouping {
        case .channel:
            return ParameterAddress.StripID.channel(channel).fileStem()
        case .track:
            let name = track < trackNames.count ? slug(trackNames[track]) : ""
            let number = track < 10 ? "0\(track)" : "\(track)"
            return name.isEmpty ? "track\(number)" : "track\(number)-\(name)"
        case .program:
            guard let preset else { return "no-preset" }
            if preset.bank == 128 { return "drums" }
            return programStem(preset.program)
        }
    }

    /// `prog000-acoustic-grand-piano`: the program 0-based, three digits, and its General MIDI name.
    static func programStem(_ program: Int) -> String {
        let p = max(0, min(127, program))
        let digits = String(p)
        return "prog" + String(repeating: "0", count: 3 - digits.count) + digits + "-" + slug(GeneralMIDI.programNames[p])
    }

    /// Lower-case ASCII letters and digits, other runs as one `-`, at most 40 characters.
    static func slug(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            let c = Character(scalar)
            if scalar.isASCII && (c.isLetter || c.isNumber) {
                out.append(Character(c.lowercased()))
            } else if !out.isEmpty && out.last != "-" {
                out.append("-")
            }
            if out.count >= 40 { break }
        }
        while out.last == "-" { out.removeLast() }
        return out
    }

    /// Splits `score` (see the type). `notePresets`: the preset of every
    /// note-on (velocity above 0) on a channel not in `skipping`, in score order.
    static func split(_ score: Score, by grouping: StemGrouping, notePresets: [(bank: Int, program: Int)?],
                      skipping: UInt16, pinned: UInt16 = 0, trackNames: [String], moves: Bool = true) -> StemGroups {
        func skipped(_ c: Int) -> Bool { skipping & (1 << c) != 0 }
        func isPinned(_ c: Int) -> Bool { pinned & (1 << c) != 0 }
        // Pass 1: each note-on's group, and per channel its groups' note counts.
        var presets = notePresets.makeIterator()
        var noteGroup: [Int: String] = [:]   // event index → group (note-ons with velocity > 0)
        var counts = [[String: Int]](repeating: [:], count: 16)
        var order = [[String]](repeating: [], count: 16)
        var drumGroups = [Set<String>](repeating: [], count: 16)
        var used = [Bool](repeating: false, count: 16)
        var modeMessages = [Bool](repeating: false, count: 16)
        for (i, event) in score.events.enumerated() {
            let m = event.message
            guard !m.isSysEx else { continue }
            let c = m.channel
            used[c] = true
            if m.kind == 0xB0 && (124...127).contains(m.data1) { modeMessages[c] = true }
            guard m.kind == 0x90 && m.data2 > 0, !skipped(c) else { continue }
            let preset = presets.next() ?? nil
            let g = group(grouping, channel: c, track: Int(event.track), trackNames: trackNames, preset: preset)
            noteGroup[i] = g
            if counts[c][g] == nil { order[c].append(g) }
            counts[c][g, default: 0] += 1
            if preset?.bank == 128 { drumGroups[c].insert(g) }
        }
        var result = StemGroups(score: score, stemOfChannel: [:])
        var free = (0..<16).filter { !used[$0] && $0 != 9 && !skipped($0) && !isPinned($0) }
        /// Per channel: group → the channel its notes go to.
        var target = [[String: Int]](repeating: [:], count: 16)
        for c in 0..<16 where !order[c].isEmpty {
            let groups = order[c]
            let home = groups.first { drumGroups[c].contains($0) }
                ?? groups.max { counts[c][$0]! < counts[c][$1]! || (counts[c][$0]! == counts[c][$1]! && groups.firstIndex(of: $0)! > groups.firstIndex(of: $1)!) }!
            result.stemOfChannel[c] = home
            target[c][home] = c
            for g in groups where g != home {
                let reason: String? =
                    drumGroups[c].contains(g) ? "drum notes stay on their channel"
                    : c == 9 ? "channel 10 is a drum channel"
                    : modeMessages[c] ? "the channel has mode messages (CC 124-127)"
                    : isPinned(c) ? "the channel has settings of its own (--set, --insert)"
                    : !moves ? "on a free channel it would play another preset (a SysEx sets that channel up)"
                    : free.isEmpty ? "no free channel left" : nil
                if let reason {
                    target[c][g] = c
                    result.kept.append(Kept(channel: c, group: g, stem: home, notes: counts[c][g]!, reason: reason))
                } else {
                    let to = free.removeFirst()
                    target[c][g] = to
                    result.stemOfChannel[to] = g
                    result.moves.append(Move(from: c, to: to, group: g, notes: counts[c][g]!))
                }
            }
        }
        guard !result.moves.isEmpty else { return result }

        // Pass 2: the notes of moved groups on their new channels, every other channel event copied to them.
        let copies = (0..<16).map { c in Set(target[c].values).subtracting([c]).sorted() }
        var held: [Int: Int] = [:]   // original channel·128 + key → the channel its note sounds on
        var events: [Score.Event] = []
        events.reserveCapacity(score.events.count + score.events.count / 4)
        func on(_ m: ChannelMessage, channel: Int) -> ChannelMessage {
            ChannelMessage(status: m.status & 0xF0 | UInt8(channel), data1: m.data1, data2: m.data2)
        }
        for (i, event) in score.events.enumerated() {
            let m = event.message
            guard !m.isSysEx else { events.append(event); continue }
            let c = m.channel
            var e = event
            switch m.kind {
            case 0x90 where m.data2 > 0:
                let key = c << 7 | Int(m.data1)
                let to = noteGroup[i].flatMap { target[c][$0] } ?? c
                if let before = held[key], before != to {
                    // FluidSynth releases the key's older voice on a new note-on: the moved one must be told.
                    let off = ChannelMessage(status: 0x80 | UInt8(before), data1: m.data1, data2: 0)
                    events.append(Score.Event(seconds: event.seconds, message: off, track: event.track))
                }
                held[key] = to
                e.message = on(m, channel: to)
            case 0x80, 0x90:
                let key = c << 7 | Int(m.data1)
                e.message = on(m, channel: held.removeValue(forKey: key) ?? c)
            case 0xA0:
                e.message = on(m, channel: held[c << 7 | Int(m.data1)] ?? c)
            default:
                if m.kind == 0xB0 && (m.data1 == 120 || m.data1 == 123) {
                    for key in held.keys where key >> 7 == c { held[key] = nil }
                }
                events.append(e)
                for to in copies[c] {
                    events.append(Score.Event(seconds: event.seconds, message: on(m, channel: to), track: event.track))
                }
                continue
            }
            events.append(e)
        }
        var out = Score(events: events, duration: score.duration)
        out.sysExMessages = score.sysExMessages
        result.score = out
        return result
    }
}

/// General MIDI level 1's names.
enum GeneralMIDI {
    /// The 16 families of eight programs each.
    static let classNames = [
        "Piano", "Chromatic Percussion", "Organ", "Guitar", "Bass", "Strings", "Ensemble", "Brass",
        "Reed", "Pipe", "Synth Lead", "Synth Pad", "Synth Effects", "Ethnic", "Percussive", "Sound Effects",
    ]

    static func className(program: Int) -> String { classNames[max(0, min(127, program)) / 8] }

    static let programNames = [
        "Acoustic Grand Piano", "Bright Acoustic Piano", "Electric Grand Piano", "Honky-tonk Piano",
        "Electric Piano 1", "Electric Piano 2", "Harpsichord", "Clavinet",
        "Celesta", "Glockenspiel", "Music Box", "Vibraphone", "Marimba", "Xylophone", "Tubular Bells", "Dulcimer",
        "Drawbar Organ", "Percussive Organ", "Rock Organ", "Church Organ", "Reed Organ", "Accordion", "Harmonica", "Tango Accordion",
        "Acoustic Guitar Nylon", "Acoustic Guitar Steel", "Electric Guitar Jazz", "Electric Guitar Clean",
        "Electric Guitar Muted", "Overdriven Guitar", "Distortion Guitar", "Guitar Harmonics",
        "Acoustic Bass", "Electric Bass Finger", "Electric Bass Pick", "Fretless Bass",
        "Slap Bass 1", "Slap Bass 2", "Synth Bass 1", "Synth Bass 2",
        "Violin", "Viola", "Cello", "Contrabass", "Tremolo Strings", "Pizzicato Strings", "Orchestral Harp", "Timpani",
        "String Ensemble 1", "String Ensemble 2", "Synth Strings 1", "Synth Strings 2",
        "Choir Aahs", "Voice Oohs", "Synth Voice", "Orchestra Hit",
        "Trumpet", "Trombone", "Tuba", "Muted Trumpet", "French Horn", "Brass Section", "Synth Brass 1", "Synth Brass 2",
        "Soprano Sax", "Alto Sax", "Tenor Sax", "Baritone Sax", "Oboe", "English Horn", "Bassoon", "Clarinet",
        "Piccolo", "Flute", "Recorder", "Pan Flute", "Blown Bottle", "Shakuhachi", "Whistle", "Ocarina",
        "Lead 1 Square", "Lead 2 Sawtooth", "Lead 3 Calliope", "Lead 4 Chiff",
        "Lead 5 Charang", "Lead 6 Voice", "Lead 7 Fifths", "Lead 8 Bass and Lead",
        "Pad 1 New Age", "Pad 2 Warm", "Pad 3 Polysynth", "Pad 4 Choir",
        "Pad 5 Bowed", "Pad 6 Metallic", "Pad 7 Halo", "Pad 8 Sweep",
        "FX 1 Rain", "FX 2 Soundtrack", "FX 3 Crystal", "FX 4 Atmosphere",
        "FX 5 Brightness", "FX 6 Goblins", "FX 7 Echoes", "FX 8 Sci-fi",
        "Sitar", "Banjo", "Shamisen", "Koto", "Kalimba", "Bagpipe", "Fiddle", "Shanai",
        "Tinkle Bell", "Agogo", "Steel Drums", "Woodblock", "Taiko Drum", "Melodic Tom", "Synth Drum", "Reverse Cymbal",
        "Guitar Fret Noise", "Breath Noise", "Seashore", "Bird Tweet", "Telephone Ring", "Helicopter", "Applause", "Gunshot",
    ]
}
