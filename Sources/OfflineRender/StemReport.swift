#if canImport(Glibc)
import Glibc
#endif

/// What each stem of a render holds (`render --stems-by`), written beside the
/// output as `NAME.stems.json`: one JSON object on one line, keys sorted
/// (`DatasetJSON`), loadable with `json.load` (and
/// `pandas.json_normalize(report["stems"])`). Laid out here by meaning:
///
/// ```json
/// {"grouping": "program",
///  "stems": [{"name": "drums", "file": "stems/drums.wav", "channels": [10], "programs": [0],
///             "gm_classes": [], "presets": ["Standard"], "soundfonts": ["TimGM6mb.sf2"], "tracks": [3], "track_names": ["Drums"],
///             "notes": 812, "drums": true, "peak_dbfs": -6.2, "loudness_lufs": -21.3, "silent": false}, …],
///  "silent": ["prog048-string-ensemble-1"],
///  "moves": [{"group": "prog033-electric-bass-finger", "from_channel": 2, "to_channel": 12, "notes": 40}],
///  "kept": [{"group": "…", "channel": 10, "stem": "drums", "notes": 3, "reason": "channel 10 is a drum channel"}]}
/// ```
///
/// Channels are 1-based and programs 0-based, as in the labels; `tracks` are
/// the labels' 0-based track indices. A stem is silent when it holds notes
/// but never sounded (muted, zero velocity after scaling, too short): it has
/// no file (`file` null) and is listed in `silent`. A stem that sounded
/// without notes of its own (an audio-file track, the tone) has `notes` 0.
/// `peak_dbfs` and `loudness_lufs` are null for a silent stem (loudness −∞,
/// a stem too short to gate, is null too).
public struct StemReport: Sendable, Equatable {
    public struct Stem: Sendable, Equatable {
        public var name: String
        /// The file written, nil when the stem never sounded.
        public var file: String?
        public var channels: [Int] = []
        public var programs: [Int] = []
        public var gmClasses: [String] = []
        public var presets: [String] = []
        /// The fonts its notes' presets are in, by file name (several only with `--timbres` across a set).
        public var soundFonts: [String] = []
        public var tracks: [Int] = []
        public var trackNames: [String] = []
        public var notes = 0
        public var drums = false
        public var peakDBFS: Double?
        public var loudness: Double?
        public var silent: Bool { file == nil }
    }

    public struct Move: Sendable, Equatable {
        public var group: String
        /// 1-based channels.
        public var fromChannel: Int
        public var toChannel: Int
        public var notes: Int
    }

    public struct Kept: Sendable, Equatable {
        public var group: String
        /// 1-based.
        public var channel: Int
        /// The stem its notes sound in.
        public var stem: String
        public var notes: Int
        public var reason: String
    }

    public var grouping: StemGrouping
    public var stems: [Stem]
    public var moves: [Move]
    public var kept: [Kept]

    /// The stems that hold notes but never sounded.
    public var silent: [String] { stems.filter(\.silent).map(\.name) }

    /// A report from its parts (the decoder's way in).
    init(grouping: StemGrouping, stems: [Stem], moves: [Move] = [], kept: [Kept] = []) {
        self.grouping = grouping; self.stems = stems; self.moves = moves; self.kept = kept
    }

    /// Builds the report from the notes as rendered (their `stem` already the
    /// group stem) and the stems the writer made. With `--timbres`, the moves
    /// of the split that moved the tracks apart before the draw
    /// (`timbreSplit`, by track) come first: the stems' own split then finds
    /// those tracks apart already. Its kept groups are not repeated: a track
    /// that could not move stays where the stems' split finds it again.
    init(grouping: StemGrouping, notes: [RenderLabels.Note], writer: StemWriter, groups: StemGroups,
         timbreSplit: StemGroups? = nil) {
        self.grouping = grouping
        moves = ((timbreSplit?.moves ?? []) + groups.moves).map {
            Move(group: $0.group, fromChannel: $0.from + 1, toChannel: $0.to + 1, notes: $0.notes)
        }
        kept = groups.kept.map { Kept(group: $0.group, channel: $0.channel + 1, stem: $0.stem, notes: $0.notes, reason: $0.reason) }
        var byStem: [String: [RenderLabels.Note]] = [:]
        for n in notes { byStem[n.stem, default: []].append(n) }
        var stems: [Stem] = []
        for (s, name) in writer.names.enumerated() {
            let held = byStem.removeValue(forKey: name) ?? []
            guard writer.sounded(s) || !held.isEmpty else { continue }
            var stem = Stem(name: name, file: writer.sounded(s) ? writer.path(of: s) : nil)
            stem.fill(with: held)
            if writer.sounded(s) {
                let peak = Double(writer.peaks[s])
                stem.peakDBFS = peak > 0 ? 20 * log10(peak) : nil
                stem.loudness = writer.loudness(of: s).flatMap { $0.isFinite ? $0 : nil }
            }
            stems.append(stem)
        }
        // Notes whose stem has no strip here (none expected): listed, silent, so every note is counted.
        for name in byStem.keys.sorted() {
            var stem = Stem(name: name, file: nil)
            stem.fill(with: byStem[name]!)
            stems.append(stem)
        }
        self.stems = stems
    }

    /// The report as JSON (one line, with a newline at the end by the writer), through `DatasetJSON`.
    public var json: String { DatasetJSON.line(self) }

    /// `NAME.stems.json` beside `output` (its extension replaced).
    public static func path(beside output: String) -> String {
        AtomicFile.companion(of: output, suffix: ".stems.json")
    }

    /// Writes the report beside `output`, atomically (a temporary file renamed); returns its path.
    @discardableResult
    public func write(beside output: String) throws(AtomicFileError) -> String {
        let path = Self.path(beside: output)
        try AtomicFile.replace(path, with: [json])
        return path
    }
}

// MARK: - JSON

extension StemReport: Codable {
    enum CodingKeys: String, CodingKey { case grouping, stems, silent, moves, kept }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(grouping, forKey: .grouping)
        try c.encode(stems, forKey: .stems)
        try c.encode(silent, forKey: .silent)
        try c.encode(moves, forKey: .moves)
        try c.encode(kept, forKey: .kept)
    }

    /// A report as written (`silent` follows from the stems' files).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(grouping: try c.decode(StemGrouping.self, forKey: .grouping), stems: try c.decode([Stem].self, forKey: .stems),
                  moves: try c.decode([Move].self, forKey: .moves), kept: try c.decode([Kept].self, forKey: .kept))
    }
}

extension StemReport.Stem: Codable {
    enum CodingKeys: String, CodingKey {
        case name, file, channels, programs, gmClasses = "gm_classes", presets, soundFonts = "soundfonts", tracks, trackNames = "track_names"
        case notes, drums, peakDBFS = "peak_dbfs", loudness = "loudness_lufs", silent
    }

    /// Every field present: `file`, `peak_dbfs` and `loudness_lufs` null when absent (or −∞).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(file, forKey: .file)
        try c.encode(channels, forKey: .channels)
        try c.encode(programs, forKey: .programs)
        try c.encode(gmClasses, forKey: .gmClasses)
        try c.encode(presets, forKey: .presets)
        try c.encode(soundFonts, forKey: .soundFonts)
        try c.encode(tracks, forKey: .tracks)
        try c.encode(trackNames, forKey: .trackNames)
        try c.encode(notes, forKey: .notes)
        try c.encode(drums, forKey: .drums)
        try c.encodeNumber(peakDBFS, forKey: .peakDBFS)
        try c.encodeNumber(loudness, forKey: .loudness)
        try c.encode(silent, forKey: .silent)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try c.decode(String.self, forKey: .name), file: try c.decodeIfPresent(String.self, forKey: .file))
        channels = try c.decode([Int].self, forKey: .channels)
        programs = try c.decode([Int].self, forKey: .programs)
        gmClasses = try c.decode([String].self, forKey: .gmClasses)
        presets = try c.decode([String].self, forKey: .presets)
        // Reports written before the field (a resumed batch reads them back).
        soundFonts = try c.decodeIfPresent([String].self, forKey: .soundFonts) ?? []
        tracks = try c.decode([Int].self, forKey: .tracks)
        trackNames = try c.decode([String].self, forKey: .trackNames)
        notes = try c.decode(Int.self, forKey: .notes)
        drums = try c.decode(Bool.self, forKey: .drums)
        peakDBFS = try c.decodeIfPresent(Double.self, forKey: .peakDBFS)
        loudness = try c.decodeIfPresent(Double.self, forKey: .loudness)
    }
}

extension StemReport.Move: Codable {
    enum CodingKeys: String, CodingKey { case group, fromChannel = "from_channel", toChannel = "to_channel", notes }
}

extension StemReport.Kept: Codable {}

private extension StemReport.Stem {
    mutating func fill(with notes: [RenderLabels.Note]) {
        self.notes = notes.count
        channels = Set(notes.map(\.channel)).sorted()
        programs = Set(notes.filter { $0.program >= 0 }.map(\.program)).sorted()
        gmClasses = Set(notes.filter { $0.program >= 0 && !$0.drum }.map(\.program)).sorted()
            .map { GeneralMIDI.className(program: $0) }
            .reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        presets = Set(notes.map(\.preset).filter { !$0.isEmpty }).sorted()
        soundFonts = Set(notes.filter { $0.bank >= 0 }.map(\.soundFont).filter { !$0.isEmpty }).sorted()
        let trackPairs = Set(notes.map { TrackKey(index: $0.track, name: $0.trackName) }).sorted { $0.index < $1.index }
        tracks = trackPairs.map(\.index)
        trackNames = trackPairs.map(\.name)
        drums = notes.contains(where: \.drum)
    }
}

private struct TrackKey: Hashable { var index: Int; var name: String }
