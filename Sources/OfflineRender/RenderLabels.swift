import Engine
import Parameters
import MIDI
#if canImport(Glibc)
import Glibc
#endif

/// What a render writes beside its audio for people who build datasets
/// (`--labels`): every note as the synth applied it, the beats and the tempo
/// map, all in the rendered file's seconds.
///
/// "As applied": an event at `t` seconds reaches the synth at frame
/// `round(t · rate)` moved to the nearest frame of the instrument's grid
/// (FluidSynth's 64-frame block), as `Renderer.dispatch` moves it, after any
/// `--max-gap` cut. A note ends where FluidSynth ends it: its note-off (or
/// note-on with velocity 0), a new note-on of the same key on the channel
/// (FluidSynth releases the older voice), All Notes Off or All Sound Off, or
/// FluidSynth's minimum note length (10 ms, counted in blocks) when the
/// note-off comes sooner; a note never ended lasts to the piece's end. The
/// sustain pedal is not an end: the label says where the key was let go.
/// The preset of each note is the one FluidSynth itself selected for it when
/// the piece's program and bank changes and SysEx were played through the
/// scout synth before the render (`FluidSynthInstrument.pinPresets`): its
/// bank-select style, fallbacks for a missing preset and drum channels.
public struct RenderLabels: Sendable, Equatable {
    public enum Format: String, CaseIterable, Sendable {
        case csv, jsonl
    }

    public struct Note: Hashable, Sendable {
        /// Seconds in the rendered audio.
        public var onset: Double
        public var offset: Double
        public var pitch: Int
        public var velocity: Int
        /// 1...16.
        public var channel: Int
        /// The preset that sounds, as FluidSynth chose it: its bank (128: drums)
        /// and program (-1 both: none), and its name in the SoundFont.
        public var bank: Int
        public var program: Int
        public var preset: String
        /// The file's track (0-based) and its name (`FF 03`), "" when it has none.
        public var track: Int
        public var trackName: String
        public var drum: Bool
        /// The stem it sounds in, as `--stems` names the files: `ch01`…`ch16`, `osc`;
        /// with `--stems-by track|program`, its group's stem (`RenderJob` sets it,
        /// and `channel` is then the channel it sounds on after the split).
        public var stem: String
        /// The file name of the SoundFont its preset is in: the render's, or
        /// with `--timbres` across a set, the one its track drew from.
        public var soundFont: String = ""
    }

    /// A beat of the time signature (its denominator's note value), from the tempo map.
    public struct Beat: Hashable, Sendable {
        public var time: Double
        /// 1-based, counted from the start (a time-signature change starts a new bar).
        public var bar: Int
        /// 1-based within its bar; 1 is the downbeat.
        public var beat: Int
        public var numerator: Int
        public var denominator: Int
        public var isDownbeat: Bool { beat == 1 }
    }

    /// A tempo in force from `time` on.
    public struct Tempo: Hashable, Sendable {
        public var time: Double
        public var tick: UInt64
        public var beatsPerMinute: Double
    }

    public var notes: [Note]
    public var beats: [Beat]
    public var tempos: [Tempo]
    /// The SoundFont the piece rendered with, by its file name (`TimGM6mb.sf2`):
    /// every note row's `soundfont`, so notes from renders with several fonts
    /// (`--soundfont-pick`) stay told apart once put together.
    public var soundFont: String

    /// How the render placed the score.
    public struct Rendering: Sendable {
        public var sampleRate: Int
        /// The instrument's event grid in frames (1: none).
        public var grid: Int
        /// MIDI channels (0-based) the oscillator plays instead of the sampler.
        public var oscillatorChannels: Set<Int>
        /// The SoundFont's presets: (bank, program) → name.
        public var presetNames: [Int: String]
        /// The preset (bank, program) each note-on plays, in score order: every
        /// note-on with velocity above 0 on a channel neither the oscillator nor a plugin takes.
        public var notePresets: [(bank: Int, program: Int)?]
        /// MIDI channels (0-based) an LV2 instrument plays, with its name (the label's preset).
        public var pluginChannels: [Int: String]
        /// FluidSynth's `synth.min-note-length`, in ms.
        public var minimumNoteMilliseconds: Double = 10
        /// The SoundFont's file name (`RenderLabels.soundFont`).
        public var soundFont: String
        /// With `--timbres` across a SoundFont set: the other fonts the synth
        /// had (file name, (bank, program) → name) and, for each entry of
        /// `notePresets`, the font its preset is in (0: `soundFont`, k: `otherFonts[k - 1]`).
        public var otherFonts: [(name: String, presetNames: [Int: String])] = []
        public var noteFonts: [Int] = []

        public init(sampleRate: Int, grid: Int, oscillatorChannels: Set<Int>,
                    presets: [(bank: Int, program: Int, name: String)], notePresets: [(bank: Int, program: Int)?],
                    pluginChannels: [Int: String] = [:], soundFont: String = "") {
            self.sampleRate = sampleRate
            self.soundFont = soundFont
            self.pluginChannels = pluginChannels
            self.grid = max(1, grid)
            self.oscillatorChannels = oscillatorChannels
            var table: [Int: String] = [:]
            for p in presets where table[Self.key(p.bank, p.program)] == nil { table[Self.key(p.bank, p.program)] = p.name }
            presetNames = table
            self.notePresets = notePresets
        }

        static func key(_ bank: Int, _ program: Int) -> Int { bank << 7 | program }

        /// The frame the synth applies an event at `seconds`.
        func frame(_ seconds: Double) -> UInt64 {
            let f = (max(0, seconds) * Double(sampleRate)).rounded()
            let raw = f < 0x1p62 ? UInt64(f) : 1 << 62
            let g = UInt64(grid)
            return g == 1 ? raw : (raw + g / 2) / g * g
        }
    }

    /// What the labels take from the file itself, found before the render so
    /// the file need not be kept: track names, beats and tempo map.
    public struct FileMaps: Sendable {
        public var trackNames: [String]
        public var beats: [Beat]
        public var tempos: [Tempo]

        /// `score` is the score that plays (built from `file`, with `gaps` cut by
        /// `--max-gap` to `maxGap` seconds).
        public init(_ file: StandardMIDIFile, score: Score, gaps: [Score.Gap], maxGap: Double?) {
            trackNames = RenderLabels.trackNames(file)
            (beats, tempos) = RenderLabels.beatsAndTempos(file, end: score.duration, cut: GapMap(gaps: gaps, maxGap: maxGap ?? 0))
        }
    }

    /// The labels of a piece as rendered: `score` is the score that played.
    public init(_ maps: FileMaps, score: Score, rendering: Rendering) {
        notes = Self.playedNotes(score, trackNames: maps.trackNames, rendering: rendering)
        beats = maps.beats
        tempos = maps.tempos
        soundFont = rendering.soundFont
    }

    /// Keeps what the audio holds when a render stopped at `seconds`
    /// (`--max-duration`): notes that start before it, ended there at the latest.
    public mutating func clip(to seconds: Double) {
        notes = notes.filter { $0.onset < seconds }.map { var n = $0; n.offset = min(n.offset, seconds); return n }
        beats = beats.filter { $0.time < seconds }
        tempos = tempos.filter { $0.time < seconds }
    }

    // MARK: Notes

    private struct Sounding {
        var onset: UInt64
        var velocity: Int
        var track: Int
        /// Nil: the channel has no preset (or the oscillator plays it).
        var preset: (bank: Int, program: Int)?
        /// The font of `preset` (see `Rendering.noteFonts`).
        var font = 0
    }

    /// The notes of `score` as the synth plays them (see the type's comment).
    public static func playedNotes(_ score: Score, trackNames: [String], rendering: Rendering) -> [Note] {
        let rate = Double(rendering.sampleRate)
        let minimum = UInt64((rendering.minimumNoteMilliseconds * rate / 1000).rounded(.down))
        let grid = UInt64(rendering.grid)
        var noteOns = rendering.notePresets.makeIterator()
        var noteFonts = rendering.noteFonts.makeIterator()
        var open: [Int: Sounding] = [:]   // channel·128 + key
        var notes: [Note] = []

        func close(_ key: Int, at frame: UInt64) {
            guard let s = open.removeValue(forKey: key) else { return }
            let channel = key >> 7
            // A note-off sooner than the minimum length waits for it, to the next block.
            var end = frame
            if end < s.onset + minimum { end = (s.onset + minimum + grid - 1) / grid * grid }
            let osc = rendering.oscillatorChannels.contains(channel)
            let names = s.font == 0 ? rendering.presetNames : rendering.otherFonts[s.font - 1].presetNames
            let name = osc ? "oscillator" : rendering.pluginChannels[channel]
                ?? s.preset.flatMap { names[Rendering.key($0.bank, $0.program)] } ?? ""
            notes.append(Note(
                onset: Double(s.onset) / rate, offset: Double(end) / rate, pitch: key & 127, velocity: s.velocity,
                channel: channel + 1, bank: s.preset?.bank ?? -1, program: s.preset?.program ?? -1, preset: name,
                track: s.track, trackName: s.track < trackNames.count ? trackNames[s.track] : "",
                drum: s.preset?.bank == 128, stem: osc ? "osc" : ParameterAddress.StripID.channel(channel).fileStem(),
                soundFont: s.font == 0 ? rendering.soundFont : rendering.otherFonts[s.font - 1].name))
        }

        for event in score.events {
            let m = event.message
            guard !m.isSysEx else { continue }
            let channel = m.channel, frame = rendering.frame(event.seconds)
            switch m.kind {
            case 0x90 where m.data2 > 0:
                let key = channel << 7 | Int(m.data1)
                close(key, at: frame)   // FluidSynth releases the key's older voice
                let ownInstrument = rendering.oscillatorChannels.contains(channel) || rendering.pluginChannels[channel] != nil
                let preset = ownInstrument ? nil : (noteOns.next() ?? nil)
                let font = ownInstrument ? 0 : noteFonts.next() ?? 0
                open[key] = Sounding(onset: frame, velocity: Int(m.data2), track: Int(event.track), preset: preset, font: font)
            case 0x80, 0x90:
                close(channel << 7 | Int(m.data1), at: frame)
            case 0xB0 where m.data1 == 120 || m.data1 == 123:   // All Sound Off, All Notes Off
                for key in open.keys.filter({ $0 >> 7 == channel }).sorted() { close(key, at: frame) }
            default:
                break
            }
        }
        let end = rendering.frame(score.duration)
        for key in open.keys.sorted() { close(key, at: max(end, open[key]!.onset)) }
        return notes.sorted { ($0.onset, $0.channel, $0.pitch) < ($1.onset, $1.channel, $1.pitch) }
    }

    /// Each track's first name (`FF 03`), "" for a track without one.
    static func trackNames(_ file: StandardMIDIFile) -> [String] {
        file.tracks.map { track in
            for e in track.events {
                if case .meta(.text(.trackName, let bytes)) = e.event { return MetaEvent.string(from: bytes) }
            }
            return ""
        }
    }

    // MARK: Beats and tempo

    /// Moves a time of the file to the render's time: later by nothing, earlier
    /// by every cut before it; nil inside a cut.
    struct GapMap {
        var gaps: [Score.Gap]
        var maxGap: Double

        func map(_ t: Double) -> Double? {
            var shift = 0.0
            for g in gaps {
                if t >= g.start + g.length { shift += g.length - maxGap; continue }
                if t >= g.start + maxGap { return nil }
                break
            }
            return t - shift
        }
    }

    static func beatsAndTempos(_ file: StandardMIDIFile, end: Double, cut: GapMap) -> ([Beat], [Tempo]) {
        guard case .ticksPerQuarterNote(let ppqn) = file.division, ppqn > 0 else { return ([], []) }
        let map = file.tempoMap
        let tempos = map.changes.compactMap { c in
            cut.map(c.seconds).map { Tempo(time: $0, tick: c.tick, beatsPerMinute: c.beatsPerMinute) }
        }
        // Time signatures in tick order (the last at a tick wins), 4/4 until the first.
        var signatures: [(tick: UInt64, numerator: Int, denominator: Int)] = [(0, 4, 4)]
        file.forEachTimedEvent { timed in
            guard case .meta(.timeSignature(let ts)) = timed.event, ts.numerator > 0, ts.denominatorPower <= 6 else { return }
            let entry = (tick: timed.tick, numerator: Int(ts.numerator), denominator: 1 << Int(ts.denominatorPower))
            if signatures.last!.tick == timed.tick { signatures[signatures.count - 1] = entry } else { signatures.append(entry) }
        }
        var beats: [Beat] = []
        var bar = 0
        let lastTick = file.lastTick
        for (i, sig) in signatures.enumerated() {
            let until = i + 1 < signatures.count ? signatures[i + 1].tick : lastTick + 1
            let ticksPerBeat = max(1, UInt64(ppqn) * 4 / UInt64(sig.denominator))
            var tick = sig.tick, beat = 0
            while tick < until {
                if beat == 0 { bar += 1 }
                // A beat inside a cut stretch is gone; the render ends at the piece's end.
                if let t = cut.map(map.seconds(atTick: tick)) {
                    if t > end + 1e-9 { break }
                    beats.append(Beat(time: t, bar: bar, beat: beat + 1, numerator: sig.numerator, denominator: sig.denominator))
                }
                beat = (beat + 1) % sig.numerator
                tick += ticksPerBeat
            }
        }
        return (beats, tempos)
    }
}

// MARK: - Files

extension RenderLabels {
    /// The label files beside an output `dir/song.wav`: `dir/song.notes.csv`,
    /// `dir/song.beats.csv`, `dir/song.tempo.csv` (`.jsonl` with that format).
    public static func paths(beside output: String, format: Format) -> (notes: String, beats: String, tempo: String) {
        let ext = format.rawValue
        return (AtomicFile.companion(of: output, suffix: ".notes." + ext), AtomicFile.companion(of: output, suffix: ".beats." + ext),
                AtomicFile.companion(of: output, suffix: ".tempo." + ext))
    }

    /// Writes the three files beside `output`, each whole or not at all.
    /// Returns their paths.
    @discardableResult
    public func write(beside output: String, format: Format) throws(AtomicFileError) -> [String] {
        let p = Self.paths(beside: output, format: format)
        let files = [(p.notes, noteRows(format)), (p.beats, beatRows(format)), (p.tempo, tempoRows(format))]
        var written: [String] = []
        do throws(AtomicFileError) {
            for (path, lines) in files {
                try AtomicFile.replace(path, with: lines)
                written.append(path)
            }
        } catch {
            for path in written { unlink(path) }
            throw error
        }
        return written
    }

    static let noteColumns = ["onset", "offset", "pitch", "velocity", "channel", "program", "bank", "preset",
                              "track", "track_name", "drum", "stem", "soundfont"]

    public func noteRows(_ format: Format) -> [String] {
        let rows = notes.map { n -> [Field] in
            [.number(n.onset), .number(n.offset), .int(n.pitch), .int(n.velocity), .int(n.channel), .int(n.program),
             .int(n.bank), .text(n.preset), .int(n.track), .text(n.trackName), .bool(n.drum), .text(n.stem), .text(n.soundFont)]
        }
        return Self.lines(Self.noteColumns, rows, format)
    }

    public func beatRows(_ format: Format) -> [String] {
        Self.lines(["time", "bar", "beat", "downbeat", "numerator", "denominator"], beats.map {
            [.number($0.time), .int($0.bar), .int($0.beat), .bool($0.isDownbeat), .int($0.numerator), .int($0.denominator)]
        }, format)
    }

    public func tempoRows(_ format: Format) -> [String] {
        Self.lines(["time", "tick", "bpm"], tempos.map { [.number($0.time), .int(Int($0.tick)), .number($0.beatsPerMinute)] }, format)
    }

    enum Field {
        case number(Double), int(Int), bool(Bool), text(String)

        var csv: String {
            switch self {
            case .number(let v): "\(v)"
            case .int(let v): "\(v)"
            case .bool(let v): v ? "true" : "false"
            case .text(let s):
                // RFC 4180: quoted when it holds a comma, a quote or a line break; quotes doubled.
                s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
                    ? "\"" + s.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\"" : s
            }
        }
    }

    /// A row as one JSON object, its columns the keys, through `DatasetJSON`.
    struct JSONRow: Encodable {
        var columns: [String]
        var fields: [Field]

        struct Column: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Column.self)
            for (column, field) in zip(columns, fields) {
                let key = Column(stringValue: column)
                switch field {
                case .number(let v): try c.encodeNumber(v, forKey: key)
                case .int(let v): try c.encode(v, forKey: key)
                case .bool(let v): try c.encode(v, forKey: key)
                case .text(let v): try c.encode(v, forKey: key)
                }
            }
        }
    }

    /// CSV: a header, then a row each; JSON Lines: an object each.
    static func lines(_ columns: [String], _ rows: [[Field]], _ format: Format) -> [String] {
        switch format {
        case .csv:
            return [columns.joined(separator: ",")] + rows.map { $0.map(\.csv).joined(separator: ",") }
        case .jsonl:
            return rows.map { DatasetJSON.line(JSONRow(columns: columns, fields: $0)) }
        }
    }
}
