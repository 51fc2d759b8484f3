import Foundation
import Parameters
import Yams

/// The presets `render --timbres FILE` draws each track's instrument from:
/// per General MIDI program, per class of eight programs, and for drum kits.
/// A track draws from its program's list, else its class's; a track with
/// neither keeps its instrument.
public struct TimbrePool: Sendable, Equatable {
    /// A preset as FluidSynth numbers it (bank 128: drum kits), in the font
    /// `font` names (nil: in any font of the render that has it).
    public struct Preset: Sendable, Hashable, Codable {
        public var bank: Int
        public var program: Int
        public var font: String?
        public init(bank: Int, program: Int, font: String? = nil) { self.bank = bank; self.program = program; self.font = font }

        /// Whether this preset may come from the font whose file is `fileName`
        /// (`TimGM6mb.sf2`): any font when it names none, else the font it
        /// names, by its file name with or without the extension, in any case.
        public func isIn(font fileName: String) -> Bool {
            guard let font else { return true }
            return Self.fontName(font, names: fileName)
        }

        /// Whether `name`, as a pool writes it, names the font whose file is `fileName`.
        static func fontName(_ name: String, names fileName: String) -> Bool {
            let wanted = name.lowercased(), file = fileName.lowercased()
            if wanted == file { return true }
            guard let dot = file.lastIndex(of: "."), dot != file.startIndex else { return false }
            return wanted == file[..<dot]
        }

        /// As a pool writes it: `BANK:PROGRAM`, or `FONT:BANK:PROGRAM`.
        var text: String { (font.map { "\($0):" } ?? "") + "\(bank):\(program)" }
    }

    /// Program 0...127 → its presets.
    public var byProgram: [Int: [Preset]] = [:]
    /// Class 0...15 (program / 8) → its presets.
    public var byClass: [Int: [Preset]] = [:]
    /// Drum kits (a drum track draws among these).
    public var drums: [Preset] = []
    /// Every preset as the file lists it, where it lists it: for `missing(from:)`.
    public var listings: [Listing] = []

    /// A preset where the file lists it.
    public struct Listing: Sendable, Equatable {
        public var preset: Preset
        public var location: SourceLocation
    }

    public init() {}

    /// The presets a track playing `program` (nil: drums) draws among.
    public func candidates(program: Int?) -> [Preset] {
        guard let program else { return drums }
        return byProgram[program] ?? byClass[program / 8] ?? []
    }

    /// One font's presets, named as messages name it (its file name).
    public struct Font: Sendable {
        public var name: String
        public var presets: [FontPreset]
        public init(name: String, presets: [FontPreset]) { self.name = name; self.presets = presets }
    }

    /// The listed presets that are in none of `fonts` (or not in the one
    /// font they name), one mistake each at its place in the file, with the
    /// closest preset the fonts (or that font) have ("did you mean"), and
    /// each font a preset names that is none of `fonts`, with the closest
    /// name; nil when every listed preset is in some font. A preset in some
    /// fonts only is no mistake: a render with another font skips it.
    public func missing(from fonts: [Font]) -> MappingError? {
        let names = fonts.map(\.name).joined(separator: ", ")
        var diagnostics: [MappingDiagnostic] = []
        for listing in listings {
            let p = listing.preset
            if let named = p.font, !fonts.contains(where: { Preset.fontName(named, names: $0.name) }) {
                var message = "font '\(named)' is none of the fonts (\(names))"
                let bases = fonts.map { font in font.name.split(separator: ".").dropLast().joined(separator: ".") }
                // A name cut short (`FluidR3` for `FluidR3_GM`) first, then a typo.
                let prefixed = bases.filter { $0.lowercased().hasPrefix(named.lowercased()) }
                if let close = prefixed.count == 1 ? prefixed.first : EditDistance.closest(to: named, among: bases.filter { !$0.isEmpty }) {
                    message += "; did you mean '\(close)'?"
                }
                diagnostics.append(MappingDiagnostic(listing.location, message))
                continue
            }
            let all = fonts.filter { p.isIn(font: $0.name) }.flatMap { font in font.presets.map { (font: font.name, preset: $0) } }
            guard !all.contains(where: { $0.preset.bank == p.bank && $0.preset.program == p.program }) else { continue }
            let named = p.font.flatMap { name in fonts.first { Preset.fontName(name, names: $0.name) }?.name }
            var message = named.map { "preset \(p.text) is not in \($0)" } ?? "preset \(p.bank):\(p.program) is in none of the fonts (\(names))"
            if let close = Self.closest(to: p, among: all) {
                message += "; did you mean \(p.font.map { "\($0):" } ?? "")\(close.preset.bank):\(close.preset.program) (\(close.preset.name)"
                    + (fonts.count > 1 && p.font == nil ? ", in \(close.font)" : "") + ")?"
            }
            message += " (`carillon presets FONT` lists a font's presets)"
            diagnostics.append(MappingDiagnostic(listing.location, message))
        }
        return diagnostics.isEmpty ? nil : MappingError(diagnostics)
    }

    /// The fonts' preset nearest `wanted`, of its kind (a drum kit for a drum
    /// kit) and class, nil when they have none: the same program in the
    /// nearest bank first, then the nearest program of the class in the same
    /// bank, then in any bank (the first of the fonts' order on a tie).
    static func closest(to wanted: Preset, among all: [(font: String, preset: FontPreset)]) -> (font: String, preset: FontPreset)? {
        let drums = wanted.bank == 128
        let near = all.filter { ($0.preset.bank == 128) == drums && (drums || $0.preset.program / 8 == wanted.program / 8) }
        func distance(_ p: FontPreset) -> (Int, Int, Int) {
            if p.program == wanted.program { return (0, abs(p.bank - wanted.bank), 0) }
            return (1, p.bank == wanted.bank ? 0 : 1, abs(p.program - wanted.program) * 1000 + abs(p.bank - wanted.bank))
        }
        return near.min { distance($0.preset) < distance($1.preset) }
    }

    /// The 16 classes' names as a pool file writes them (`chromatic-percussion`).
    public static let classKeys = [
        "piano", "chromatic-percussion", "organ", "guitar", "bass", "strings", "ensemble", "brass",
        "reed", "pipe", "synth-lead", "synth-pad", "synth-effects", "ethnic", "percussive", "sound-effects",
    ]
}

/// `render --timbres FILE`: a YAML (or JSON) mapping whose keys are General
/// MIDI classes (`piano` … `sound-effects`), programs (0...127, 0-based as in
/// MIDI data) or `drums`, each with a list of presets, `BANK:PROGRAM` or a
/// program alone (bank 0; for `drums`, bank 128):
///
/// ```yaml
/// piano: [0, 1, "8:4"]       # every piano draws among these three
/// 40: ["0:40", "0:41"]       # Violin draws Violin or Viola
/// drums: [0, 8, 16]          # drum kits 128:0, 128:8, 128:16
/// bass: [FluidR3_GM:8:38]    # only FluidR3_GM's (a preset alone: any font's that has it)
/// strings: {FluidR3_GM: [48], TimGM6mb: [49]}   # a list per font
/// ```
///
/// Every mistake is reported at once as `file:line:column: error: message`;
/// nothing is used from a file with one.
public enum TimbrePoolFile {
    public static func load(path: String) throws(MappingError) -> TimbrePool {
        try SideFile.load(path: path, kind) { text, file throws(MappingError) in try parse(yaml: text, file: file) }
    }

    public static func parse(yaml: String, file: String = "<timbre pool>") throws(MappingError) -> TimbrePool {
        try SideFile.parse(yaml: yaml, file: file, kind, read)
    }

    static let example = "e.g. 'piano: [0, 1, \"8:4\"]' or 'drums: [0, 8]'"
    static let kind = SideFile.Kind(
        name: "timbre pool",
        expected: "a mapping of classes or programs to presets",
        expectedWhenEmpty: "classes or programs with their presets",
        noEntry: "the pool names no class, program or drums", example: example)

    private static func read(_ pairs: [(Node, Node)], _ reader: MappingReader) -> TimbrePool? {
        var pool = TimbrePool()
        var seen: [String: Int] = [:]
        for (keyNode, valueNode) in pairs {
            guard let key = self.key(keyNode, reader) else { continue }
            let name = "\(key)"
            if let line = seen[name] {
                reader.error(keyNode, "\(name) is already listed (line \(line)); list its presets once")
                continue
            }
            seen[name] = reader.location(keyNode).line
            let drums = key == .drums
            guard let listings = self.presets(valueNode, drums: drums, reader) else { continue }
            pool.listings += listings
            let presets = listings.map(\.preset)
            switch key {
            case .drums: pool.drums = presets
            case .program(let p): pool.byProgram[p] = presets
            case .family(let c): pool.byClass[c] = presets
            }
        }
        return pool
    }

    private enum Key: Equatable, CustomStringConvertible {
        case program(Int), family(Int), drums
        var description: String {
            switch self {
            case .program(let p): "program \(p)"
            case .family(let c): "class \(TimbrePool.classKeys[c])"
            case .drums: "drums"
            }
        }
    }

    private static func key(_ node: Node, _ reader: MappingReader) -> Key? {
        guard case .scalar(let scalar) = node else {
            reader.error(node, "expected a class, a program 0...127 or 'drums' as a key, found \(MappingReader.describe(node))")
            return nil
        }
        if node.tagName == .int { return reader.integer(node, in: 0...127, "program").map(Key.program) }
        let text = scalar.string.lowercased().replacingOccurrences(of: " ", with: "-").replacingOccurrences(of: "_", with: "-")
        if text == "drums" { return .drums }
        if let c = TimbrePool.classKeys.firstIndex(of: text) { return .family(c) }
        reader.error(node, "'\(scalar.string)' is no General MIDI class; write one of \(TimbrePool.classKeys.joined(separator: ", ")), "
            + "a program 0...127, or drums")
        return nil
    }

    /// A non-empty list of `BANK:PROGRAM` or programs (bank 0, or 128 for
    /// drums), each maybe with its font before it (`FONT:BANK:PROGRAM`), or
    /// a mapping of fonts to such lists (`{FluidR3_GM: [0, 1], TimGM6mb: [0]}`).
    private static func presets(_ node: Node, drums: Bool, font: String? = nil, _ reader: MappingReader) -> [TimbrePool.Listing]? {
        let items: [Node]
        switch node {
        case .sequence(let s): items = Array(s)
        case .scalar: items = [node]
        case .mapping(let m) where font == nil:
            if m.isEmpty { reader.error(node, "the list is empty; give at least one preset (\(example))"); return nil }
            var presets: [TimbrePool.Listing] = []
            var ok = true
            for (fontNode, list) in m {
                guard let name = fontNode.scalar?.string, !name.isEmpty, fontNode.tagName != .int else {
                    reader.error(fontNode, "expected a SoundFont's name as a key (e.g. FluidR3_GM), found \(MappingReader.describe(fontNode))")
                    ok = false
                    continue
                }
                if let listed = self.presets(list, drums: drums, font: name, reader) { presets += listed } else { ok = false }
            }
            return ok ? presets : nil
        default:
            reader.expected("a list of presets, BANK:PROGRAM or a program (\(example))", node)
            return nil
        }
        if items.isEmpty { reader.error(node, "the list is empty; give at least one preset (\(example))"); return nil }
        var presets: [TimbrePool.Listing] = []
        var ok = true
        for item in items {
            if let p = preset(item, drums: drums, font: font, reader) {
                presets.append(TimbrePool.Listing(preset: p, location: reader.location(item)))
            } else { ok = false }
        }
        return ok ? presets : nil
    }

    private static func preset(_ node: Node, drums: Bool, font listFont: String?, _ reader: MappingReader) -> TimbrePool.Preset? {
        let defaultBank = drums ? 128 : 0
        // `8:4` unquoted is YAML 1.1's base-60 integer 484: the colon says what was meant.
        if node.tagName == .int, node.scalar?.string.contains(":") != true {
            return reader.integer(node, in: 0...127, "program").map { TimbrePool.Preset(bank: defaultBank, program: $0, font: listFont) }
        }
        guard case .scalar(let scalar) = node else {
            reader.expected("a preset, BANK:PROGRAM or a program", node)
            return nil
        }
        // From the right: PROGRAM, BANK:PROGRAM, FONT:PROGRAM or FONT:BANK:PROGRAM (a font's name may hold a colon).
        var parts = scalar.string.split(separator: ":", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        let program = parts.count >= 2 ? Int(parts.removeLast()) : nil
        var bank = parts.last.flatMap { Int($0) }
        if bank != nil { parts.removeLast() } else { bank = defaultBank }
        let font = parts.isEmpty ? listFont : parts.joined(separator: ":")
        guard let program, let bank, font?.isEmpty != true else {
            reader.error(node, "expected a preset as BANK:PROGRAM (e.g. 8:4), FONT:BANK:PROGRAM (e.g. FluidR3_GM:8:4) "
                + "or a program 0...127, found '\(scalar.string)'")
            return nil
        }
        if listFont != nil, !parts.isEmpty {
            reader.error(node, "'\(scalar.string)' names a font in \(listFont!)'s list: write '\(bank):\(program)'")
            return nil
        }
        guard (0...128).contains(bank), (0...127).contains(program) else {
            reader.error(node, "a preset's bank runs 0...128 and its program 0...127, found '\(scalar.string)'")
            return nil
        }
        if drums != (bank == 128) {
            reader.error(node, drums ? "drums draw among drum kits (bank 128): write '128:\(program)' or the program alone"
                                     : "'\(scalar.string)' is a drum kit (bank 128): list it under drums")
            return nil
        }
        return TimbrePool.Preset(bank: bank, program: program, font: font)
    }
}
