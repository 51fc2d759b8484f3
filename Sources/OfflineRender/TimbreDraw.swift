import Engine
import MIDI
import MappingFiles
import Parameters
import Sampling

/// `render --timbres`: where each track's instrument is drawn from.
public enum TimbreSource: Sendable, Equatable {
    /// Among the font's presets of the track's General MIDI class (drum kits, bank 128, for drums).
    case perTrack
    /// Among a pool file's presets (`TimbrePoolFile`); `name`: the file as given.
    case pool(TimbrePool, name: String)

    /// As the manifest and messages name it: `per-track` or the pool's file.
    public var name: String {
        switch self {
        case .perTrack: "per-track"
        case .pool(_, let name): name
        }
    }
}

/// What one track drew (the manifest's `timbres`): the instrument it played
/// in the file and the preset it plays instead.
public struct TimbrePick: Sendable, Equatable, Codable {
    /// 0-based, as the labels' `track`.
    public var track: Int
    public var trackName: String
    /// 1-based: the channel the track sounds on (after tracks sharing one are moved apart).
    public var channel: Int
    /// The General MIDI class drawn within (`Piano`, …, `Drums`).
    public var family: String
    public var fromBank: Int
    public var fromProgram: Int
    public var bank: Int
    public var program: Int
    public var preset: String
    /// The file name of the font the preset is in (`TimGM6mb.sf2`), as the labels' `soundfont` column names it.
    public var soundFont: String
    /// How many presets it was drawn among.
    public var candidates: Int

    enum CodingKeys: String, CodingKey {
        case track, trackName = "track_name", channel, family = "class", fromBank = "from_bank", fromProgram = "from_program"
        case bank, program, preset, soundFont = "soundfont", candidates
    }
}

/// A font a draw takes presets from: its file name (the labels' `soundfont`),
/// its presets as FluidSynth lists them, and the bank offset the piece's
/// synth loads it at (`FontBankLayout`), which its bank selects add.
public struct DrawFont: Sendable {
    public var name: String
    public var presets: [FontPreset]
    public var bankOffset: Int
    public init(name: String, presets: [FontPreset], bankOffset: Int = 0) {
        self.name = name; self.presets = presets; self.bankOffset = bankOffset
    }
}

/// One file's timbre draw: each track's instrument drawn from the source,
/// seeded by the run's seed, the file's key (as `Augmentation.draw` and the
/// font set's pick take it) and the track, so the same seed gives a file the
/// same instruments in any order, shard or `--jobs`.
///
/// It works on a score whose tracks already sound on channels of their own
/// (`StemGroups.split(by: .track)`, as `--stems-by track` moves them apart):
/// every channel's instrument is its home track's draw (a track at home on
/// several channels, as a type 0 file's one track, draws for each apart). Just before its first
/// note each channel gets the draw for the class of the preset that note
/// played (after any reset SysEx at the start); each program change is
/// replaced by the draw for its own program's class (a bank select before it). Drum channels (their notes on
/// bank 128, as FluidSynth chose) draw among drum kits by program change
/// alone. The file's own bank selects stay: FluidSynth applies a bank only at
/// the next program change, and each drawn one has its own before it.
public struct TimbreDraw: Sendable, Equatable {
    public var source: TimbreSource
    /// The file's stream: from the run's seed and the file's key.
    var fileSeed: UInt64

    public init(source: TimbreSource, seed: UInt64, key: String) {
        self.source = source
        fileSeed = Shard.fnv1a64("\(seed)\u{1F}timbres\u{1F}\(key)")
    }

    /// A preset of one of the draw's fonts (`font`: its index among them).
    typealias Candidate = (font: Int, bank: Int, program: Int, name: String)

    /// The presets a track playing `program` (nil: a drum kit) draws among,
    /// font by font in the fonts' order, each font's in its own order, and
    /// the draw's name (its stream's salt). Drum kits come from the font at
    /// bank offset 0 only: a drum channel asks FluidSynth for bank 128 and
    /// ignores bank select, so no other font's kits can sound there
    /// (`FontBankLayout`). With one font, the candidates (and so the draws)
    /// are those of a draw within that font alone.
    func candidates(program: Int?, fonts: [DrawFont]) -> (key: String, presets: [Candidate]) {
        func presets(_ keep: (DrawFont, FontPreset) -> Bool) -> [Candidate] {
            fonts.enumerated().flatMap { f, font in
                font.presets.filter { keep(font, $0) }.map { (font: f, bank: $0.bank, program: $0.program, name: $0.name) }
            }
        }
        switch source {
        case .perTrack:
            guard let program else { return ("drums", presets { $0.bankOffset == 0 && $1.bank == 128 }) }
            // Banks above 127 are out of bank select's reach on a melodic channel.
            return ("class \(program / 8)", presets { $1.bank + $0.bankOffset <= 127 && $1.program / 8 == program / 8 })
        case .pool(let pool, _):
            let wanted = pool.candidates(program: program)
            let key = program.map { pool.byProgram[$0] != nil ? "program \($0)" : "class \($0 / 8)" } ?? "drums"
            // Each listed preset from every font that has it (the one it names, if it names one).
            let among: [Candidate] = wanted.flatMap { p in
                fonts.enumerated().compactMap { f, font -> Candidate? in
                    guard p.isIn(font: font.name), p.bank == 128 ? font.bankOffset == 0 : p.bank + font.bankOffset <= 127,
                          let q = font.presets.first(where: { $0.bank == p.bank && $0.program == p.program }) else { return nil }
                    return (font: f, bank: q.bank, program: q.program, name: q.name)
                }
            }
            return (key, among)
        }
    }

    /// The preset `track` draws among `presets` for the draw named `key`.
    func pick(track: Int, key: String, among presets: [Candidate]) -> Candidate? {
        guard !presets.isEmpty else { return nil }
        var g = SplitMix64(seed: fileSeed ^ Shard.fnv1a64("\(track)\u{1F}\(key)"))
        return presets[Int(g.next(below: UInt64(presets.count)))]
    }

    struct Result {
        var score: Score
        var picks: [TimbrePick]
        /// Draws that found no preset (the track keeps its instrument), one sentence each.
        var notes: [String]
    }

    /// `score` (tracks on channels of their own) with each channel's
    /// instrument drawn. `notePresets`: the preset of every note-on (velocity
    /// above 0) on a channel not in `skipping`, in score order, as FluidSynth
    /// selected it; `fonts`: the fonts drawn among, with the bank offsets the
    /// piece's synth has them at (one font at offset 0: a draw within it).
    func apply(to score: Score, notePresets: [(bank: Int, program: Int)?], skipping: UInt16,
               fonts: [DrawFont], trackNames: [String]) -> Result {
        func skipped(_ c: Int) -> Bool { skipping & (1 << c) != 0 }
        // Pass 1: per channel, its tracks' note counts, its first note's preset, and whether it plays drums.
        var presets = notePresets.makeIterator()
        var counts = [[Int: Int]](repeating: [:], count: 16)
        var trackOrder = [[Int]](repeating: [], count: 16)
        var first = [(bank: Int, program: Int)?](repeating: nil, count: 16)
        var heard = [Bool](repeating: false, count: 16)
        var drums = [Bool](repeating: false, count: 16)
        for event in score.events {
            let m = event.message
            guard !m.isSysEx, m.kind == 0x90, m.data2 > 0, !skipped(m.channel) else { continue }
            let c = m.channel, t = Int(event.track)
            let preset = presets.next() ?? nil
            if !heard[c] { heard[c] = true; first[c] = preset }
            if counts[c][t] == nil { trackOrder[c].append(t) }
            counts[c][t, default: 0] += 1
            if preset?.bank == 128 { drums[c] = true }
        }
        // The track whose instrument a channel draws: the one with most notes there (the first on a tie).
        let home: [Int?] = (0..<16).map { c in
            trackOrder[c].max { counts[c][$0]! < counts[c][$1]! || (counts[c][$0]! == counts[c][$1]! && trackOrder[c].firstIndex(of: $0)! > trackOrder[c].firstIndex(of: $1)!) }
        }

        // A track at home on several channels (a type 0 file's one track) draws for each of them apart.
        var homes: [Int: Int] = [:]
        for case let t? in home { homes[t, default: 0] += 1 }

        var result = Result(score: score, picks: [], notes: [])
        var drawn: [String: Candidate?] = [:]   // "channel·key" → its draw (nil: none to draw among)
        /// The preset channel `c` plays instead of `from` (nil: it keeps it), recorded the first time.
        func draw(_ c: Int, from: (bank: Int, program: Int)) -> Candidate? {
            let program = drums[c] ? nil : from.program
            let (key, among) = candidates(program: program, fonts: fonts)
            let memo = "\(c)\u{1F}\(key)"
            if let known = drawn[memo] { return known }
            guard let track = home[c] else { return nil }
            let picked = pick(track: track, key: homes[track, default: 1] > 1 ? "\(key)\u{1F}channel \(c)" : key, among: among)
            drawn[memo] = picked
            let family = program.map { GeneralMIDI.className(program: $0) } ?? "Drums"
            guard let picked else {
                result.notes.append("timbres: no preset of \(source.name) for \(family.lowercased()) (track \(track), "
                    + "channel \(c + 1)) is in \(fonts.count > 1 ? "the fonts" : "the font"); the track keeps its instrument")
                return nil
            }
            for t in trackOrder[c] {
                result.picks.append(TimbrePick(track: t, trackName: t < trackNames.count ? trackNames[t] : "", channel: c + 1,
                                               family: family, fromBank: from.bank, fromProgram: from.program,
                                               bank: picked.bank, program: picked.program, preset: picked.name,
                                               soundFont: fonts[picked.font].name, candidates: among.count))
            }
            return picked
        }
        /// Bank select (melodic channels: the preset's bank plus its font's
        /// offset, 0...127) and program change selecting `p` on `c`.
        func selecting(_ p: Candidate, on c: Int) -> [ChannelMessage] {
            var messages: [ChannelMessage] = []
            if !drums[c] { messages.append(.controlChange(0, value: UInt8(p.bank + fonts[p.font].bankOffset), channel: c)) }
            messages.append(.programChange(UInt8(p.program), channel: c))
            return messages
        }

        // Across a set: the home font (offset 0), whose presets a track that draws nothing keeps.
        let homeFont = fonts.count > 1 ? fonts.firstIndex { $0.bankOffset == 0 } : nil
        // Pass 2: each program change on a drawing channel replaced by its draw, and each
        // channel's first draw just before its first note (after any reset SysEx at the start,
        // which would set its program back to 0).
        var bank = [Int](repeating: 0, count: 16)
        var started = [Bool](repeating: false, count: 16)
        var events: [Score.Event] = []
        events.reserveCapacity(score.events.count + 32)
        for event in score.events {
            let m = event.message
            guard !m.isSysEx, heard[m.channel], !skipped(m.channel) else { events.append(event); continue }
            let c = m.channel
            func select(_ p: Candidate) {
                for message in selecting(p, on: c) { events.append(Score.Event(seconds: event.seconds, message: message, track: event.track)) }
            }
            if m.kind == 0x90 && m.data2 > 0 && !started[c] {
                started[c] = true
                if let from = first[c], let p = draw(c, from: from) { select(p) }
            }
            if m.kind == 0xB0 && m.data1 == 0 { bank[c] = Int(m.data2) }
            guard m.kind == 0xC0 else { events.append(event); continue }
            if let p = draw(c, from: (drums[c] ? 128 : bank[c], Int(m.data1))) { select(p); continue }
            if let homeFont, !drums[c] {
                // Kept: the file's own bank, as the home font alone would find it (a bank it lacks
                // falls back to bank 0 there), never another font's bank at its offset.
                let found = fonts[homeFont].presets.contains { $0.bank == bank[c] && $0.program == Int(m.data1) }
                events.append(Score.Event(seconds: event.seconds, message: .controlChange(0, value: UInt8(found ? bank[c] : 0), channel: c),
                                          track: event.track))
            }
            events.append(event)
        }
        var out = Score(events: events, duration: score.duration)
        out.sysExMessages = score.sysExMessages
        result.score = out
        // The manifest lists the picks by track, then channel.
        result.picks.sort { ($0.track, $0.channel, $0.fromProgram) < ($1.track, $1.channel, $1.fromProgram) }
        return result
    }
}

extension RenderJob {
    /// Moves the set's other fonts (`drawSet`) on the scout to `layout`'s
    /// offsets, or out of reach (nil), for what the scout replays next.
    func placeOtherFonts(_ layout: FontBankLayout?) throws(Failure) {
        guard var set = drawSet else { return }
        set.offsets = set.names.indices.filter { $0 != set.home }.map { layout?.offsets[$0] ?? Sampler.parkedBankOffset }
        do throws(Sampler.Failure) { try scout.setBankOffsets(set.offsets) } catch { throw .sampler(error) }
        drawSet = set
    }

    /// The font's presets as FluidSynth lists them: what `--timbres` draws among.
    public var fontPresets: [FontPreset] {
        (scout.soundFont?.presets ?? []).map { FontPreset(bank: $0.bank, program: $0.program, name: $0.name) }
    }

    /// `score` with each track's instrument drawn (`TimbreDraw`): the tracks
    /// first moved apart onto channels of their own, as `--stems-by track`
    /// moves them, then each channel's programs replaced by its track's draw.
    /// Also the split that moved them (its moves and kept groups go into the
    /// stems report, `PiecePlan.timbreSplit`).
    func drawTimbres(_ score: Score, _ draw: TimbreDraw, input: String,
                     trackNames: [String]) throws(Failure) -> (Score, [TimbrePick], StemGroups) {
        // The set's other fonts parked: the tracks' first presets are found as with this font alone.
        try placeOtherFonts(nil)
        let (split, _) = try splitIntoGroups(score, by: .track, input: input, trackNames: trackNames)
        let plan = try planSamples(split.score)
        var fonts = [DrawFont(name: AtomicFile.split(soundFontPath).1, presets: fontPresets)]
        if let set = drawSet {
            // Across the set, in its order, each at its layout's offset (this job's font at home, 0).
            var others = zip(set.others.indices, scout.extraSoundFonts).map { i, font in
                DrawFont(name: set.names[i < set.home ? i : i + 1],
                         presets: font.presets.map { FontPreset(bank: $0.bank, program: $0.program, name: $0.name) })
            }
            others.insert(fonts[0], at: set.home)
            fonts = others
            let layout: FontBankLayout
            do throws(FontBankLayoutError) {
                layout = try FontBankLayout(melodicBanks: fonts.map { $0.presets.map(\.bank) }, names: set.names, home: set.home)
            } catch { throw .timbres("\(error)") }
            for f in fonts.indices { fonts[f].bankOffset = layout.offsets[f] }
            try placeOtherFonts(layout)
        }
        let drawn = draw.apply(to: split.score, notePresets: Self.notePresets(plan), skipping: skippedChannels,
                               fonts: fonts, trackNames: trackNames)
        for note in drawn.notes { log.append("\(input): \(note)") }
        return (drawn.score, drawn.picks, split)
    }
}
